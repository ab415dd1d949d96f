"""An independent, slow, exact model of the numeric contract (native/README.md), for tests.

It never looks at kcgen.numeric's internals: values come from the definition of each field,
and rounding picks the nearest value from a sorted table of all finite values with exact
rational arithmetic (fractions.Fraction).
"""
from __future__ import annotations

import bisect
import math
from fractions import Fraction
from functools import lru_cache

NAN = "nan"


def classify(fmt, code):
    """('nan'|'inf'|'num', value as Fraction or sign) for one bit pattern, from the definitions."""
    E, M, B = fmt.exp, fmt.man, fmt.bias
    sign = 0 if fmt.unsigned else (code >> (E + M)) & 1
    e = (code >> M) & ((1 << E) - 1)
    m = code & ((1 << M) - 1)
    all_e = e == (1 << E) - 1
    if fmt.finite:
        if not fmt.nonan and all_e and m == (1 << M) - 1:
            return "nan", None
    elif all_e:
        if m != 0 and not fmt.nonan:
            return "nan", None
        return "inf", -1 if sign else 1
    if M == 0:
        v = Fraction(2) ** (e - B)
    elif e == 0:
        v = m * Fraction(2) ** (1 - B - M)
    else:
        v = (2 ** M + m) * Fraction(2) ** (e - B - M)
    return "num", -v if sign else v


@lru_cache(maxsize=None)
def table(fmt):
    """Sorted positive-or-zero finite magnitudes with their (unsigned) codes, and extra facts."""
    vals = {}
    for code in range(1 << (fmt.exp + fmt.man)):   # magnitudes only (sign bit clear)
        kind, v = classify(fmt, code)
        if kind == "num":
            vals.setdefault(v, code)
    items = sorted(vals.items())
    mags = [v for v, _ in items]
    codes = [c for _, c in items]
    nan_codes = [c for c in range(1 << fmt.width) if classify(fmt, c)[0] == "nan"]
    return mags, codes, nan_codes


def has_nan(fmt):
    return bool(table(fmt)[2])


def canonical_nan(fmt):
    nans = table(fmt)[2]
    if not nans:
        return 0
    if fmt.finite:
        return (1 << (fmt.exp + fmt.man)) - 1
    return (((1 << fmt.exp) - 1) << fmt.man) | (1 << (fmt.man - 1))


def encode(fmt, x, saturate=False):
    """Expected encoding of x (float or Fraction or int)."""
    mags, codes, _ = table(fmt)
    nan = canonical_nan(fmt)
    sbit = 0 if fmt.unsigned else 1 << (fmt.exp + fmt.man)
    if isinstance(x, float):
        if math.isnan(x):
            return nan
        neg = math.copysign(1.0, x) < 0
        if math.isinf(x):
            a = None
        else:
            a = Fraction(abs(x))
    else:
        x = Fraction(x)
        neg, a = x < 0, abs(x)
    sg = sbit if neg else 0
    if fmt.unsigned and neg and a != 0:
        return 0 if (saturate or not has_nan(fmt)) else nan
    if a == 0:
        if mags[0] == 0:
            return sg
        return sg if (saturate or not has_nan(fmt)) else nan     # no zero in the format

    def overflow():
        if saturate:
            return sg | codes[-1]
        if not fmt.finite:
            return sg | (((1 << fmt.exp) - 1) << fmt.man)
        if has_nan(fmt):
            return nan
        return sg | codes[-1]

    if a is None:
        return overflow()
    top = mags[-1]
    emax = math.floor(math.log2(top)) if top >= 1 else -math.ceil(-math.log2(top))
    # exact floor(log2(top))
    while Fraction(2) ** emax > top:
        emax -= 1
    while Fraction(2) ** (emax + 1) <= top:
        emax += 1
    if a > top:
        step = Fraction(2) ** (emax - fmt.man)
        mid = top + step / 2
        if a < mid:
            return sg | codes[-1]
        if a == mid and (top / step) % 2 == 0:
            return sg | codes[-1]
        return overflow()
    i = bisect.bisect_left(mags, a)
    if mags[i] == a:
        return sg | codes[i]
    if i == 0:                       # below the smallest magnitude and the format has no zero
        return sg | codes[0]
    lo, hi = mags[i - 1], mags[i]
    if a - lo < hi - a:
        return sg | codes[i - 1]
    if a - lo > hi - a:
        return sg | codes[i]
    even_lo = (lo / (hi - lo)).denominator == 1 and (lo / (hi - lo)) % 2 == 0
    return sg | codes[i - 1 if even_lo else i]
