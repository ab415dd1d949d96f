/* kc_numeric.h -- numeric runtime shared by every generated KernelCraft simulator.
 *
 * Header-only C99 (every function is `static inline`), no libm: all conversions work on the
 * bits, so the results do not depend on the C library or on x87/FMA contraction.
 * The Python twin is kcgen/numeric.py; both implement the contract in native/README.md
 * and tests/native checks that they agree bit for bit.
 *
 * Formats.  `kc_fmt` mirrors isadl's `float NAME(exp=E, man=M, bias=B, finite, unsigned, nonan)`:
 *   width      1 + E + M, or E + M when unsigned (at most 64); sign | exponent | mantissa.
 *   man == 0   no zero and no subnormals: exponent field e means 2^(e - B) (as OCP E8M0).
 *   man > 0    e == 0: subnormal m * 2^(1 - B - M) (m == 0 is a signed zero);
 *              otherwise (2^M + m) * 2^(e - B - M).
 *   default    all-ones exponent: mantissa 0 is infinity, anything else NaN (IEEE 754).
 *   finite     no infinities; the all-ones exponent holds finite values and only the
 *              all-ones exponent+mantissa pattern is NaN (OCP E4M3; E8M0: 0xFF).
 *   nonan      no NaN pattern; with `finite` every pattern is a number (OCP FP4/FP6);
 *              without it every all-ones-exponent pattern is an infinity.
 *   A format with no room for a NaN (not finite, man == 0) has none.
 * Canonical NaN (what encoders produce): the positive quiet NaN -- all-ones exponent and
 * mantissa MSB for IEEE-style formats, all-ones magnitude for `finite` ones.
 */
#ifndef KC_NUMERIC_H
#define KC_NUMERIC_H

#include <stdint.h>
#include <string.h>
#include <math.h>

typedef struct { int exp, man, bias; int finite, is_unsigned, nonan; } kc_fmt;

/* Initialisers: `static const kc_fmt bf16 = KC_FMT_BF16;` */
#define KC_FMT_BF16 {8, 7, 127, 0, 0, 0}
#define KC_FMT_FP16 {5, 10, 15, 0, 0, 0}
#define KC_FMT_F32  {8, 23, 127, 0, 0, 0}
#define KC_FMT_F64  {11, 52, 1023, 0, 0, 0}
#define KC_FMT_E4M3 {4, 3, 7, 1, 0, 0}   /* OCP FP8 E4M3 (float8_e4m3fn) */
#define KC_FMT_E5M2 {5, 2, 15, 0, 0, 0}  /* OCP FP8 E5M2 */
#define KC_FMT_E8M0 {8, 0, 127, 1, 1, 0} /* OCP MX scale (float8_e8m0fnu) */
#define KC_FMT_E3M2 {3, 2, 3, 1, 0, 1}   /* OCP FP6 E3M2 */
#define KC_FMT_E2M3 {2, 3, 1, 1, 0, 1}   /* OCP FP6 E2M3 */
#define KC_FMT_E2M1 {2, 1, 1, 1, 0, 1}   /* OCP FP4 E2M1 */

/* ---- bits ------------------------------------------------------------------------------- */

static inline uint64_t kc__mask(int w) { return w >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << w) - 1); }

static inline int kc__bitlen(uint64_t n)
{
#if defined(__GNUC__) || defined(__clang__)
    return n ? 64 - __builtin_clzll(n) : 0;
#else
    int b = 0;
    while (n) { b++; n >>= 1; }
    return b;
#endif
}

static inline uint64_t kc__d2u(double x) { uint64_t u; memcpy(&u, &x, sizeof u); return u; }
static inline double kc__u2d(uint64_t u) { double x; memcpy(&x, &u, sizeof x); return x; }
static inline uint32_t kc__f2u(float x) { uint32_t u; memcpy(&u, &x, sizeof u); return u; }
static inline float kc__u2f(uint32_t u) { float x; memcpy(&x, &u, sizeof x); return x; }

#define KC__NAN_D 0x7ff8000000000000ull
#define KC__INF_D 0x7ff0000000000000ull
#define KC__NAN_F 0x7fc00000u

/* ---- format properties ------------------------------------------------------------------ */

