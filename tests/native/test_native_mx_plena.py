"""The PLENA emulator's MX rule (mx ... rule=plena), against values worked out by hand from its source.

AICrossSim PLENA_Simulator, Feb 2026, behavioral_simulator/lib/quantize (unchanged from 2026-01-28 to
the 2026-02-15 rename), read for these rules:
- scale (tensor.rs into_bytes): amax = max |x| folded from 0.0 (NaN never wins); amax == 0 -> scale
  byte 0 and element bytes 0; otherwise k = floor(log2(f32(amax + 1e-9))) clamped to [-127, 127],
  byte k + 127, scale 2^k;
- element (tensor.rs minifloat_ieee_quantize_hardware, on f32 v = x / 2^k): v == 0 -> 0; e =
  clamp(floor(log2(|v| + 1e-9)), -7, 7); e == -7 is the "subnormal" field 0 with m = round(|v| 2^7 * 8),
  otherwise m = round((|v| / 2^e - 1) * 8); round is half away from zero, m is clamped to [0, 7] (no
  carry into the exponent); floor(log2) above 7 forces m = 7; NaN goes through as e = 0, m = 0;
- decoding (dtype.rs cast to f32): field 0 is m/8 * 2^-7, field 15 is Inf (m = 0) or NaN, others
  (1 + m/8) 2^(field - 7); scale byte 0 is 0.0 and 255 infinity; the product is a float32.
The C runtime and its Python twin must give these values, and agree with each other bit for bit."""
from __future__ import annotations

import ctypes
import ctypes.util
import math

import numpy as np
import pytest

from kcgen import numeric as N

from .common import cfmt

E4M3 = N.Format(4, 3)  # the element as the emulator decodes it: exponent 15 is Inf/NaN
NAN, INF = float("nan"), float("inf")


def scale_by_rule(amax_log2_floor: int) -> int:
    return max(-127, min(127, amax_log2_floor)) + 127


# (amax, expected scale byte, the rule's arithmetic)
SCALES = [
    (1.0, scale_by_rule(0), "log2(1 + 1e-9 -> 1.0f) = 0"),
    (1.9921875, scale_by_rule(0), "bf16 below 2: log2 = 0.994"),
    (2.0, scale_by_rule(1), "a power of two is its own scale (OCP: 2^(1 - 8))"),
    (4.0, scale_by_rule(2), "4 -> 2^2"),
    (240.0, scale_by_rule(7), "log2 240 = 7.9"),
    (0.75, scale_by_rule(-1), "log2 0.75 = -0.4"),
    (-3.0, scale_by_rule(1), "|amax|"),
    (7.99999952316284, scale_by_rule(3), "8(1 - 2^-24): log2 = 3 - 8.6e-8 rounds to 3.0f"),
    (1.99999988079071, scale_by_rule(0), "2(1 - 2^-24): log2 = 1 - 8.6e-8 rounds to 1 - 2^-24"),
    (2.0 ** -30, scale_by_rule(-29), "2^-30 + 1e-9 = 1.93e-9: log2 = -28.95"),
    (2.0 ** -40, scale_by_rule(-30), "1e-9 + 9e-13: log2 = -29.9"),
    (3e38, scale_by_rule(127), "log2 3e38 = 127.8"),
    (2.0 ** 200, scale_by_rule(127), "f32(2^200) = inf: floor(log2) saturates, clamped to 127"),
    (INF, scale_by_rule(127), "inf: clamped to 127"),
    (0.0, 0, "all-zero block"),
    (-0.0, 0, "all-zero block"),
    (NAN, 0, "NaN never becomes amax (max folded from 0.0)"),
]


@pytest.mark.parametrize("amax,bits,why", SCALES, ids=[s[2] for s in SCALES])
def test_scale_by_hand(lib, ffi, amax, bits, why):
    assert N.mx_scale(E4M3, amax, "plena") == bits
    assert lib.kc_mx_plena_scale(cfmt(ffi, E4M3), amax) == bits


def elem(sign: int, field: int, m: int) -> int:
    return sign << 7 | field << 3 | m


