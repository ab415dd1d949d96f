/* kc_ieee.h: IEEE 754 binary32/binary64 arithmetic on bit patterns in the five RISC-V rounding
   modes (0 RNE, 1 RTZ, 2 RDN, 3 RUP, 4 RMM) with the exception flags of RISC-V's fflags
   (NV 16, DZ 8, OF 4, UF 2, NX 1; tininess is detected after rounding, UF only when inexact) and
   RISC-V's NaN rules (every NaN result is the canonical quiet NaN). The ieee_* builtins of the
   description language (docs/isadl.md) compile to these functions.

   Method: RNE, RTZ, RDN and RUP use the host's own IEEE operation in that mode (its exception
   flags give NV, DZ, OF, NX). Two cases go to an exact path instead: RMM, which the host lacks, and
   an inexact result at or below the smallest normal, where hosts differ on when tininess is
   detected. The exact path computes in a wider host format rounded to odd (round toward zero, then
   set the last bit if inexact: with at least two more bits this loses nothing for any rounding
   to the narrow format) and rounds that once in integer arithmetic (kc_ie_round). */
#ifndef KC_IEEE_H
#define KC_IEEE_H
#include <fenv.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "kc_ieee.h reads a binary32 from the low bytes of a uint64_t");

_Static_assert(LDBL_MANT_DIG >= 55 && LDBL_MAX_EXP >= 4096, "the exact binary64 path needs a long double of at least 55 bits");

enum { KC_NV = 16, KC_DZ = 8, KC_OF = 4, KC_UF = 2, KC_NX = 1 };
enum { KC_ADD, KC_SUB, KC_MUL, KC_DIV, KC_SQRT, KC_FMA };

#define KC_IE_P(w) ((w) == 32 ? 24 : 53)
#define KC_IE_EMIN(w) ((w) == 32 ? -126 : -1022)
#define KC_IE_EMAX(w) ((w) == 32 ? 127 : 1023)
#define KC_IE_SIGN(w) ((uint64_t)1 << ((w) - 1))
#define KC_IE_EXPMASK(w) ((w) == 32 ? UINT64_C(0x7f800000) : UINT64_C(0x7ff0000000000000))
#define KC_IE_MANMASK(w) ((w) == 32 ? UINT64_C(0x7fffff) : UINT64_C(0xfffffffffffff))
#define KC_IE_QUIET(w) ((w) == 32 ? UINT64_C(0x400000) : UINT64_C(0x8000000000000))
#define KC_IE_CANON(w) ((w) == 32 ? UINT64_C(0x7fc00000) : UINT64_C(0x7ff8000000000000))

static inline int kc_ie_isnan(uint64_t b, int w) { return (b & KC_IE_EXPMASK(w)) == KC_IE_EXPMASK(w) && (b & KC_IE_MANMASK(w)); }
static inline int kc_ie_issnan(uint64_t b, int w) { return kc_ie_isnan(b, w) && !(b & KC_IE_QUIET(w)); }
static inline int kc_ie_isinf(uint64_t b, int w) { return (b & ~KC_IE_SIGN(w)) == KC_IE_EXPMASK(w); }
static inline int kc_ie_iszero(uint64_t b, int w) { return (b & ~KC_IE_SIGN(w)) == 0; }
static inline double kc_ie_double(uint64_t b, int w) {  /* exact: binary32 widens without rounding */
    if (w == 32) { uint32_t u = (uint32_t)b; float f; memcpy(&f, &u, 4); return (double)f; }
    double d; memcpy(&d, &b, 8); return d;
}

/* Round (-1)^neg * sig * 2^e, with `sticky` standing for nonzero bits below sig, to binary w in
   mode m, once. sig != 0. */
