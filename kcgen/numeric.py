"""Exact Python twin of native/kc_numeric.h, used by the Python reference interpreter.

Every function here gives bit for bit the result of its C namesake (tests/native checks it);
the rules themselves are in native/README.md. Scalars use Python integers (exact), the
``*_array`` functions use numpy and give the same bits as the scalar functions.

A format is ``Format(exp, man, bias=None, finite=False, unsigned=False, nonan=False)``,
the fields of isadl's ``float NAME(exp=E, man=M, bias=B, finite, unsigned, nonan)``.
"""
from __future__ import annotations

import math
import struct
from dataclasses import dataclass
from functools import lru_cache
from typing import Optional

import numpy as np

__all__ = [
    "Format", "BF16", "FP16", "F32", "F64", "E4M3", "E5M2", "E8M0", "E3M2", "E2M3", "E2M1",
    "decode", "encode", "decode_array", "encode_array", "f2i",
    "mx_decode", "mx_scale", "mx_encode", "mx_encode_block", "mx_decode_block", "MX_RULES",
    "mx_plena_encode_tensor", "mx_plena_decode_tensor",
    "fmin", "fmax", "ilogb",
]

_NAN = float("nan")
INT32_MIN, INT32_MAX = -(1 << 31), (1 << 31) - 1


@dataclass(frozen=True)
class Format:
    """A binary float format: sign bit (unless ``unsigned``), ``exp`` exponent and ``man`` mantissa bits."""
    exp: int
    man: int
    bias: Optional[int] = None  # None: 2**(exp-1) - 1
    finite: bool = False        # no infinities; only the all-ones pattern is NaN
    unsigned: bool = False      # no sign bit
    nonan: bool = False         # no NaN encodings

    def __post_init__(self):
        if not 1 <= self.exp <= 15 or self.man < 0 or self.exp + self.man + (0 if self.unsigned else 1) > 64:
            raise ValueError(f"unsupported float format exp={self.exp} man={self.man}")
        if self.bias is None:
            object.__setattr__(self, "bias", (1 << (self.exp - 1)) - 1)
        for flag in ("finite", "unsigned", "nonan"):
            object.__setattr__(self, flag, bool(getattr(self, flag)))

    @property
    def width(self) -> int:
        return self.exp + self.man + (0 if self.unsigned else 1)

    @property
    def has_inf(self) -> bool:
        return not self.finite

    @property
    def has_nan(self) -> bool:
        return not self.nonan and (self.finite or self.man > 0)

    @property
    def max_code(self) -> int:
        """Magnitude encoding of the largest finite value."""
        if self.finite:
            return (1 << (self.exp + self.man)) - 1 - int(self.has_nan)
        return (((1 << self.exp) - 1) << self.man) - 1

    @property
    def nan_code(self) -> int:
        """Canonical (positive) NaN; 0 when the format has no NaN."""
        if not self.has_nan:
            return 0
        if self.finite:
            return (1 << (self.exp + self.man)) - 1
        return (((1 << self.exp) - 1) << self.man) | (1 << (self.man - 1))

    @property
    def inf_code(self) -> int:
        return ((1 << self.exp) - 1) << self.man

    @property
    def sign_bit(self) -> int:
        return 0 if self.unsigned else 1 << (self.exp + self.man)

    @property
    def emax(self) -> int:
        """Unbiased exponent of the largest finite value (OCP emax of an element format)."""
        return (self.max_code >> self.man) - self.bias

    @property
    def max_value(self) -> float:
        return decode(self, self.max_code)

    def fits_double(self) -> bool:
        """True when every value of the format is exactly a double."""
        lo = (0 if self.man == 0 else 1) - self.bias - self.man
        return self.man <= 52 and lo >= -1074 and self.emax <= 1023


BF16 = Format(8, 7)
FP16 = Format(5, 10)
F32 = Format(8, 23)
F64 = Format(11, 52)
E4M3 = Format(4, 3, finite=True)
E5M2 = Format(5, 2)
E8M0 = Format(8, 0, finite=True, unsigned=True)
E3M2 = Format(3, 2, finite=True, nonan=True)
E2M3 = Format(2, 3, finite=True, nonan=True)
E2M1 = Format(2, 1, finite=True, nonan=True)


