"""IEEE 754 binary32/binary64 arithmetic on bit patterns, exactly: the Python reference of the
ieee_* builtins (docs/isadl.md; the C simulator's are native/kc_ieee.h).

Every result is the exact value (a Fraction, or an integer square root with a sticky bit) rounded
once in one of RISC-V's five modes (0 RNE, 1 RTZ, 2 RDN, 3 RUP, 4 RMM), with the flags derived from
that exact value: NV 16, DZ 8, OF 4, UF 2 (tiny after rounding, and inexact), NX 1. NaN results
are the canonical quiet NaN. Each function returns (result, flags)."""

from __future__ import annotations

from fractions import Fraction
from math import isqrt

NV, DZ, OF, UF, NX = 16, 8, 4, 2, 1


class _Fmt:
    def __init__(self, w: int):
        self.w = w
        self.p = 24 if w == 32 else 53
        self.ebits = w - self.p
        self.bias = (1 << (self.ebits - 1)) - 1
        self.emin, self.emax = 1 - self.bias, self.bias
        self.sign = 1 << (w - 1)
        self.expmask = ((1 << self.ebits) - 1) << (self.p - 1)
        self.manmask = (1 << (self.p - 1)) - 1
        self.quiet = 1 << (self.p - 2)
        self.canon = self.expmask | self.quiet


FMT = {32: _Fmt(32), 64: _Fmt(64)}


def isnan(b: int, w: int) -> bool:
    f = FMT[w]
    return (b & f.expmask) == f.expmask and bool(b & f.manmask)


def issnan(b: int, w: int) -> bool:
    return isnan(b, w) and not b & FMT[w].quiet


def isinf(b: int, w: int) -> bool:
    f = FMT[w]
    return (b & ~f.sign) == f.expmask


def iszero(b: int, w: int) -> bool:
    return (b & ~FMT[w].sign) == 0


def value(b: int, w: int) -> Fraction:
    """The exact value of a finite bit pattern."""
    f = FMT[w]
    e, man = (b & f.expmask) >> (f.p - 1), b & f.manmask
    v = Fraction(man | (1 << (f.p - 1)), 1) * Fraction(2) ** (e - f.bias - f.p + 1) if e else \
        Fraction(man) * Fraction(2) ** (f.emin - f.p + 1)
    return -v if b & f.sign else v


def _round_up(kept: int, half: bool, rest: bool, neg: bool, m: int) -> bool:
    if m == 0:
        return half and (rest or bool(kept & 1))
    if m == 2:
        return neg and (half or rest)
    if m == 3:
        return not neg and (half or rest)
    if m == 4:
        return half
    return False


def round_sig(neg: bool, sig: int, e: int, sticky: bool, w: int, m: int) -> tuple[int, int]:
    """(-1)^neg * (sig + a sticky fraction) * 2^e, sig > 0, rounded once to binary w in mode m."""
    f = FMT[w]
    E = sig.bit_length() - 1 + e  # the value lies in [2^E, 2^(E+1))
    out = []
    inexact = False
    for bounded in (False, True):
        keep = f.p - (f.emin - E if bounded and E < f.emin else 0)  # significant bits kept
        drop = sig.bit_length() - keep
        if drop <= 0:
            kept, half, rest = sig << -drop, False, sticky
        else:
            kept = sig >> drop
            half = bool((sig >> (drop - 1)) & 1)
            rest = bool(sig & ((1 << (drop - 1)) - 1)) or sticky
        out.append(kept + _round_up(kept, half, rest, neg, m))
        inexact = half or rest
    flags = 0
    tiny = E < f.emin - 1 or (E == f.emin - 1 and out[0] < (1 << f.p))
    if inexact:
        flags |= NX | (UF if tiny else 0)
    sign = f.sign if neg else 0
    k = out[1]
    if E < f.emin:
        return sign | k, flags
    if k >> f.p:
        k >>= 1
        E += 1
    if E > f.emax:
        to_inf = m in (0, 4) or (m == 3 and not neg) or (m == 2 and neg)
        return sign | (f.expmask if to_inf else f.expmask - 1), flags | OF | NX
    return sign | ((E + f.bias) << (f.p - 1)) | (k & f.manmask), flags


