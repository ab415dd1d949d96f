/* silu: y[i] = x[i] / (1 + exp(-x[i])), float32 on every target.
 * exp is kc_expf (common.h): the targets have no libm.
 * Baseline kernel compiled by tasks/kernels/baseline/compile_c.py. */

#include "common.h"  /* kc_expf */

void kernel(const float *restrict x, float *restrict y, int N)
{
    for (int i = 0; i < N; i++)
        y[i] = x[i] / (1.0f + kc_expf(-x[i]));
}