# ---- encoding -------------------------------------------------------------------------------------

def _overflow(f: Format, neg: bool, sat: bool) -> int:
    s = f.sign_bit if neg else 0
    if sat:
        return s | f.max_code
    if f.has_inf:
        return s | f.inf_code
    if f.has_nan:
        return f.nan_code
    return s | f.max_code


def _below(f: Format, sat: bool) -> int:
    return f.nan_code if (not sat and f.has_nan) else 0


def _zero(f: Format, neg: bool, sat: bool) -> int:
    if f.man == 0 and not sat and f.has_nan:
        return f.nan_code
    return f.sign_bit if neg else 0


def _rne(n: int, s: int) -> int:
    """n * 2**-s rounded to an integer, ties to even."""
    if s <= 0:
        return n << -s
    t = n >> s
    rem = n & ((1 << s) - 1)
    half = 1 << (s - 1)
    return t + (1 if rem > half or (rem == half and t & 1) else 0)


def _pack(f: Format, neg: bool, n: int, k: int, sat: bool) -> int:
    """Encoding of (-1)**neg * n * 2**k (n > 0), round to nearest, ties to even."""
    if neg and f.unsigned:
        return _below(f, sat)
    M = f.man
    maxc = f.max_code
    sg = f.sign_bit if neg else 0
    p = n.bit_length()
    be = k + p - 1 + f.bias
    if be > maxc >> M:
        return _overflow(f, neg, sat)
    if be < (1 if M > 0 else 0):
        if M == 0:
            return sg
        if maxc >> M == 0 and 1 - be < 63:
            # no normal binade (exp=1 without `finite`): IEEE decides overflow by rounding to M+1
            # bits as if the exponent range were unbounded; overflow iff that value exceeds max
            s2 = p - 1 - M
            tt = n << -s2 if s2 <= 0 else _rne(n, s2)
            if tt > maxc << (1 - be):
                return _overflow(f, neg, sat)
        return sg | _rne(n, 1 - f.bias - M - k)
    s = p - 1 - M
    up = 0
    if s <= 0:
        t = n << -s
    else:
        t = n >> s
        rem = n & ((1 << s) - 1)
        half = 1 << (s - 1)
        up = 1 if rem > half or (rem == half and t & 1) else 0
    code = (be << M) + (t - (1 << M))
    if code > maxc or (up and code == maxc):
        return _overflow(f, neg, sat)
    return sg | (code + up)


def _encode_scaled(f: Format, x: float, scale_k: int, sat: bool) -> int:
    x = float(x)
    if math.isnan(x):
        return f.nan_code
    neg = math.copysign(1.0, x) < 0
    if math.isinf(x):
        return _below(f, sat) if (neg and f.unsigned) else _overflow(f, neg, sat)
    if x == 0.0:
        return _zero(f, neg, sat)
    m, e = math.frexp(abs(x))
    return _pack(f, neg, int(math.ldexp(m, 53)), e - 53 + scale_k, sat)


def encode(f: Format, x, saturate: bool = False) -> int:
    """Encode x (a float, or an int rounded exactly from its integer value) in format f."""
    if isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_)):
        x = int(x)
        if x == 0:
            return _zero(f, False, saturate)
        return _pack(f, x < 0, abs(x), 0, saturate)
    return _encode_scaled(f, x, 0, saturate)


# ---- decoding -------------------------------------------------------------------------------------

_ZERO, _FINITE, _INF, _NANC = range(4)