# (x under scale 1 (byte 127), expected element byte, the rule's arithmetic)
ELEMS = [
    (1.0, elem(0, 7, 0), "e = 0, (1 - 1) * 8 = 0"),
    (1.0625, elem(0, 7, 1), "(1.0625 - 1) * 8 = 0.5: half away from zero -> 1 (nearest even: 0)"),
    (1.1875, elem(0, 7, 2), "1.5 -> 2"),
    (-1.0625, elem(1, 7, 1), "the sign is apart: -0.5 is not rounded"),
    (1.9375, elem(0, 7, 7), "7.5 -> 8, clamped to 7 without carry: 1.875, not 2"),
    (2.0, elem(0, 8, 0), "e = 1"),
    (-3.0, elem(1, 8, 4), "e = 1, (1.5 - 1) * 8 = 4"),
    (240.0, elem(0, 14, 7), "largest finite: (1 + 7/8) 2^7"),
    (248.0, elem(0, 14, 7), "(1.9375 - 1) * 8 = 7.5 -> 8, clamped"),
    (256.0, elem(0, 14, 7), "floor(log2) = 8 > 7: saturates to 240"),
    (1e6, elem(0, 14, 7), "saturates"),
    (-1e6, elem(1, 14, 7), "saturates, negative"),
    (INF, elem(0, 14, 7), "inf saturates like any large value"),
    (-INF, elem(1, 14, 7), ""),
    (NAN, elem(0, 7, 0), "log2(NaN) casts to e = 0, round(NaN) to m = 0: 1.0"),
    (0.0, 0, "zero"),
    (-0.0, 0, "a zero input is 0x00 whatever its sign"),
    (2.0 ** -6, elem(0, 1, 0), "smallest normal field: e = -6"),
    (2.0 ** -7, elem(0, 0, 7), "e = -7 is field 0: 2^-7 * 2^7 * 8 = 8, clamped to 7"),
    (0.01, elem(0, 0, 7), "[2^-7, 2^-6) all land on field 0, m = 7"),
    (2.0 ** -8, elem(0, 0, 4), "field 0: 2^-8 * 2^7 * 8 = 4"),
    (3 * 2.0 ** -11, elem(0, 0, 2), "field 0: 1.5 -> 2"),
    (2.0 ** -11, elem(0, 0, 1), "field 0: 0.5 -> 1 (half away from zero)"),
    (2.0 ** -12, 0, "field 0: 0.25 -> 0"),
    (-(2.0 ** -12), elem(1, 0, 0), "a negative value rounding to 0 keeps its sign: 0x80"),
]


@pytest.mark.parametrize("x,bits,why", ELEMS, ids=[f"{e[0]!r}" for e in ELEMS])
def test_element_by_hand(lib, ffi, x, bits, why):
    assert N.mx_encode(E4M3, x, 127, "plena") == bits
    assert lib.kc_mx_plena_encode(cfmt(ffi, E4M3), x, 127) == bits


def test_element_under_other_scales(lib, ffi):
    # x is divided by the scale 2^(byte - 127) first: 6 under 2^2 is 1.5 -> 0x3c
    for x, scale, bits in ((6.0, 129, elem(0, 7, 4)), (-0.375, 125, elem(1, 7, 4)), (5.0, 0, 0)):
        assert N.mx_encode(E4M3, x, scale, "plena") == bits
        assert lib.kc_mx_plena_encode(cfmt(ffi, E4M3), x, scale) == bits


# (element byte, scale byte, value)
DECODES = [
    (elem(0, 0, 7), 127, 7 / 8 * 2.0 ** -7),     # field 0 is m/8 * 2^-7 (IEEE's would be 2^-6)
    (elem(0, 0, 1), 127, 2.0 ** -10),
    (elem(1, 0, 4), 127, -(2.0 ** -8)),
    (elem(0, 1, 0), 127, 2.0 ** -6),
    (elem(0, 7, 0), 127, 1.0),
    (elem(0, 14, 7), 127, 240.0),                 # largest finite (OCP E4M3FN: 448)
    (elem(0, 15, 0), 127, INF),                   # field 15 is Inf / NaN
    (elem(1, 15, 0), 127, -INF),
    (elem(0, 15, 1), 127, NAN),
    (elem(0, 15, 7), 127, NAN),                   # OCP's 448 pattern 0x7e is NaN here
    (elem(0, 15, 6), 127, NAN),
    (elem(1, 0, 0), 127, -0.0),
    (elem(0, 7, 0), 0, 0.0),                      # scale byte 0 decodes to 0.0
    (elem(0, 15, 0), 0, NAN),                     # inf * 0
    (elem(0, 7, 0), 255, INF),                    # scale byte 255 is infinity
    (0, 255, NAN),                                # 0 * inf
    (elem(0, 7, 0), 254, 2.0 ** 127),
    (elem(0, 14, 7), 254, INF),                   # 240 * 2^127 overflows float32
    (elem(0, 0, 1), 1, 2.0 ** -136),              # float32 subnormal, exact
    (elem(0, 8, 4), 129, 12.0),                   # 3 * 2^2
]


@pytest.mark.parametrize("b,s,value", DECODES)
def test_decode_by_hand(lib, ffi, b, s, value):
    for got in (N.mx_decode(E4M3, b, s, "plena"), lib.kc_mx_plena_decode(cfmt(ffi, E4M3), b, s)):
        if math.isnan(value):
            assert math.isnan(got)
        else:
            assert got == value and math.copysign(1, got) == math.copysign(1, value)