static inline int kc_fmt_width(const kc_fmt *f) { return f->exp + f->man + (f->is_unsigned ? 0 : 1); }
static inline int kc_fmt_has_inf(const kc_fmt *f) { return !f->finite; }
static inline int kc_fmt_has_nan(const kc_fmt *f) { return !f->nonan && (f->finite || f->man > 0); }
static inline int kc_fmt_default_bias(int exp) { return (1 << (exp - 1)) - 1; }

/* Magnitude (sign-less) encoding of the largest finite value. */
static inline uint64_t kc_fmt_max_code(const kc_fmt *f)
{
    if (f->finite) return kc__mask(f->exp + f->man) - (uint64_t)kc_fmt_has_nan(f);
    return (kc__mask(f->exp) << f->man) - 1;
}
/* Canonical NaN (positive); 0 when the format has no NaN. */
static inline uint64_t kc_fmt_nan_code(const kc_fmt *f)
{
    if (!kc_fmt_has_nan(f)) return 0;
    if (f->finite) return kc__mask(f->exp + f->man);
    return (kc__mask(f->exp) << f->man) | ((uint64_t)1 << (f->man - 1));
}
static inline uint64_t kc_fmt_inf_code(const kc_fmt *f) { return kc__mask(f->exp) << f->man; }
static inline uint64_t kc__sign_code(const kc_fmt *f, int neg)
{
    return (neg && !f->is_unsigned) ? (uint64_t)1 << (f->exp + f->man) : 0;
}
/* Unbiased exponent of the largest finite value (OCP "emax" of an element format). */
static inline int kc_fmt_emax(const kc_fmt *f) { return (int)(kc_fmt_max_code(f) >> f->man) - f->bias; }

/* ---- encoding ---------------------------------------------------------------------------- */

/* Beyond the largest finite value. */
static inline uint64_t kc__overflow(const kc_fmt *f, int neg, int sat)
{
    uint64_t s = kc__sign_code(f, neg);
    if (sat) return s | kc_fmt_max_code(f);
    if (kc_fmt_has_inf(f)) return s | kc_fmt_inf_code(f);
    if (kc_fmt_has_nan(f)) return kc_fmt_nan_code(f);
    return s | kc_fmt_max_code(f);
}
/* A negative value for an unsigned format. */
static inline uint64_t kc__below(const kc_fmt *f, int sat)
{
    return (!sat && kc_fmt_has_nan(f)) ? kc_fmt_nan_code(f) : 0;
}
/* +-0 (a man == 0 format has no zero: NaN, or its smallest magnitude when saturating / nonan). */
static inline uint64_t kc__zero(const kc_fmt *f, int neg, int sat)
{
    if (f->man == 0 && !sat && kc_fmt_has_nan(f)) return kc_fmt_nan_code(f);
    return kc__sign_code(f, neg);
}

/* Round n * 2^-s (s may be <= 0: exact) to an integer, ties to even. n * 2^-s must fit. */
static inline uint64_t kc__rne(uint64_t n, long long s)
{
    uint64_t t, rem, half;
    if (s <= 0) return n << -s;
    if (s > 64) return 0;
    if (s == 64) return n > ((uint64_t)1 << 63) ? 1 : 0;
    t = n >> s;
    rem = n & kc__mask((int)s);
    half = (uint64_t)1 << (s - 1);
    return t + (rem > half || (rem == half && (t & 1)));
}