def _unpack(f: Format, bits: int):
    """(class, neg, n, k) with value (-1)**neg * n * 2**k; bits above the width are ignored."""
    E, M = f.exp, f.man
    bits = int(bits)
    mag = bits & ((1 << (E + M)) - 1)
    e, m = mag >> M, mag & ((1 << M) - 1)
    neg = (not f.unsigned) and bool((bits >> (E + M)) & 1)
    emask = (1 << E) - 1
    if f.has_nan and (mag == (1 << (E + M)) - 1 if f.finite else (e == emask and m != 0)):
        return _NANC, neg, 0, 0
    if not f.finite and e == emask:
        return _INF, neg, 0, 0
    if M == 0:
        return _FINITE, neg, 1, e - f.bias
    if e == 0:
        if m == 0:
            return _ZERO, neg, 0, 0
        return _FINITE, neg, m, 1 - f.bias - M
    return _FINITE, neg, m | (1 << M), e - f.bias - M


def _to_double(cls: int, neg: bool, n: int, k: int) -> float:
    if cls == _NANC:
        return _NAN
    if cls == _INF:
        return -math.inf if neg else math.inf
    if cls == _ZERO:
        return -0.0 if neg else 0.0
    return struct.unpack("<d", struct.pack("<Q", _pack(F64, neg, n, k, False)))[0]


def decode(f: Format, bits: int) -> float:
    """The value of an encoding as a float (exact when the format fits a double)."""
    return _to_double(*_unpack(f, bits))


# ---- numpy versions -------------------------------------------------------------------------------

@lru_cache(maxsize=64)
def _decode_table(f: Format) -> np.ndarray:
    t = np.array([decode(f, b) for b in range(1 << f.width)], dtype=np.float64)
    t.setflags(write=False)
    return t


def decode_array(f: Format, bits) -> np.ndarray:
    """decode() over an array of encodings; returns float64."""
    bits = np.asarray(bits)
    if f.width <= 16:
        return _decode_table(f)[bits.astype(np.int64) & ((1 << f.width) - 1)]
    if not f.fits_double():
        flat = [decode(f, int(b)) for b in bits.astype(np.uint64).ravel()]
        return np.array(flat, dtype=np.float64).reshape(bits.shape)
    E, M = f.exp, f.man
    b = bits.astype(np.uint64)
    mag = b & _U((1 << (E + M)) - 1)
    e = (mag >> _U(M)).astype(np.int64)
    m = mag & _U((1 << M) - 1)
    neg = np.zeros(b.shape, bool) if f.unsigned else ((b >> _U(E + M)) & _U(1)).astype(bool)
    if M == 0:
        n, k = np.ones(b.shape, np.uint64), e - f.bias
    else:
        n = np.where(e == 0, m, m | _U(1 << M))
        k = np.where(e == 0, 1 - f.bias - M, e - f.bias - M)
    with np.errstate(over="ignore", invalid="ignore"):  # inf/NaN lanes are replaced below
        val = np.ldexp(n.astype(np.float64), np.clip(k, -2000, 2000).astype(np.int32))  # exact
    val = np.where(neg, -val, val)
    emask = (1 << E) - 1
    if f.has_inf:
        val = np.where(e == emask, np.where(neg, -np.inf, np.inf), val)
    if f.has_nan:
        isnan = (mag == _U((1 << (E + M)) - 1)) if f.finite else ((e == emask) & (m != _U(0)))
        val = np.where(isnan, np.nan, val)
    return val


_U = np.uint64


