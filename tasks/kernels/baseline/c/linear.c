/* linear: y[M, N] = x[M, K] @ w[N, K]^T + bias[N]: one dot product of two unit-stride rows per
 * output element. On coral (-DKC_INT8) bias is int32, added to the exact int32 sum, and y is the
 * int8 requantisation of that with the task's shift 7 + (log2(K) + 1) / 2 (tasks/level1/linear.yaml).
 * Baseline kernel compiled by tasks/kernels/baseline/compile_c.py. */
#include "common.h"  /* in_t, acc_t, out_t: the element types */

void kernel(const in_t *restrict x, const in_t *restrict w, const acc_t *restrict bias, out_t *restrict y,
            int M, int K, int N)
{
#ifdef KC_INT8
    int s = 7 + (kc_log2(K) + 1) / 2;
#endif
    for (int m = 0; m < M; m++) {
        const in_t *xm = x + m * K;
        for (int n = 0; n < N; n++) {
            const in_t *wn = w + n * K;
            acc_t acc = 0;
            for (int k = 0; k < K; k++)
                acc += (acc_t)xm[k] * (acc_t)wn[k];
#ifdef KC_INT8
            y[m * N + n] = kc_requant(acc + bias[n], s);
#else
            y[m * N + n] = acc + bias[n];
#endif
        }
    }
}