/* The encoding of (-1)^neg * n * 2^k, n > 0, rounded to nearest, ties to even. */
static inline uint64_t kc__pack(const kc_fmt *f, int neg, uint64_t n, long long k, int sat)
{
    const int M = f->man;
    const uint64_t maxc = kc_fmt_max_code(f);
    const uint64_t sg = kc__sign_code(f, neg);
    const int p = kc__bitlen(n);
    long long be = k + p - 1 + f->bias;             /* biased exponent before rounding */
    uint64_t t, code;
    int up = 0;
    if (neg && f->is_unsigned) return kc__below(f, sat);
    if (be > (long long)(maxc >> M)) return kc__overflow(f, neg, sat);
    if (be < (M > 0 ? 1 : 0)) {
        if (M == 0) return sg;                       /* below 2^-B: the smallest magnitude */
        if ((maxc >> M) == 0 && 1 - be < 63) {
            /* no normal binade (exp=1 without `finite`): IEEE decides overflow by rounding to M+1
               bits as if the exponent range were unbounded; overflow iff that value exceeds max */
            int s2 = p - 1 - M;
            uint64_t tt = s2 <= 0 ? n << -s2 : kc__rne(n, s2);
            int sh = (int)(1 - be);  /* overflow iff tt > maxc * 2^sh, without shifting maxc out */
            if ((tt >> sh) > maxc || ((tt >> sh) == maxc && (tt & kc__mask(sh)) != 0))
                return kc__overflow(f, neg, sat);
        }
        return sg | kc__rne(n, (long long)(1 - f->bias - M) - k);   /* subnormal; may carry to 2^M */
    }
    if (p - 1 - M <= 0) {
        t = n << (M - (p - 1));
    } else {
        int s = p - 1 - M;                           /* 1..63 */
        uint64_t rem = n & kc__mask(s), half = (uint64_t)1 << (s - 1);
        t = n >> s;
        up = rem > half || (rem == half && (t & 1));
    }
    code = ((uint64_t)be << M) + (t - ((uint64_t)1 << M));
    if (code > maxc || (up && code == maxc)) return kc__overflow(f, neg, sat);
    return sg | (code + (uint64_t)up);               /* a mantissa carry bumps the exponent */
}

/* x * 2^scale_k, encoded with one rounding. */
static inline uint64_t kc__encode_scaled(const kc_fmt *f, double x, long long scale_k, int sat)
{
    uint64_t u = kc__d2u(x), fr = u & kc__mask(52);
    int neg = (int)(u >> 63), ef = (int)((u >> 52) & 0x7ff);
    if (ef == 0x7ff) {
        if (fr) return kc_fmt_nan_code(f);
        if (neg && f->is_unsigned) return kc__below(f, sat);
        return kc__overflow(f, neg, sat);
    }
    if (ef == 0 && fr == 0) return kc__zero(f, neg, sat);
    if (neg && f->is_unsigned) return kc__below(f, sat);
    if (ef == 0) return kc__pack(f, neg, fr, -1074 + scale_k, sat);
    return kc__pack(f, neg, fr | ((uint64_t)1 << 52), (long long)ef - 1075 + scale_k, sat);
}

/* double -> format, round to nearest, ties to even (rules in native/README.md). */
static inline uint64_t kc_encode(const kc_fmt *f, double x, int saturate)
{
    return kc__encode_scaled(f, x, 0, saturate);
}
/* Integer -> format, correctly rounded from the integer (no detour through double). */
static inline uint64_t kc_encode_u64(const kc_fmt *f, uint64_t v, int saturate)
{
    return v ? kc__pack(f, 0, v, 0, saturate) : kc__zero(f, 0, saturate);
}
static inline uint64_t kc_encode_i64(const kc_fmt *f, int64_t v, int saturate)
{
    if (v >= 0) return kc_encode_u64(f, (uint64_t)v, saturate);
    return kc__pack(f, 1, (uint64_t)(-(v + 1)) + 1, 0, saturate);
}

/* ---- decoding ---------------------------------------------------------------------------- */

enum { KC__ZERO, KC__FINITE, KC__INF, KC__NAN };

/* Split an encoding into sign and n * 2^k (bits above the width are ignored). */
static inline int kc__unpack(const kc_fmt *f, uint64_t bits, int *neg, uint64_t *n, long long *k)
{
    const int E = f->exp, M = f->man;
    const uint64_t mag = bits & kc__mask(E + M), e = mag >> M, m = mag & kc__mask(M);
    *neg = !f->is_unsigned && ((bits >> (E + M)) & 1);
    if (kc_fmt_has_nan(f) && (f->finite ? mag == kc__mask(E + M) : (e == kc__mask(E) && m != 0)))
        return KC__NAN;
    if (!f->finite && e == kc__mask(E)) return KC__INF;
    if (M == 0) { *n = 1; *k = (long long)e - f->bias; return KC__FINITE; }
    if (e == 0) {
        if (m == 0) return KC__ZERO;
        *n = m; *k = 1 - (long long)f->bias - M;
        return KC__FINITE;
    }
    *n = m | ((uint64_t)1 << M);
    *k = (long long)e - f->bias - M;
    return KC__FINITE;
}