static uint64_t kc_ie_round(int neg, uint64_t sig, int e, int sticky, int w, unsigned m, unsigned *fl) {
    const int p = KC_IE_P(w), emin = KC_IE_EMIN(w), emax = KC_IE_EMAX(w);
    int lz = __builtin_clzll(sig);
    sig <<= lz;
    e -= lz;
    int E = e + 63;  /* the value lies in [2^E, 2^(E+1)) */
    uint64_t out[2];
    int inexact = 0;
    /* pass 0: p bits with an unbounded exponent (tininess after rounding); pass 1: the format */
    for (int pass = 0; pass < 2; pass++) {
        int drop = 64 - p + (pass && E < emin ? emin - E : 0);
        uint64_t kept, half, rest;
        if (drop >= 65) { kept = 0; half = 0; rest = 1; }
        else if (drop == 64) { kept = 0; half = sig >> 63; rest = (sig << 1) != 0; }
        else { kept = sig >> drop; half = (sig >> (drop - 1)) & 1; rest = (sig & ((UINT64_C(1) << (drop - 1)) - 1)) != 0; }
        rest |= (uint64_t)(sticky != 0);
        int up = m == 0 ? half && (rest || (kept & 1)) : m == 2 ? neg && (half || rest)
               : m == 3 ? !neg && (half || rest) : m == 4 ? (int)half : 0;
        out[pass] = kept + (uint64_t)up;
        inexact = half || rest;
    }
    int tiny = E < emin - 1 || (E == emin - 1 && out[0] < (UINT64_C(1) << p));
    uint64_t sign = neg ? KC_IE_SIGN(w) : 0, k = out[1];
    if (inexact) *fl |= KC_NX | (tiny ? KC_UF : 0);
    if (E < emin)  /* subnormal (a carry into 2^(p-1) is the smallest normal's encoding) */
        return sign | k;
    if (k >> p) { k >>= 1; E++; }
    if (E > emax) {
        *fl |= KC_OF | KC_NX;
        int to_inf = m == 0 || m == 4 || (m == 3 && !neg) || (m == 2 && neg);
        return sign | (to_inf ? KC_IE_EXPMASK(w) : KC_IE_EXPMASK(w) - 1);
    }
    return sign | ((uint64_t)(E + (1 << (w == 32 ? 7 : 10)) - 1) << (p - 1)) | (k & KC_IE_MANMASK(w));
}

/* The host's flags, as RISC-V's. */
static inline unsigned kc_ie_host_flags(int f) {
    return (f & FE_INVALID ? KC_NV : 0) | (f & FE_DIVBYZERO ? KC_DZ : 0) | (f & FE_OVERFLOW ? KC_OF : 0) |
           (f & FE_UNDERFLOW ? KC_UF : 0) | (f & FE_INEXACT ? KC_NX : 0);
}

#if defined(__x86_64__) && defined(__SSE2_MATH__)
/* SSE. Writing MXCSR costs tens of nanoseconds, reading it a few, so the flags are not cleared
   before every operation: a flag the host already holds need not be cleared when it is in
   `accounted` (the flags the caller has accrued already: whether this operation raises it again
   changes nothing). MXCSR is written only to change the rounding mode (and back) or to clear a
   flag not yet accounted for. All exceptions stay masked, no flush-to-zero. */
static inline unsigned kc_ie_mxcsr_flags(unsigned csr) {
    return (csr & 1 ? KC_NV : 0) | (csr & 4 ? KC_DZ : 0) | (csr & 8 ? KC_OF : 0) | (csr & 16 ? KC_UF : 0) | (csr & 32 ? KC_NX : 0);
}
static inline void kc_ie_host_begin(unsigned m, unsigned accounted) {
    static const unsigned rc[4] = {0x0000, 0x6000, 0x2000, 0x4000};  /* RC: RNE, RTZ, RDN, RUP */
    unsigned csr;
    __asm__ volatile("stmxcsr %0" : "=m"(csr) : : "memory");
    if (m || (csr & ~0x3fu) != 0x1f80 || (kc_ie_mxcsr_flags(csr) & ~accounted)) {
        unsigned set = 0x1f80 | rc[m];
        __asm__ volatile("ldmxcsr %0" : : "m"(set) : "memory");
    }
}
static inline unsigned kc_ie_host_end(unsigned m) {
    unsigned csr, dflt = 0x1f80;
    __asm__ volatile("stmxcsr %0" : "=m"(csr) : : "memory");
    if (m) __asm__ volatile("ldmxcsr %0" : : "m"(dflt) : "memory");
    return kc_ie_mxcsr_flags(csr);
}
/* keeps the compiler from moving the operation across the MXCSR accesses */
#define KC_IE_PIN(x) __asm__ volatile("" : "+x"(x))
#else
static inline void kc_ie_host_begin(unsigned m, unsigned accounted) {
    static const int rc[4] = {FE_TONEAREST, FE_TOWARDZERO, FE_DOWNWARD, FE_UPWARD};
    (void)accounted;
    fesetround(rc[m]);
    feclearexcept(FE_ALL_EXCEPT);
}
static inline unsigned kc_ie_host_end(unsigned m) {
    unsigned f = kc_ie_host_flags(fetestexcept(FE_ALL_EXCEPT));
    if (m) fesetround(FE_TONEAREST);
    return f;
}
#define KC_IE_PIN(x) __asm__ volatile("" : "+m"(x))
#endif