def round_fraction(q: Fraction, w: int, m: int) -> tuple[int, int]:
    """A nonzero exact value rounded once."""
    neg = q < 0
    q = abs(q)
    e = q.numerator.bit_length() - q.denominator.bit_length() - FMT[w].p - 3  # leaves >= p + 2 bits
    scaled = q / Fraction(2) ** e
    sig = scaled.numerator // scaled.denominator
    return round_sig(neg, sig, e, sig * scaled.denominator != scaled.numerator, w, m)


def _nan(w: int, *operands: int, invalid: bool = False) -> tuple[int, int]:
    return FMT[w].canon, NV if invalid or any(issnan(b, w) for b in operands) else 0


def _signed_inf(neg: bool, w: int) -> int:
    return (FMT[w].sign if neg else 0) | FMT[w].expmask


def _neg(b: int, w: int) -> bool:
    return bool(b & FMT[w].sign)


def _sum(x: Fraction, y: Fraction, x_neg: bool, y_neg: bool, w: int, m: int) -> tuple[int, int]:
    """x + y of finite values (x_neg, y_neg: their signs, which decide the sign of zeros). An exact
    zero sum is -0 when both addends are -0, or when they differ in sign and the mode rounds down;
    otherwise +0 (IEEE 754 6.3)."""
    s = x + y
    if s == 0:
        neg = (x_neg and y_neg) if x_neg == y_neg else m == 2
        return (FMT[w].sign if neg else 0), 0
    return round_fraction(s, w, m)


def add(a: int, b: int, w: int, m: int) -> tuple[int, int]:
    if isnan(a, w) or isnan(b, w):
        return _nan(w, a, b)
    if isinf(a, w) or isinf(b, w):
        if isinf(a, w) and isinf(b, w) and _neg(a, w) != _neg(b, w):
            return _nan(w, invalid=True)
        return (a if isinf(a, w) else b), 0
    return _sum(value(a, w), value(b, w), _neg(a, w), _neg(b, w), w, m)


def sub(a: int, b: int, w: int, m: int) -> tuple[int, int]:
    return add(a, b if isnan(b, w) else b ^ FMT[w].sign, w, m)


def mul(a: int, b: int, w: int, m: int) -> tuple[int, int]:
    if isnan(a, w) or isnan(b, w):
        return _nan(w, a, b)
    neg = _neg(a, w) != _neg(b, w)
    if isinf(a, w) or isinf(b, w):
        if iszero(a, w) or iszero(b, w):
            return _nan(w, invalid=True)
        return _signed_inf(neg, w), 0
    if iszero(a, w) or iszero(b, w):
        return (FMT[w].sign if neg else 0), 0
    return round_fraction(value(a, w) * value(b, w), w, m)


def div(a: int, b: int, w: int, m: int) -> tuple[int, int]:
    if isnan(a, w) or isnan(b, w):
        return _nan(w, a, b)
    neg = _neg(a, w) != _neg(b, w)
    if isinf(a, w):
        return (_nan(w, invalid=True) if isinf(b, w) else (_signed_inf(neg, w), 0))
    if isinf(b, w):
        return (FMT[w].sign if neg else 0), 0
    if iszero(b, w):
        return (_nan(w, invalid=True) if iszero(a, w) else (_signed_inf(neg, w), DZ))
    if iszero(a, w):
        return (FMT[w].sign if neg else 0), 0
    return round_fraction(value(a, w) / value(b, w), w, m)


