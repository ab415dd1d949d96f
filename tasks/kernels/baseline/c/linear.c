/* linear: y[M, N] = x[M, K] @ w[N, K]^T + bias[N]: one dot product of two unit-stride rows per
 * output element.
 * Baseline kernel compiled by tasks/kernels/baseline/compile_c.py. */
#include "common.h"  /* in_t, out_t: the element types */

void kernel(const in_t *restrict x, const in_t *restrict w, const in_t *restrict bias, out_t *restrict y,
            int M, int K, int N)
{
    for (int m = 0; m < M; m++) {
        const in_t *xm = x + m * K;
        for (int n = 0; n < N; n++) {
            const in_t *wn = w + n * K;
            out_t acc = 0;
            for (int k = 0; k < K; k++)
                acc += (out_t)xm[k] * (out_t)wn[k];
            y[m * N + n] = acc + (out_t)bias[n];
        }
    }
}
