/* gemm: c[M, N] = a[M, K] @ b[K, N]. Loop order i, k, j: the inner loop runs along a row of b
 * and of the accumulators (unit stride). In float32 the accumulators are the row of c itself; on
 * coral (-DKC_INT8) they are one row of exact int32 sums on the stack, requantised into the int8
 * row of c with the task's shift 7 + (log2(K) + 1) / 2 (tasks/level1/gemm.yaml).
 * Baseline kernel compiled by tasks/kernels/baseline/compile_c.py. */
#include "common.h"  /* in_t, acc_t, out_t: the element types */

void kernel(const in_t *restrict a, const in_t *restrict b, out_t *restrict c, int M, int K, int N)
{
#ifdef KC_INT8
    int s = 7 + (kc_log2(K) + 1) / 2;
    acc_t row[N];
#endif
    for (int i = 0; i < M; i++) {
#ifdef KC_INT8
        acc_t *ci = row;
#else
        acc_t *ci = c + i * N;
#endif
        for (int j = 0; j < N; j++)
            ci[j] = 0;
        for (int k = 0; k < K; k++) {
            acc_t aik = (acc_t)a[i * K + k];
            const in_t *bk = b + k * N;
            for (int j = 0; j < N; j++)
                ci[j] += aik * (acc_t)bk[j];
        }
#ifdef KC_INT8
        for (int j = 0; j < N; j++)
            c[i * N + j] = kc_requant(row[j], s);
#endif
    }
}