def sqrt(a: int, w: int, m: int) -> tuple[int, int]:
    if isnan(a, w):
        return _nan(w, a)
    if iszero(a, w):
        return a, 0
    if _neg(a, w):
        return _nan(w, invalid=True)
    if isinf(a, w):
        return a, 0
    q = value(a, w)
    e = q.numerator.bit_length() - q.denominator.bit_length() - 2 * FMT[w].p - 8
    e -= e & 1  # even, so that sqrt(2^e) = 2^(e/2)
    scaled = q / Fraction(2) ** e
    n = scaled.numerator // scaled.denominator  # sqrt(q) = sqrt(scaled) * 2^(e/2)
    r = isqrt(n)
    exact = r * r == n and n * scaled.denominator == scaled.numerator
    return round_sig(False, r, e // 2, not exact, w, m)


def fma(a: int, b: int, c: int, w: int, m: int) -> tuple[int, int]:
    """a * b + c rounded once; RISC-V: inf * 0 is invalid even when c is a quiet NaN."""
    inf_times_zero = (isinf(a, w) and iszero(b, w)) or (iszero(a, w) and isinf(b, w))
    if isnan(a, w) or isnan(b, w) or isnan(c, w):
        return _nan(w, a, b, c, invalid=inf_times_zero)
    if inf_times_zero:
        return _nan(w, invalid=True)
    pneg = _neg(a, w) != _neg(b, w)
    if isinf(a, w) or isinf(b, w):
        if isinf(c, w) and _neg(c, w) != pneg:
            return _nan(w, invalid=True)
        return _signed_inf(pneg, w), 0
    if isinf(c, w):
        return c, 0
    return _sum(value(a, w) * value(b, w), value(c, w), pneg, _neg(c, w), w, m)


def min_max(a: int, b: int, w: int, want_max: bool) -> tuple[int, int]:
    """RISC-V fmin/fmax (IEEE 754-2019 minimumNumber/maximumNumber): a NaN gives the other operand,
    -0 is below +0; NV for a signalling NaN."""
    flags = NV if issnan(a, w) or issnan(b, w) else 0
    if isnan(a, w) and isnan(b, w):
        return FMT[w].canon, flags
    if isnan(a, w) or isnan(b, w):
        return (b if isnan(a, w) else a), flags
    x, y = (float("inf") if isinf(a, w) else value(a, w)), (float("inf") if isinf(b, w) else value(b, w))
    if isinf(a, w) and _neg(a, w):
        x = float("-inf")
    if isinf(b, w) and _neg(b, w):
        y = float("-inf")
    if x != y:
        return (a if (x < y) != want_max else b), flags
    return (a & b if want_max else a | b), flags


def _ordered(b: int, w: int):
    if isinf(b, w):
        return float("-inf") if _neg(b, w) else float("inf")
    return value(b, w)


def compare(a: int, b: int, w: int, kind: int) -> tuple[bool, int]:
    """kind 0: equal (NV only for a signalling NaN); 1: less; 2: less or equal (NV for any NaN)."""
    if isnan(a, w) or isnan(b, w):
        return False, NV if kind or issnan(a, w) or issnan(b, w) else 0
    x, y = _ordered(a, w), _ordered(b, w)
    return (x == y if kind == 0 else x < y if kind == 1 else x <= y), 0


def to_int(a: int, w: int, m: int, bits: int, signed: bool) -> tuple[int, int]:
    """To an integer of `bits` bits, saturating as RISC-V does (NaN: the largest); the value."""
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    if isnan(a, w):
        return hi, NV
    if isinf(a, w):
        return (lo if _neg(a, w) else hi), NV
    q = value(a, w)
    t = int(q)  # toward zero
    frac = q - t
    r = t
    if frac:
        step = -1 if q < 0 else 1
        if m == 0 and (abs(frac) > Fraction(1, 2) or (abs(frac) == Fraction(1, 2) and t & 1)):
            r = t + step
        elif m == 2 and frac < 0:
            r = t - 1
        elif m == 3 and frac > 0:
            r = t + 1
        elif m == 4 and abs(frac) >= Fraction(1, 2):
            r = t + step
    if r < lo or r > hi:
        return (lo if q < 0 else hi), NV
    return r, NX if frac else 0


def from_int(x: int, w: int, m: int) -> tuple[int, int]:
    if x == 0:
        return 0, 0
    return round_sig(x < 0, abs(x), 0, False, w, m)


def convert(a: int, src: int, dst: int, m: int) -> tuple[int, int]:
    if isnan(a, src):
        return FMT[dst].canon, NV if issnan(a, src) else 0
    neg = _neg(a, src)
    if isinf(a, src):
        return _signed_inf(neg, dst), 0
    if iszero(a, src):
        return (FMT[dst].sign if neg else 0), 0
    return round_fraction(value(a, src), dst, m)