/* Exact path: the operation in the wider format (double for binary32, long double for binary64)
   rounded toward zero, made odd when inexact, then rounded once to binary w in mode m. Operands
   are not NaN; the wider format neither overflows nor underflows on them. */
static __attribute__((noinline)) uint64_t kc_ie_exact(int op, uint64_t a, uint64_t b, uint64_t c, int w, unsigned m, unsigned *fl) {
    volatile long double x = kc_ie_double(a, w), y = kc_ie_double(b, w), z = kc_ie_double(c, w), r;
    int saved = fegetround();
    fesetround(FE_TOWARDZERO);
    feclearexcept(FE_ALL_EXCEPT);
    if (w == 32) {  /* in double: 53 >= 24 + 2 bits */
        volatile double dx = (double)x, dy = (double)y, dz = (double)z, dr;
        switch (op) {
        case KC_ADD: dr = dx + dy; break;
        case KC_SUB: dr = dx - dy; break;
        case KC_MUL: dr = dx * dy; break;
        case KC_DIV: dr = dx / dy; break;
        case KC_SQRT: dr = sqrt(dx); break;
        default: dr = fma(dx, dy, dz); break;
        }
        r = dr;
    } else {  /* in long double: at least 55 bits */
        switch (op) {
        case KC_ADD: r = x + y; break;
        case KC_SUB: r = x - y; break;
        case KC_MUL: r = x * y; break;
        case KC_DIV: r = x / y; break;
        case KC_SQRT: r = sqrtl(x); break;
        default: r = fmal(x, y, z); break;
        }
    }
    unsigned host = kc_ie_host_flags(fetestexcept(FE_ALL_EXCEPT));
    fesetround(saved);
    long double v = r;
    *fl |= host & (KC_NV | KC_DZ);
    if (v != v) return KC_IE_CANON(w);
    uint64_t sign = signbit(v) ? KC_IE_SIGN(w) : 0;
    if (isinf(v)) return sign | KC_IE_EXPMASK(w);
    if (v == 0) return sign;  /* an exact zero: the sign rules are the same in every mode but RDN, which the host had */
    int ex;
    long double frac = frexpl(fabsl(v), &ex);  /* v = frac * 2^ex, frac in [0.5, 1) */
    int bits = w == 32 ? 53 : LDBL_MANT_DIG < 64 ? LDBL_MANT_DIG : 64;
    uint64_t sig = (uint64_t)ldexpl(frac, bits);
    return kc_ie_round(sign != 0, sig, ex - bits, (host & KC_NX) != 0, w, m, fl);
}

/* Round to nearest-even without touching the host's flag register, for results well inside the
   normal range (no overflow, no underflow: only NX can be raised), with an exactness test that is
   itself exact. binary32: the operation in double, rounded to float (for + - * / and sqrt the
   double rounding is innocuous: 53 >= 2 * 24 + 2), inexact when the double differs from the float
   or, for a sum, when the double sum had an error (TwoSum); binary64: the error of the result
   (TwoSum, or an fma for * / and sqrt, exact in that range). Returns 0 when it does not apply. */
static inline __attribute__((always_inline)) int kc_ie_rne_fast(int op, uint64_t a, uint64_t b, int w, uint64_t *out, unsigned *fl) {
    if (w == 32) {
        uint32_t ua = (uint32_t)a, ub = (uint32_t)b, ur;
        float x, y, r;
        memcpy(&x, &ua, 4); memcpy(&y, &ub, 4);
        double X = x, Y = op == KC_SUB ? -(double)y : (double)y, d, err = 0;
        switch (op) {
        case KC_ADD: case KC_SUB: { d = X + Y; double bb = d - X; err = (X - (d - bb)) + (Y - bb); break; }
        case KC_MUL: d = X * Y; break;
        case KC_DIV: d = X / Y; break;
        default: d = sqrt(X); break;
        }
        r = (float)d;
        memcpy(&ur, &r, 4);
        uint32_t e = (ur >> 23) & 0xff;
        if (e < 2 || e == 0xff) return 0;
        double R = r;
        int inexact = op == KC_DIV ? R * Y != X : op == KC_SQRT ? R * R != X : (err != 0 || R != d);
        *fl |= inexact ? KC_NX : 0;
        *out = ur;
        return 1;
    }
    double x, y, r, err;
    memcpy(&x, &a, 8); memcpy(&y, &b, 8);
    const uint64_t lo = 54, hi = 2046 - 54;  /* exponent fields far from underflow and overflow */
#define KC_IE_E64(v) ((v >> 52) & 0x7ff)
    switch (op) {
    case KC_ADD: case KC_SUB: {
        if (op == KC_SUB) y = -y;
        r = x + y;
        double bb = r - x;
        err = (x - (r - bb)) + (y - bb);
        break;
    }
#ifdef __FMA__
    case KC_MUL: r = x * y; err = fma(x, y, -r); break;
    case KC_DIV:
        if (KC_IE_E64(a) < lo || KC_IE_E64(a) > hi || KC_IE_E64(b) < lo || KC_IE_E64(b) > hi) return 0;
        r = x / y; err = fma(-r, y, x); break;
    case KC_SQRT:
        if (KC_IE_E64(a) < lo || KC_IE_E64(a) > hi) return 0;
        r = sqrt(x); err = fma(-r, r, x); break;
#endif
    default: return 0;
    }
    uint64_t bits;
    memcpy(&bits, &r, 8);
    if (KC_IE_E64(bits) < lo || KC_IE_E64(bits) > hi) return 0;
#undef KC_IE_E64
    *fl |= err != 0 ? KC_NX : 0;
    *out = bits;
    return 1;
}

