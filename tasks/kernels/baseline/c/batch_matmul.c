/* batch_matmul: c[B, M, N] = a[B, M, K] @ b[B, K, N], one gemm per batch. Loop order i, k, j:
 * the inner loop runs along a row of b and of c (unit stride), accumulating into c.
 * Baseline kernel compiled by tasks/kernels/baseline/compile_c.py. */
#include "common.h"  /* in_t, out_t: the element types */

void kernel(const in_t *restrict a, const in_t *restrict b, out_t *restrict c, int B, int M, int K, int N)
{
    for (int p = 0; p < B; p++) {
        const in_t *ap = a + p * M * K;
        const in_t *bp = b + p * K * N;
        out_t *cp = c + p * M * N;
        for (int i = 0; i < M; i++) {
            out_t *ci = cp + i * N;
            for (int j = 0; j < N; j++)
                ci[j] = 0;
            for (int k = 0; k < K; k++) {
                out_t aik = (out_t)ap[i * K + k];
                const in_t *bk = bp + k * N;
                for (int j = 0; j < N; j++)
                    ci[j] += aik * (out_t)bk[j];
            }
        }
    }
}