static inline double kc__to_double(int cls, int neg, uint64_t n, long long k)
{
    static const kc_fmt f64 = KC_FMT_F64;
    uint64_t s = (uint64_t)neg << 63;
    switch (cls) {
    case KC__NAN: return kc__u2d(KC__NAN_D);
    case KC__INF: return kc__u2d(s | KC__INF_D);
    case KC__ZERO: return kc__u2d(s);
    default: return kc__u2d(kc__pack(&f64, neg, n, k, 0));
    }
}

/* format -> double: exact when the format fits in a double, else rounded to nearest even. */
static inline double kc_decode(const kc_fmt *f, uint64_t bits)
{
    int neg = 0; uint64_t n = 0; long long k = 0;
    int cls = kc__unpack(f, bits, &neg, &n, &k);
    return kc__to_double(cls, neg, n, k);
}

/* ---- fast paths for the hot formats (bit-identical to kc_encode / kc_decode) ------------- */

/* float -> small signed format with 0 < M <= 22, exponent range inside float's normal range. */
static inline uint32_t kc__f32_narrow(float x, const int E, const int M, const int B,
                                      const int finite, const int has_nan, const int sat)
{
    const uint32_t u = kc__f2u(x), a = u & 0x7fffffffu;
    const uint32_t sg = (u >> 31) << (E + M);
    const uint32_t maxc = finite ? ((1u << (E + M)) - 1u - (has_nan ? 1u : 0u))
                                 : ((((1u << E) - 1u) << M) - 1u);
    const uint32_t nan = finite ? ((1u << (E + M)) - 1u) : ((((1u << E) - 1u) << M) | (1u << (M - 1)));
    const uint32_t ovf = sat ? (sg | maxc)
                             : (!finite ? (sg | (((1u << E) - 1u) << M)) : (has_nan ? nan : (sg | maxc)));
    const int e = (int)(a >> 23);
    if (a >= 0x7f800000u) return a == 0x7f800000u ? ovf : (has_nan ? nan : 0u);
    if (e - 127 + B >= 1) {
        const int sh = 23 - M;
        const uint32_t r = a - ((uint32_t)(127 - B) << 23);
        const uint32_t c = (r + ((1u << (sh - 1)) - 1u) + ((r >> sh) & 1u)) >> sh;
        return c > maxc ? ovf : (sg | c);
    }
    if (e == 0) return sg;                           /* float subnormals are far below half an ulp */
    {
        const int sh = 151 - B - M - e;              /* >= 24 - M >= 1 */
        const uint32_t sig = (a & 0x7fffffu) | 0x800000u;
        uint32_t t, rem, half;
        if (sh > 24) return sg;
        t = sig >> sh;
        rem = sig & ((1u << sh) - 1u);
        half = 1u << (sh - 1);
        return sg | (t + (rem > half || (rem == half && (t & 1u))));
    }
}

static inline float kc__narrow_to_f32(uint32_t c, const int E, const int M, const int B,
                                      const int finite, const int has_nan)
{
    const uint32_t mag = c & ((1u << (E + M)) - 1u), e = mag >> M, m = mag & ((1u << M) - 1u);
    const uint32_t sg = ((c >> (E + M)) & 1u) << 31;
    if (finite) {
        if (has_nan && mag == (1u << (E + M)) - 1u) return kc__u2f(KC__NAN_F);
    } else if (e == (1u << E) - 1u) {
        return m ? kc__u2f(KC__NAN_F) : kc__u2f(sg | 0x7f800000u);
    }
    if (e == 0) {
        float v = (float)m * kc__u2f((uint32_t)(127 + 1 - B - M) << 23);   /* exact */
        return sg ? -v : v;
    }
    return kc__u2f(sg | ((e + 127u - (uint32_t)B) << 23) | (m << (23 - M)));
}

