/* softmax over the last axis: y[m, :] = exp(x[m, :] - max) / sum(exp(x[m, :] - max)),
 * float32 on every target. exp is kc_expf (common.h): the targets have no libm.
 * Baseline kernel compiled by tasks/kernels/baseline/compile_c.py. */

#include "common.h"  /* kc_expf */

void kernel(const float *restrict x, float *restrict y, int M, int N)
{
    for (int m = 0; m < M; m++) {
        const float *xr = x + m * N;
        float *yr = y + m * N;
        float mx = xr[0];
        for (int n = 1; n < N; n++)
            if (xr[n] > mx)
                mx = xr[n];
        float sum = 0.0f;
        for (int n = 0; n < N; n++) {
            float e = kc_expf(xr[n] - mx);
            yr[n] = e;
            sum += e;
        }
        float inv = 1.0f / sum;
        for (int n = 0; n < N; n++)
            yr[n] *= inv;
    }
}