def encode_array(f: Format, x, saturate: bool = False) -> np.ndarray:
    """encode() over an array of floats (read as float64); returns uint64 encodings."""
    x = np.ascontiguousarray(x, dtype=np.float64)
    shape = x.shape
    if f.man > 0 and f.max_code >> f.man == 0:
        # no normal binade (exp=1 without `finite`): rare enough for the exact scalar rule
        return np.array([encode(f, v, saturate) for v in x.ravel().tolist()], dtype=np.uint64).reshape(shape)
    u = x.ravel().view(np.uint64)
    M = f.man
    sat = bool(saturate)
    neg = (u >> _U(63)).astype(bool)
    ef = ((u >> _U(52)) & _U(0x7FF)).astype(np.int64)
    fr = u & _U((1 << 52) - 1)
    isnan = (ef == 0x7FF) & (fr != 0)
    isinf = (ef == 0x7FF) & (fr == 0)
    iszero = (ef == 0) & (fr == 0)
    fin = ~(isnan | isinf | iszero)

    # n * 2^k with n normalised to 53 bits (subnormal inputs shifted up)
    n = np.where(ef == 0, fr, fr | _U(1 << 52))
    k = np.where(ef == 0, -1074, ef - 1075).astype(np.int64)
    sub = fin & (ef == 0)
    if sub.any():
        lz = 53 - (np.frexp(fr[sub].astype(np.float64))[1]).astype(np.int64)  # bit length via frexp
        n[sub] = n[sub] << lz.astype(np.uint64)
        k[sub] = k[sub] - lz
    ue = k + 52
    be = ue + f.bias

    maxc = f.max_code
    ovf = fin & (be > (maxc >> M))
    normal = fin & ~ovf & (be >= (1 if M > 0 else 0))
    tiny = fin & ~ovf & ~normal            # subnormal range (M > 0) or below 2^-B (M == 0)

    # shift: normal -> keep M fraction bits; subnormal -> quantum 2^(1-B-M)
    s = np.where(normal, 52 - M, (1 - f.bias - M) - k).astype(np.int64)
    s = np.clip(s, -63, 64)
    sp = np.clip(s, 1, 63).astype(np.uint64)
    t = np.where(s <= 0, n << np.clip(-s, 0, 63).astype(np.uint64), n >> sp)
    t = np.where(s >= 64, _U(0), t)
    rem = n & ((_U(1) << sp) - _U(1))
    half = _U(1) << (sp - _U(1))
    rem = np.where(s == 64, n, rem)
    half = np.where(s == 64, _U(1 << 63), half)
    up = (s > 0) & ((rem > half) | ((rem == half) & ((t & _U(1)) == _U(1))))

    code = np.zeros_like(u)
    sg = np.where(neg, _U(f.sign_bit), _U(0))
    # normal
    be_u = np.where(normal, be, 0).astype(np.uint64)
    ctrunc = (be_u << _U(M)) + (t - _U(1 << M))
    ovf2 = normal & ((ctrunc > _U(maxc)) | (up & (ctrunc == _U(maxc))))
    code = np.where(normal, ctrunc + up.astype(np.uint64), code)
    # tiny
    if M > 0:
        code = np.where(tiny, t + up.astype(np.uint64), code)
    else:
        code = np.where(tiny, _U(0), code)
    code = sg | code
    ovf = ovf | ovf2 | isinf

    out = code
    ovf_pos, ovf_neg = _overflow(f, False, sat), _overflow(f, True, sat)
    out = np.where(ovf, np.where(neg, _U(ovf_neg), _U(ovf_pos)), out)
    out = np.where(iszero, np.where(neg, _U(_zero(f, True, sat)), _U(_zero(f, False, sat))), out)
    if f.unsigned:
        out = np.where(neg & ~iszero, _U(_below(f, sat)), out)
    out = np.where(isnan, _U(f.nan_code), out)
    return out.reshape(shape)


# ---- float -> integer ------------------------------------------------------------------------------

def f2i(x: float, width: int, signed: bool = True) -> int:
    """Round toward zero, saturate to the width-bit range, NaN -> 0 (kc_f2i / kc_f2u)."""
    x = float(x)
    if math.isnan(x):
        return 0
    if signed:
        hi = 1 << (width - 1)
        if x >= hi:
            return hi - 1
        if x < -hi:
            return -hi
        return int(x)
    if not x >= 1.0:
        return 0
    if x >= (1 << width):
        return (1 << width) - 1
    return int(x)


# ---- OCP microscaling ------------------------------------------------------------------------------

def mx_decode(elem: Format, elem_bits: int, scale_bits: int, rule: str = "ocp") -> float:
    """Exact value of one MX element under an E8M0 scale (0xFF -> NaN), as a float.
    rule='plena': the PLENA emulator's decoding, rounded to float32 (see below)."""
    scale_bits = int(scale_bits)
    if rule == "plena":
        return _plena_decode(elem, elem_bits, scale_bits)
    if scale_bits == 0xFF:
        return _NAN
    cls, neg, n, k = _unpack(elem, int(elem_bits) & 0xFF)
    return _to_double(cls, neg, n, k + scale_bits - 127)


