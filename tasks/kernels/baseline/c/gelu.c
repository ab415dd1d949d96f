/* gelu: y[i] = 0.5 * x[i] * (1 + erf(x[i] / sqrt(2))), float32 on every target.
 * exp (kc_expf, common.h) and erfc are computed here: the targets have no libm.
 * Baseline kernel compiled by tasks/kernels/baseline/compile_c.py. */

#include "common.h"  /* kc_expf */

/* erfc(z) for z >= 0 with relative error below about 1.2e-7: the Chebyshev fit of
 * Numerical Recipes (erfc(z) = t * exp(-z^2 + P(t)), t = 1 / (1 + z/2)). */
static inline __attribute__((always_inline)) float kc_erfc_pos(float z)
{
    float t = 1.0f / (1.0f + 0.5f * z);
    float p = -1.26551223f + t * (1.00002368f + t * (0.37409196f + t * (0.09678418f +
              t * (-0.18628806f + t * (0.27886807f + t * (-1.13520398f + t * (1.48851587f +
              t * (-0.82215223f + t * 0.17087277f))))))));
    return t * kc_expf(-z * z + p);
}

void kernel(const float *restrict x, float *restrict y, int N)
{
    for (int i = 0; i < N; i++) {
        float v = x[i];
        /* q = Phi(-|v|) = erfc(|v| / sqrt(2)) / 2, the normal tail: gelu(v) = v * Phi(v) is
         * v * (1 - q) for v >= 0 and v * q below 0, with no cancellation on either side. */
        float q = 0.5f * kc_erfc_pos(__builtin_fabsf(v) * 0.707106781f);
        y[i] = v >= 0.0f ? v * (1.0f - q) : v * q;
    }
}