static inline float kc_bf16_to_f32(uint16_t b) { return kc__u2f((uint32_t)b << 16); }
static inline uint16_t kc_f32_to_bf16(float x)
{
    uint32_t u = kc__f2u(x);
    if ((u & 0x7fffffffu) > 0x7f800000u) return 0x7fc0;
    return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
static inline float kc_fp16_to_f32(uint16_t h) { return kc__narrow_to_f32(h, 5, 10, 15, 0, 1); }
static inline uint16_t kc_f32_to_fp16(float x) { return (uint16_t)kc__f32_narrow(x, 5, 10, 15, 0, 1, 0); }
static inline float kc_e4m3_to_f32(uint8_t b) { return kc__narrow_to_f32(b, 4, 3, 7, 1, 1); }
static inline uint8_t kc_f32_to_e4m3(float x, int saturate)
{
    return (uint8_t)(saturate ? kc__f32_narrow(x, 4, 3, 7, 1, 1, 1) : kc__f32_narrow(x, 4, 3, 7, 1, 1, 0));
}
static inline float kc_e5m2_to_f32(uint8_t b) { return kc__narrow_to_f32(b, 5, 2, 15, 0, 1); }
static inline uint8_t kc_f32_to_e5m2(float x, int saturate)
{
    return (uint8_t)(saturate ? kc__f32_narrow(x, 5, 2, 15, 0, 1, 1) : kc__f32_narrow(x, 5, 2, 15, 0, 1, 0));
}

/* ---- float -> integer -------------------------------------------------------------------- */

/* Round toward zero, saturate to the width-bit range (1..64), NaN -> 0. */
static inline int64_t kc_f2i(double x, int width)
{
    const double hi = kc__u2d((uint64_t)(1023 + width - 1) << 52);      /* 2^(width-1) */
    if (x != x) return 0;
    if (x >= hi) return (int64_t)(kc__mask(width - 1));
    if (x < -hi) return -(int64_t)(kc__mask(width - 1)) - 1;
    return (int64_t)x;
}
static inline uint64_t kc_f2u(double x, int width)
{
    const double hi = kc__u2d((uint64_t)(1023 + width) << 52);          /* 2^width */
    if (!(x >= 1.0)) return 0;                                           /* NaN, negatives, [0, 1) */
    if (x >= hi) return kc__mask(width);
    return (uint64_t)x;
}

/* ---- OCP microscaling (MX) --------------------------------------------------------------- */
/* The scale is E8M0: bits s mean 2^(s - 127), 0xFF is NaN. Elements are at most 8 bits. */

static inline double kc_mx_decode(const kc_fmt *elem, uint8_t elem_bits, uint8_t scale_bits)
{
    int neg = 0; uint64_t n = 0; long long k = 0;
    int cls;
    if (scale_bits == 0xFF) return kc__u2d(KC__NAN_D);
    cls = kc__unpack(elem, elem_bits, &neg, &n, &k);
    return kc__to_double(cls, neg, n, k + (long long)scale_bits - 127);
}

/* Shared scale for a block whose largest magnitude is |amax|:
 * clamp(floor(log2 |amax|) - emax_elem, -127, 127) + 127; amax == 0 -> 0; NaN or inf -> 0xFF. */
static inline uint8_t kc_mx_scale(const kc_fmt *elem, double amax)
{
    const uint64_t u = kc__d2u(amax) & ~((uint64_t)1 << 63);
    long long lg, x;
    if (u >= KC__INF_D) return 0xFF;
    if (u == 0) return 0;
    lg = (u >> 52) ? (long long)(u >> 52) - 1023 : (long long)kc__bitlen(u) - 1 - 1074;
    x = lg - kc_fmt_emax(elem);
    if (x < -127) x = -127;
    if (x > 127) x = 127;
    return (uint8_t)(x + 127);
}

/* Element for x under scale: encode(x / 2^(scale - 127)) with one rounding, saturating to the
 * largest finite element; NaN x -> the element NaN (0 without one); scale 0xFF -> same. */
static inline uint8_t kc_mx_encode(const kc_fmt *elem, double x, uint8_t scale_bits)
{
    if (scale_bits == 0xFF) return (uint8_t)kc_fmt_nan_code(elem);
    return (uint8_t)kc__encode_scaled(elem, x, 127 - (long long)scale_bits, 1);
}

/* One block: the scale from the largest |x[i]| (any NaN -> NaN scale), then each element. */
static inline void kc_mx_encode_block(const kc_fmt *elem, const float *x, int n, uint8_t *elems,
                                      uint8_t *scale)
{
    double amax = 0.0;
    int i;
    uint8_t s;
    for (i = 0; i < n; i++) {
        double a = kc__u2d(kc__d2u((double)x[i]) & ~((uint64_t)1 << 63));
        if (a != a) { amax = a; break; }
        if (a > amax) amax = a;
    }
    s = kc_mx_scale(elem, amax);
    *scale = s;
    for (i = 0; i < n; i++) elems[i] = kc_mx_encode(elem, x[i], s);
}

/* out[i] = (float)mx_decode(elems[i], scale): exact double, one rounding to float. */
static inline void kc_mx_decode_block(const kc_fmt *elem, const uint8_t *elems, uint8_t scale, int n,
                                      float *out)
{
    int i;
    for (i = 0; i < n; i++) out[i] = (float)kc_mx_decode(elem, elems[i], scale);
}

/* ---- the PLENA emulator's MX rule (isadl: mx NAME(..., rule=plena)) ----------------------
 * AICrossSim PLENA_Simulator, Feb 2026 (lib/quantize: tensor.rs into_bytes, dtype.rs cast), not OCP:
 * a block's scale is 2^floor(log2(float32(amax + 1e-9))), clamped to [-127, 127] (0 for an all-zero
 * block); each element x / scale is quantised in float32 by floor(log2), round half away from zero
 * and a mantissa clamp without carry (exponent field 0 holds m * 2^(-bias) / 2^M, the all-ones one
 * is never produced: the largest element is 240 for E4M3). Decoding reads exponent field 0 as
 * m * 2^(-bias - M) (one binade below IEEE's subnormals), the all-ones exponent as Inf/NaN, scale
 * bits 0 as 0.0 and 0xFF as infinity. Twin of the _plena_* functions of kcgen/numeric.py. */
#define KC__PLENA_EPS 0x1.12e0bep-30f /* the float32 nearest 1e-9: the emulator's epsilon */

/* floor(float32(log2 t)) for a float32 t >= 2^-126 (or infinity -> INT32_MAX): log2 rounded to
 * float32 reaches the next integer when t lies a few ulps below a power of two. */
static inline long long kc__plena_floor_log2(float t)
{
    const uint32_t u = kc__f2u(t);
    const long long e = (long long)((u >> 23) & 0xff) - 126;            /* t = m 2^e, m in [0.5, 1) */
    double m, d, lg;
    if (((u >> 23) & 0xff) == 0xff) return 2147483647LL;
    m = (double)kc__u2f((u & 0x7fffffu) | (126u << 23));
    d = 1.0 - m;
    if (d > 0x1p-16) return e - 1;
    lg = (double)e - (d + d * d / 2.0 + d * d * d / 3.0) / 0.6931471805599453;
    return (float)lg >= (float)e ? e : e - 1;
}

static inline double kc__pow2d(long long e) { return kc__u2d((uint64_t)(1023 + e) << 52); } /* |e| < 1023 */

static inline uint8_t kc_mx_plena_scale(const kc_fmt *elem, double amax)
{
    const float a = kc__u2f(kc__f2u((float)amax) & 0x7fffffffu);
    long long k;
    (void)elem;                                 /* the scale does not depend on the element format */
    if (a != a || a == 0.0f) return 0;          /* the emulator folds |x| with max from 0: NaN never wins */
    k = kc__plena_floor_log2(a + KC__PLENA_EPS);
    if (k < -127) k = -127;
    if (k > 127) k = 127;
    return (uint8_t)(k + 127);
}

static inline uint64_t kc__plena_quantize(const kc_fmt *f, float v)
{
    const long long bias = f->bias, emax = (1LL << f->exp) - 2 - bias, emin = -bias;
    const uint64_t mmax = kc__mask(f->man);
    const float a = kc__u2f(kc__f2u(v) & 0x7fffffffu);
    long long raw, e;
    float mant, y;
    uint64_t r, m;
    if (v == 0.0f) return 0;
    raw = (a != a) ? 0 : kc__plena_floor_log2(a + KC__PLENA_EPS);   /* NaN casts to integer 0 */
    e = raw < emin ? emin : raw > emax ? emax : raw;
    mant = a / (float)kc__pow2d(e);
    y = e != emin ? (mant - 1.0f) * (float)(1u << f->man) : mant * (float)(1u << f->man);
    if (y != y || y <= 0.0f) r = 0;
    else if (y >= 0x1p32f) r = 0xffffffffu;
    else r = (uint64_t)((double)y + 0.5);                            /* half away from zero */
    m = raw > emax ? mmax : (r < mmax ? r : mmax);
    return (v < 0.0f ? (uint64_t)1 << (f->exp + f->man) : 0) | ((uint64_t)(e + bias) << f->man) | m;
}

static inline uint8_t kc_mx_plena_encode(const kc_fmt *elem, double x, uint8_t scale_bits)
{
    const float xf = (float)x;
    float sv;
    if (scale_bits == 0) return 0;              /* an all-zero block: element bytes stay 0 */
    sv = scale_bits == 0xFF ? kc__u2f(0x7f800000u) : (float)kc__pow2d((long long)scale_bits - 127);
    return (uint8_t)kc__plena_quantize(elem, xf == 0.0f ? 0.0f : xf / sv);
}

static inline double kc_mx_plena_decode(const kc_fmt *elem, uint8_t elem_bits, uint8_t scale_bits)
{
    const int E = elem->exp, M = elem->man;
    const uint64_t b = elem_bits, ef = (b >> M) & kc__mask(E), m = b & kc__mask(M);
    double v, s;
    if (ef == kc__mask(E)) v = m ? kc__u2d(KC__NAN_D) : kc__u2d(KC__INF_D);
    else if (ef == 0) v = (double)m * kc__pow2d(-(long long)elem->bias - M);
    else v = (double)((1u << M) + m) * kc__pow2d((long long)ef - elem->bias - M);
    if ((b >> (E + M)) & 1) v = -v;
    s = scale_bits == 0 ? 0.0 : scale_bits == 0xFF ? kc__u2d(KC__INF_D) : kc__pow2d((long long)scale_bits - 127);
    return (double)(float)(v * s);
}

/* ---- math helpers for the semantics builtins --------------------------------------------- */

/* min/max: a NaN operand is ignored (the other one is returned; NaN only if both are NaN);
 * min(-0, +0) = -0 and max(-0, +0) = +0 (IEEE 754-2019 minimumNumber / maximumNumber). */
static inline double kc_fmin(double a, double b)
{
    if (a != a) return b;
    if (b != b) return a;
    if (a < b) return a;
    if (b < a) return b;
    return (kc__d2u(a) >> 63) ? a : b;
}
static inline double kc_fmax(double a, double b)
{
    if (a != a) return b;
    if (b != b) return a;
    if (a > b) return a;
    if (b > a) return b;
    return (kc__d2u(a) >> 63) ? b : a;
}
static inline float kc_fminf(float a, float b)
{
    if (a != a) return b;
    if (b != b) return a;
    if (a < b) return a;
    if (b < a) return b;
    return (kc__f2u(a) >> 31) ? a : b;
}
static inline float kc_fmaxf(float a, float b)
{
    if (a != a) return b;
    if (b != b) return a;
    if (a > b) return a;
    if (b > a) return b;
    return (kc__f2u(a) >> 31) ? b : a;
}

/* a * b + c for a, b, c of at most 26 significant bits (f32 and narrower), rounded to odd in
 * double: rounding that result to a format of at most 51 bits gives the correctly rounded fused
 * multiply-add, where fma() rounded to nearest in double and then to the format can round twice
 * (the product is exact in double, and two-sum gives the addition's exact error, which decides
 * the last bit). Infinities and NaNs take fma(), as the reference interpreter does. */
static inline double kc_fma_odd(double a, double b, double c)
{
    if (!isfinite(a) || !isfinite(b) || !isfinite(c)) return fma(a, b, c);
    const double p = a * b, r = p + c;
    const double bb = r - p, e = (p - (r - bb)) + (c - bb);
    uint64_t u = kc__d2u(r);
    /* without branches: whether e is zero is as random as the data */
    const uint64_t odd_step = (uint64_t)(e != 0) & ~u & (uint64_t)((u & KC__INF_D) != KC__INF_D);
    u += odd_step * (((e > 0) == (r > 0)) ? UINT64_C(1) : ~UINT64_C(0));
    double out;
    memcpy(&out, &u, sizeof out);
    return out;
}

/* ilogb: floor(log2 |x|) (subnormals included); 0 and NaN -> INT32_MIN, +-inf -> INT32_MAX. */
static inline int32_t kc_ilogb(double x)
{
    const uint64_t u = kc__d2u(x) & ~((uint64_t)1 << 63);
    if (u == 0) return INT32_MIN;
    if (u > KC__INF_D) return INT32_MIN;
    if (u == KC__INF_D) return INT32_MAX;
    if (u >> 52) return (int32_t)(u >> 52) - 1023;
    return (int32_t)kc__bitlen(u) - 1 - 1074;
}

#endif /* KC_NUMERIC_H */
