/* gemm: c[M, N] = a[M, K] @ b[K, N]. Loop order i, k, j: the inner loop runs along a row of b
 * and of c (unit stride), accumulating into c.
 * Baseline kernel compiled by tasks/kernels/baseline/compile_c.py. */
#include "common.h"  /* in_t, out_t: the element types */

void kernel(const in_t *restrict a, const in_t *restrict b, out_t *restrict c, int M, int K, int N)
{
    for (int i = 0; i < M; i++) {
        out_t *ci = c + i * N;
        for (int j = 0; j < N; j++)
            ci[j] = 0;
        for (int k = 0; k < K; k++) {
            out_t aik = (out_t)a[i * K + k];
            const in_t *bk = b + k * N;
            for (int j = 0; j < N; j++)
                ci[j] += aik * (out_t)bk[j];
        }
    }
}