def test_blocks_by_hand():
    # amax 7.9: floor(log2 7.9) = 2, scale byte 129 (x / 4); then element by element
    x = [1.0, 2.0, 3.0, 4.0, -5.0, 0.5, 0.0, 7.9]
    elems, scale = N.mx_encode_block(E4M3, x, "plena")
    assert scale == 129
    # 0.25 0.5 0.75 1.0 -1.25 0.125 0 1.975 (f32 7.9 / 4: 7.8 -> 8 -> clamp 7)
    assert list(elems) == [elem(0, 5, 0), elem(0, 6, 0), elem(0, 6, 4), elem(0, 7, 0), elem(1, 7, 2),
                           elem(0, 4, 0), 0, elem(0, 7, 7)]
    assert N.mx_encode_block(E4M3, [0.0] * 8, "plena")[1] == 0
    e, s = N.mx_encode_block(E4M3, [0.0, NAN, -0.0, 0, 0, 0, 0, 0], "plena")   # NaN does not count
    assert s == 0 and not e.any()
    e, s = N.mx_encode_block(E4M3, [1.0, NAN, 0, 0, 0, 0, 0, 0], "plena")
    assert s == 127 and list(e[:2]) == [elem(0, 7, 0), elem(0, 7, 0)]
    e, s = N.mx_encode_block(E4M3, [INF, 1.0, 0, 0, 0, 0, 0, 0], "plena")      # 1 / 2^127 rounds to 0
    assert s == 254 and list(e[:2]) == [elem(0, 14, 7), 0]


def _f32_samples(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(n) * np.exp2(rng.integers(-45, 45, n))).astype(np.float32)
    near = np.exp2(rng.integers(-40, 40, n // 4)).astype(np.float32) * np.float32(1 - 2.0 ** -24)
    special = np.array([0, -0.0, np.inf, -np.inf, np.nan, 2.0 ** -7, 2.0 ** -6, 240, 248, 256], np.float32)
    return np.concatenate([x, near, -near, special]).astype(np.float32)


def test_c_equals_python_on_every_decode(lib, ffi):
    f = cfmt(ffi, E4M3)
    for s in range(256):
        for b in range(256):
            want, got = N.mx_decode(E4M3, b, s, "plena"), lib.kc_mx_plena_decode(f, b, s)
            assert (math.isnan(want) and math.isnan(got)) or (want == got and
                                                              math.copysign(1, want) == math.copysign(1, got)), (b, s)


def test_c_equals_python_on_encodes(lib, ffi):
    f = cfmt(ffi, E4M3)
    xs = _f32_samples(4000, 1)
    for x in xs:
        s = N.mx_scale(E4M3, float(x), "plena")
        assert lib.kc_mx_plena_scale(f, float(x)) == s, x
        for scale in (s, 127, 120, 140):
            assert lib.kc_mx_plena_encode(f, float(x), scale) == N.mx_encode(E4M3, float(x), scale, "plena"), (x, scale)


def test_whole_tensor_twins_equal_the_scalar_rule():
    xs = _f32_samples(8000, 2)
    xs = xs[:xs.size - xs.size % 8]
    xs[16:24] = 0.0
    xs[40:48] = np.nan
    elems, scales = N.mx_plena_encode_tensor(E4M3, xs)
    for b in range(xs.size // 8):
        e, s = N.mx_encode_block(E4M3, xs[8 * b:8 * b + 8], "plena")
        assert s == scales[b] and (e == elems[8 * b:8 * b + 8]).all(), b
    got = N.mx_plena_decode_tensor(E4M3, elems, scales)
    want = np.array([N.mx_decode(E4M3, int(b), int(s), "plena") for b, s in zip(elems, np.repeat(scales, 8))],
                    np.float32)
    np.testing.assert_array_equal(got, want)


def test_floor_log2_matches_the_c_librarys_log2f():
    # the emulator takes floor(log2f(t)); our libm-free floor_log2 must agree, above all just below powers of two
    path = ctypes.util.find_library("m")
    if path is None:
        pytest.skip("no C math library to compare with")
    libm = ctypes.CDLL(path)
    libm.log2f.restype, libm.log2f.argtypes = ctypes.c_float, [ctypes.c_float]
    rng = np.random.default_rng(3)
    ks = rng.integers(-29, 128, 3000)
    ts = [float(np.float32(2.0 ** int(k) * (1 - int(j) * 2.0 ** -24))) for k, j in zip(ks, rng.integers(1, 300, 3000))]
    ts += [float(v) for v in np.abs(_f32_samples(3000, 4)) if np.isfinite(v) and v >= 1e-9]
    for t in ts:
        if 0 < t < math.inf:
            assert N._plena_floor_log2(t) == math.floor(libm.log2f(t)), t


def test_about_a_quarter_of_ocp_images_are_not_plena_images():
    # the finding that motivated the rule: OCP E4M3FN element bytes with exponent field 15 (256..448
    # times the scale) decode to Inf/NaN on the emulator
    rng = np.random.default_rng(5)
    x = rng.standard_normal(8192).astype(np.float32)
    ocp = np.concatenate([N.mx_encode_block(N.E4M3, x[i:i + 8])[0] for i in range(0, x.size, 8)])
    field15 = ((ocp >> 3) & 15) == 15
    assert 0.15 < field15.mean() < 0.35
    plena, _ = N.mx_plena_encode_tensor(E4M3, x)
    assert not (((plena >> 3) & 15) == 15).any()
