/* gemv: y[M] = a[M, K] @ x[K].
 * Baseline kernel compiled by tasks/kernels/baseline/compile_c.py. */
#include "common.h"  /* in_t, out_t: the element types */

void kernel(const in_t *restrict a, const in_t *restrict x, out_t *restrict y, int M, int K)
{
    for (int i = 0; i < M; i++) {
        out_t acc = 0;
        for (int k = 0; k < K; k++)
            acc += (out_t)a[i * K + k] * (out_t)x[k];
        y[i] = acc;
    }
}