def mx_scale(elem: Format, amax: float, rule: str = "ocp") -> int:
    """E8M0 scale: clamp(floor(log2|amax|) - emax_elem, -127, 127) + 127; 0 -> 0; NaN/inf -> 0xFF.
    rule='plena': clamp(floor(log2(f32(|amax| + 1e-9))), -127, 127) + 127; 0 and NaN -> 0."""
    if rule == "plena":
        return _plena_scale(amax)
    a = abs(float(amax))
    if math.isnan(a) or math.isinf(a):
        return 0xFF
    if a == 0.0:
        return 0
    lg = math.frexp(a)[1] - 1
    return min(max(lg - elem.emax, -127), 127) + 127


def mx_encode(elem: Format, x: float, scale_bits: int, rule: str = "ocp") -> int:
    """Element byte for x under the scale: one rounding, saturating; scale 0xFF -> element NaN (or 0).
    rule='plena': the PLENA emulator's quantiser (round half away from zero, clamp without carry)."""
    scale_bits = int(scale_bits)
    if rule == "plena":
        return _plena_encode(elem, x, scale_bits)
    if scale_bits == 0xFF:
        return elem.nan_code & 0xFF
    return _encode_scaled(elem, x, 127 - scale_bits, True) & 0xFF


def mx_encode_block(elem: Format, x, rule: str = "ocp") -> tuple[np.ndarray, int]:
    """(element bytes, scale byte) for one block of float32 values (kc_mx_encode_block)."""
    xs = np.asarray(x, dtype=np.float32).astype(np.float64).ravel()
    a = np.abs(xs)
    if rule == "plena":  # NaN never becomes the block's maximum there
        amax = float(np.fmax.reduce(a, initial=0.0)) if a.size else 0.0
    else:
        amax = _NAN if np.isnan(a).any() else (float(a.max()) if a.size else 0.0)
    s = mx_scale(elem, amax, rule)
    return np.array([mx_encode(elem, v, s, rule) for v in xs], dtype=np.uint8), s


def mx_decode_block(elem: Format, elems, scale_bits: int, rule: str = "ocp") -> np.ndarray:
    """float32 values of one block (kc_mx_decode_block): exact value, one rounding to float32."""
    vals = [mx_decode(elem, int(b), scale_bits, rule) for b in np.asarray(elems).ravel()]
    return np.array(vals, dtype=np.float64).astype(np.float32)


# ---- the PLENA emulator's MX rule (isadl: mx NAME(..., rule=plena)) --------------------------------
# AICrossSim PLENA_Simulator, Feb 2026 (lib/quantize: tensor.rs into_bytes, dtype.rs cast): a block's
# scale is 2^floor(log2(amax + 1e-9)) (not OCP's 2^(floor(log2 amax) - emax)), each element is quantised
# by floor(log2), round half away from zero and a mantissa clamp without carry, computed in float32;
# element decoding reads exponent field 0 as m * 2^(-bias - M) (one binade below IEEE's subnormals)
# and the all-ones exponent as Inf/NaN; scale byte 0 decodes to 0.0 and 255 to infinity.

MX_RULES = ("ocp", "plena")
_PLENA_EPS = float.fromhex("0x1.12e0bep-30")  # the float32 nearest 1e-9, the emulator's epsilon
_LN2 = 0.6931471805599453


def _f32(x: float) -> float:
    """x rounded to float32 (overflow to infinity, as float32 arithmetic does)."""
    with np.errstate(over="ignore"):
        return float(np.float32(x))