/* add, sub, mul, div, sqrt (b unused) and fma (a * b + c, rounded once). *fl holds the flags
   accrued so far and gets this operation's OR-ed in (as for every kc_ie_* function). */
static inline __attribute__((always_inline)) uint64_t kc_ieee_op(int op, uint64_t a, uint64_t b, uint64_t c, int w, unsigned m, unsigned *fl) {
    int nb = op == KC_SQRT ? 1 : op == KC_FMA ? 3 : 2;
    if (kc_ie_isnan(a, w) || (nb > 1 && kc_ie_isnan(b, w)) || (nb > 2 && kc_ie_isnan(c, w))) {
        int invalid = kc_ie_issnan(a, w) || (nb > 1 && kc_ie_issnan(b, w)) || (nb > 2 && kc_ie_issnan(c, w));
        /* RISC-V: inf * 0 + NaN is invalid too */
        if (op == KC_FMA && ((kc_ie_isinf(a, w) && kc_ie_iszero(b, w)) || (kc_ie_iszero(a, w) && kc_ie_isinf(b, w)))) invalid = 1;
        if (invalid) *fl |= KC_NV;
        return KC_IE_CANON(w);
    }
    if (m >= 4) return kc_ie_exact(op, a, b, c, w, m, fl);
    uint64_t bits;
    if (m == 0 && op != KC_FMA && kc_ie_rne_fast(op, a, b, w, &bits, fl)) return bits;
    unsigned f;
    /* the operation in the host's format T, in mode m, its flags in f */
#define KC_IE_HOST_OP(T, SQRT, FMA)                                              \
    do {                                                                         \
        T x, y, z, r;                                                            \
        memcpy(&x, &a, sizeof x); memcpy(&y, &b, sizeof y); memcpy(&z, &c, sizeof z); \
        kc_ie_host_begin(m, *fl);                                                \
        KC_IE_PIN(x); KC_IE_PIN(y); KC_IE_PIN(z);                                \
        switch (op) {                                                            \
        case KC_ADD: r = x + y; break;                                           \
        case KC_SUB: r = x - y; break;                                           \
        case KC_MUL: r = x * y; break;                                           \
        case KC_DIV: r = x / y; break;                                           \
        case KC_SQRT: r = SQRT(x); break;                                        \
        default: r = FMA(x, y, z); break;                                        \
        }                                                                        \
        KC_IE_PIN(r);                                                            \
        f = kc_ie_host_end(m);                                                   \
        bits = 0;                                                                \
        memcpy(&bits, &r, sizeof r);                                             \
    } while (0)
    if (w == 32)  /* little-endian host: the low 4 bytes of a, b, c are the binary32 */
        KC_IE_HOST_OP(float, sqrtf, fmaf);
    else
        KC_IE_HOST_OP(double, sqrt, fma);
#undef KC_IE_HOST_OP
    if (kc_ie_isnan(bits, w)) bits = KC_IE_CANON(w);
    /* inexact (or NX held from before) at or below the smallest normal: whether it underflowed
       depends on when tininess is detected, which hosts do differently; the exact path knows */
    if ((f & KC_NX) && (bits & ~KC_IE_SIGN(w)) <= ((uint64_t)1 << (KC_IE_P(w) - 1)))
        return kc_ie_exact(op, a, b, c, w, m, fl);
    *fl |= f;
    return bits;
}

