/* gelu: y[i] = 0.5 * x[i] * (1 + erf(x[i] / sqrt(2))), float32 on every target.
 * Freestanding: exp and erfc are computed here (the targets have no libm).
 * Baseline kernel compiled by tasks/kernels/baseline/compile_c.py. */

/* exp(x) in float: x = n*ln2 + r with |r| <= ln2/2, e^r by its Taylor polynomial of degree 7
 * (truncation error below 1e-8 relative), 2^n applied as two exponent-field scalings so that
 * results down to the smallest subnormal come out right. */
static inline __attribute__((always_inline)) float kc_expf(float x)
{
    if (x > 88.72283f)
        return __builtin_inff();
    if (x < -103.97208f)
        return 0.0f;
    float t = x * 1.44269504f;                      /* x / ln2 */
    int n = (int)(t >= 0.0f ? t + 0.5f : t - 0.5f);  /* nearest integer */
    float r = x - (float)n * 0.693145752f;          /* ln2, high part (exact product) */
    r = r - (float)n * 1.42860677e-6f;              /* ln2, low part */
    float p = 1.0f + r * (1.0f + r * (0.5f + r * (1.66666667e-1f + r * (4.16666667e-2f +
              r * (8.33333333e-3f + r * (1.38888889e-3f + r * 1.98412698e-4f))))));
    int n1 = n / 2, n2 = n - n1;                    /* both in [-75, 64]: normal powers of two */
    union { unsigned u; float f; } s1, s2;
    s1.u = (unsigned)(n1 + 127) << 23;
    s2.u = (unsigned)(n2 + 127) << 23;
    return p * s1.f * s2.f;
}
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
