/* gemv: y[M] = a[M, K] @ x[K]. On coral (-DKC_INT8) the sums are exact int32 and y is their
 * int8 requantisation with the task's shift 7 + (log2(K) + 1) / 2 (tasks/level1/gemv.yaml).
 * Baseline kernel compiled by tasks/kernels/baseline/compile_c.py. */
#include "common.h"  /* in_t, acc_t, out_t: the element types */

void kernel(const in_t *restrict a, const in_t *restrict x, out_t *restrict y, int M, int K)
{
#ifdef KC_INT8
    int s = 7 + (kc_log2(K) + 1) / 2;
#endif
    for (int i = 0; i < M; i++) {
        acc_t acc = 0;
        for (int k = 0; k < K; k++)
            acc += (acc_t)a[i * K + k] * (acc_t)x[k];
#ifdef KC_INT8
        y[i] = kc_requant(acc, s);
#else
        y[i] = acc;
#endif
    }
}
