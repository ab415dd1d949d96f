/* silu: y[i] = x[i] / (1 + exp(-x[i])), float32 on every target.
 * Freestanding: exp is computed here (the targets have no libm).
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

void kernel(const float *restrict x, float *restrict y, int N)
{
    for (int i = 0; i < N; i++)
        y[i] = x[i] / (1.0f + kc_expf(-x[i]));
}