static inline uint64_t kc_ie_min_max(uint64_t a, uint64_t b, int w, int want_max, unsigned *fl) {
    if (kc_ie_issnan(a, w) || kc_ie_issnan(b, w)) *fl |= KC_NV;
    int na = kc_ie_isnan(a, w), nb = kc_ie_isnan(b, w);
    if (na && nb) return KC_IE_CANON(w);
    if (na) return b;
    if (nb) return a;
    double x = kc_ie_double(a, w), y = kc_ie_double(b, w);
    if (x != y) return (x < y) != want_max ? a : b;
    return want_max ? a & b : a | b;  /* equal: -0 is below +0 */
}

/* kind 0: equal (quiet: NV only for a signalling NaN), 1: less, 2: less or equal (NV for any NaN) */
static inline int kc_ie_compare(uint64_t a, uint64_t b, int w, int kind, unsigned *fl) {
    if (kc_ie_isnan(a, w) || kc_ie_isnan(b, w)) {
        if (kind || kc_ie_issnan(a, w) || kc_ie_issnan(b, w)) *fl |= KC_NV;
        return 0;
    }
    double x = kc_ie_double(a, w), y = kc_ie_double(b, w);
    return kind == 0 ? x == y : kind == 1 ? x < y : x <= y;
}

/* binary w to an integer of `bits` bits (signed or not) in mode m, saturating as RISC-V does: NaN
   and too large give the largest value, too small the smallest, both invalid (and not inexact).
   The result is the integer's bit pattern, zero-extended. */
static inline uint64_t kc_ie_to_int(uint64_t a, int w, unsigned m, int bits, int is_signed, unsigned *fl) {
    const uint64_t mask = bits == 64 ? ~UINT64_C(0) : (UINT64_C(1) << bits) - 1;
    const uint64_t max = is_signed ? mask >> 1 : mask, min = is_signed ? (mask >> 1) + 1 : 0;
    if (kc_ie_isnan(a, w)) { *fl |= KC_NV; return max; }
    double v = kc_ie_double(a, w);
    if (isinf(v)) { *fl |= KC_NV; return v > 0 ? max : min; }
    double t = trunc(v), frac = v - t, r = t;  /* both exact */
    double af = fabs(frac), step = v < 0 ? -1.0 : 1.0;
    switch (m) {
    case 0: if (af > 0.5 || (af == 0.5 && fmod(t, 2.0) != 0)) r = t + step; break;
    case 2: if (frac < 0) r = t - 1; break;
    case 3: if (frac > 0) r = t + 1; break;
    case 4: if (af >= 0.5) r = t + step; break;
    default: break;
    }
    double lo = is_signed ? -ldexp(1.0, bits - 1) : 0.0, hi = is_signed ? ldexp(1.0, bits - 1) : ldexp(1.0, bits);
    if (r < lo || r >= hi) { *fl |= KC_NV; return r < 0 ? min : max; }
    if (frac != 0) *fl |= KC_NX;
    return (r < 0 ? (uint64_t)(int64_t)r : (uint64_t)r) & mask;
}

/* An integer (its value: magnitude and sign) to binary w in mode m. */
static inline uint64_t kc_ie_from_int(uint64_t mag, int neg, int w, unsigned m, unsigned *fl) {
    if (mag == 0) return 0;
    return kc_ie_round(neg, mag, 0, 0, w, m, fl);
}

/* binary `from` to binary `to` in mode m (widening is exact). */
static inline uint64_t kc_ie_convert(uint64_t a, int from, int to, unsigned m, unsigned *fl) {
    if (kc_ie_isnan(a, from)) { if (kc_ie_issnan(a, from)) *fl |= KC_NV; return KC_IE_CANON(to); }
    int neg = (a & KC_IE_SIGN(from)) != 0;
    uint64_t sign = neg ? KC_IE_SIGN(to) : 0;
    if (kc_ie_isinf(a, from)) return sign | KC_IE_EXPMASK(to);
    if (kc_ie_iszero(a, from)) return sign;
    const int p = KC_IE_P(from);
    uint64_t expf = (a & KC_IE_EXPMASK(from)) >> (p - 1), man = a & KC_IE_MANMASK(from);
    int e = expf ? (int)expf - (from == 32 ? 127 : 1023) - (p - 1) : KC_IE_EMIN(from) - (p - 1);
    return kc_ie_round(neg, expf ? man | ((uint64_t)1 << (p - 1)) : man, e, 0, to, m, fl);
}
#endif