def _plena_floor_log2(t: float) -> int:
    """floor(float32(log2 t)) for a float32 t > 0: log2 rounded to float32 (correctly; the emulator's
    log2f) is the next integer when t lies a few ulps below a power of two; inf -> INT32_MAX."""
    if math.isinf(t):
        return INT32_MAX
    m, e = math.frexp(t)  # t = m 2^e, m in [0.5, 1): floor(log2 t) = e - 1
    d = 1.0 - m
    if d > 2.0 ** -16:  # no float32 at distance below 2^-16 * log2(e) of an integer up to 2^8 is that close
        return e - 1
    lg = float(e) - (d + d * d / 2.0 + d * d * d / 3.0) / _LN2
    return e if _f32(lg) >= e else e - 1


def _plena_scale(amax: float) -> int:
    a = abs(_f32(amax))
    if math.isnan(a) or a == 0.0:  # the emulator folds |x| with max from 0.0: NaN never wins
        return 0
    t = float(np.float32(a) + np.float32(_PLENA_EPS))
    return min(max(_plena_floor_log2(t), -127), 127) + 127


def _plena_quantize(f: Format, v: float) -> int:
    """minifloat_ieee_quantize_hardware of the emulator for a float32 v."""
    if v == 0.0:
        return 0
    E, M, bias = f.exp, f.man, f.bias
    emax, emin = (1 << E) - 2 - bias, -bias
    neg = v < 0.0  # NaN: positive
    a = abs(v)
    if math.isnan(a):
        raw = 0  # float-to-int casts saturate: NaN -> 0
    else:
        raw = _plena_floor_log2(float(np.float32(a) + np.float32(_PLENA_EPS)))
    e = min(max(raw, emin), emax)
    mant = _f32(a / 2.0 ** e)
    y = _f32(_f32(mant - 1.0) * (1 << M)) if e != emin else _f32(mant * (1 << M))
    if math.isnan(y) or y <= 0.0:
        r = 0
    elif math.isinf(y):
        r = 1 << M
    else:
        r = int(math.floor(y + 0.5))  # round half away from zero (y > 0, exact in a double)
    m = (1 << M) - 1 if raw > emax else min(r, (1 << M) - 1)
    return (f.sign_bit if neg else 0) | ((e + bias) << M) | m


def _plena_encode(f: Format, x: float, scale_bits: int) -> int:
    if scale_bits == 0:  # an all-zero block: the emulator leaves its element bytes 0
        return 0
    x = _f32(x)
    sv = math.inf if scale_bits == 0xFF else 2.0 ** (scale_bits - 127)  # 2^128 overflows float32
    scaled = 0.0 if x == 0.0 else _f32(x / sv)
    return _plena_quantize(f, scaled) & 0xFF


def _plena_decode(f: Format, elem_bits: int, scale_bits: int) -> float:
    E, M, bias = f.exp, f.man, f.bias
    b = int(elem_bits) & ((1 << f.width) - 1)
    neg = bool(b & f.sign_bit)
    ef, m = (b >> M) & ((1 << E) - 1), b & ((1 << M) - 1)
    if ef == (1 << E) - 1:
        v = _NAN if m else math.inf
    elif ef == 0:
        v = math.ldexp(m, -bias - M)
    else:
        v = math.ldexp((1 << M) + m, ef - bias - M)
    v = -v if neg else v
    s = 0.0 if scale_bits == 0 else math.inf if scale_bits == 0xFF else math.ldexp(1.0, scale_bits - 127)
    return _f32(v * s)  # exact (a few significant bits times a power of two) or infinite/NaN


