/* Shared by the baseline C kernels of this directory (see ../compile_c.py). */
#ifndef KC_COMMON_H
#define KC_COMMON_H

/* Element types, chosen by compile_c.py from the task's dtypes on the target: float32 throughout,
 * or -DKC_INT8 (coral): int8 inputs (in_t), exact int32 products and sums (acc_t), and int8
 * outputs (out_t) requantised from the sums by kc_requant. */
#ifdef KC_INT8
typedef signed char in_t;
typedef int acc_t;
typedef signed char out_t;
#else
typedef float in_t;
typedef float acc_t;
typedef float out_t;
#endif

#ifdef KC_INT8
/* floor(log2(x)) of a positive int: the tasks' requantisation shifts are written with it. */
static inline __attribute__((always_inline)) int kc_log2(int x)
{
    return 31 - __builtin_clz((unsigned)x);
}

/* The tasks' requantisation of an exact int32 sum to int8 (docs/tasks.md, `requant`): add half of
 * 2^s (round half up), shift right arithmetically by s (s >= 1), saturate to [-128, 127]. */
static inline __attribute__((always_inline)) out_t kc_requant(acc_t acc, int s)
{
    acc_t q = (acc + (1 << (s - 1))) >> s;
    return (out_t)(q < -128 ? -128 : q > 127 ? 127 : q);
}
#endif

/* exp(x) in float (freestanding: the targets have no libm). x = n*ln2 + r with |r| <= ln2/2, e^r by
 * its Taylor polynomial of degree 7 (truncation error below 1e-8 relative), 2^n applied as two
 * exponent-field scalings so that results down to the smallest subnormal come out right. Always
 * inlined: the kernel must stay the first (and only) function in .text. */
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

#endif