def mx_plena_encode_tensor(elem: Format, x, block: int = 8) -> tuple[np.ndarray, np.ndarray]:
    """(element bytes, scale bytes) of float32 values in blocks of `block`, by the PLENA rule
    (whole-array numpy twin of mx_scale / mx_encode with rule='plena')."""
    x = np.asarray(x, dtype=np.float32).reshape(-1, block)
    E, M, bias = elem.exp, elem.man, elem.bias
    emax, emin = (1 << E) - 2 - bias, -bias
    eps = np.float32(_PLENA_EPS)
    with np.errstate(all="ignore"):
        a = np.abs(x)
        amax = np.fmax.reduce(a, axis=1, initial=np.float32(0.0))  # NaN never wins, as in the emulator
        scale = np.where(amax == 0, 0, np.clip(_floor_log2_array(amax + eps), -127, 127) + 127).astype(np.int64)
        sv = np.exp2((scale - 127).astype(np.float32))[:, None].astype(np.float32)
        v = np.where(x == 0, np.float32(0.0), x / sv).astype(np.float32)
        av = np.abs(v)
        raw = np.where(np.isnan(av), 0, _floor_log2_array(av + eps))
        raw = np.where(v == 0, 0, raw)
        e = np.clip(raw, emin, emax)
        mant = (av / np.exp2(e.astype(np.float32))).astype(np.float32)
        y = np.where(e != emin, (mant - np.float32(1.0)) * np.float32(1 << M), mant * np.float32(1 << M))
        y = y.astype(np.float32)
        r = np.where(np.isnan(y) | (y <= 0), 0.0, np.floor(y.astype(np.float64) + 0.5))
        m = np.where(raw > emax, (1 << M) - 1, np.minimum(r, (1 << M) - 1)).astype(np.int64)
        code = ((np.signbit(v) & ~np.isnan(v)).astype(np.int64) << (E + M)) | ((e + bias) << M) | m
        code = np.where((v == 0) | (scale[:, None] == 0), 0, code)
    return code.astype(np.uint8).ravel(), scale.astype(np.uint8)


def _floor_log2_array(t: np.ndarray) -> np.ndarray:
    """_plena_floor_log2 over a float32 array of positive values."""
    t = np.asarray(t, np.float32)
    with np.errstate(all="ignore"):
        m, e = np.frexp(t.astype(np.float64))
        d = 1.0 - m
        lg = e.astype(np.float64) - (d + d * d / 2.0 + d * d * d / 3.0) / _LN2
        up = (d <= 2.0 ** -16) & (lg.astype(np.float32) >= e)
        out = np.where(up, e, e - 1).astype(np.int64)
    return np.where(np.isinf(t), INT32_MAX, out)


def mx_plena_decode_tensor(elem: Format, elems, scales, block: int = 8) -> np.ndarray:
    """float32 values of PLENA-rule MX data (whole-array twin of mx_decode with rule='plena')."""
    E, M, bias = elem.exp, elem.man, elem.bias
    b = np.asarray(elems, np.int64)
    ef, m = (b >> M) & ((1 << E) - 1), b & ((1 << M) - 1)
    mag = np.where(ef == 0, np.ldexp(m.astype(np.float64), -bias - M),
                   np.ldexp(((1 << M) + m).astype(np.float64), (ef - bias - M).astype(np.int32)))
    mag = np.where(ef == (1 << E) - 1, np.where(m == 0, np.inf, np.nan), mag)
    v = np.where(b & (1 << (E + M)), -mag, mag)
    s = np.repeat(np.asarray(scales, np.int64), block)
    sv = np.where(s == 0, 0.0, np.where(s == 0xFF, np.inf, np.ldexp(1.0, (s - 127).astype(np.int32))))
    with np.errstate(all="ignore"):
        return (v * sv).astype(np.float32)


# ---- math helpers ----------------------------------------------------------------------------------

def fmin(a: float, b: float) -> float:
    """NaN operands are ignored; min(-0, +0) = -0 (kc_fmin)."""
    if a != a:
        return b
    if b != b:
        return a
    if a < b:
        return a
    if b < a:
        return b
    return a if math.copysign(1.0, a) < 0 else b


def fmax(a: float, b: float) -> float:
    """NaN operands are ignored; max(-0, +0) = +0 (kc_fmax)."""
    if a != a:
        return b
    if b != b:
        return a
    if a > b:
        return a
    if b > a:
        return b
    return b if math.copysign(1.0, a) < 0 else a


def ilogb(x: float) -> int:
    """floor(log2|x|); 0 and NaN -> INT32_MIN, inf -> INT32_MAX (kc_ilogb)."""
    x = float(x)
    if x == 0.0 or math.isnan(x):
        return INT32_MIN
    if math.isinf(x):
        return INT32_MAX
    return math.frexp(x)[1] - 1
