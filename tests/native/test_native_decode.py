"""Decoding: every bit pattern of every small format, C == Python == ml_dtypes == the definitions."""
from __future__ import annotations

import numpy as np
import pytest

from kcgen import numeric as N

from . import oracle
from .common import CUSTOM, ML, WIDE, c_decode, ml_from_bits, same_float


@pytest.mark.parametrize("name", sorted(ML))
def test_decode_exhaustive_vs_ml_dtypes(lib, ffi, name):
    f, dtype = ML[name]
    codes = np.arange(1 << f.width, dtype=np.uint64)
    ref = ml_from_bits(codes, dtype).astype(np.float64)
    py = N.decode_array(f, codes)
    c = c_decode(lib, ffi, f, codes)
    assert same_float(c, ref).all(), codes[~same_float(c, ref)][:8]
    assert same_float(py, ref).all()
    scalar = np.array([N.decode(f, int(b)) for b in codes])
    assert same_float(scalar, ref).all()


@pytest.mark.parametrize("name", sorted(CUSTOM) + ["bf16", "e8m0", "e2m1"])
def test_decode_exhaustive_vs_definition(lib, ffi, name):
    f = CUSTOM[name] if name in CUSTOM else ML[name][0]
    codes = np.arange(1 << f.width, dtype=np.uint64)
    c = c_decode(lib, ffi, f, codes)
    py = N.decode_array(f, codes)
    assert same_float(c, py).all()
    for b in range(0, 1 << f.width, 1 if f.width <= 12 else 7):
        kind, v = oracle.classify(f, b)
        got = N.decode(f, b)
        if kind == "nan":
            assert np.isnan(got)
        elif kind == "inf":
            assert got == v * np.inf
        else:
            assert got == float(v) and (np.signbit(got) == bool(b >> (f.exp + f.man) & 1 and not f.unsigned))


@pytest.mark.parametrize("name", sorted(WIDE))
def test_decode_wide_c_equals_python(lib, ffi, name):
    f = WIDE[name]
    rng = np.random.default_rng(7)
    codes = rng.integers(0, 2**63, 20000, dtype=np.uint64) * np.uint64(2) + rng.integers(0, 2, 20000, dtype=np.uint64)
    codes &= np.uint64((1 << f.width) - 1) if f.width < 64 else np.uint64(2**64 - 1)
    # plus the interesting corners: zero, min subnormal, max finite, inf/NaN, with both signs
    corners = [0, 1, f.max_code, f.max_code + 1, f.nan_code, (1 << f.man), (1 << f.man) - 1]
    corners += [c | f.sign_bit for c in corners]
    codes = np.concatenate([codes, np.array(corners, dtype=np.uint64)])
    c = c_decode(lib, ffi, f, codes)
    py = N.decode_array(f, codes)
    scalar = np.array([N.decode(f, int(b)) for b in codes[:3000]])
    assert same_float(c, py).all()
    assert same_float(scalar, py[:3000]).all()


def test_decode_f32_f64_are_numpy(lib, ffi):
    rng = np.random.default_rng(3)
    b32 = rng.integers(0, 2**32, 100000, dtype=np.uint64)
    assert same_float(c_decode(lib, ffi, N.F32, b32), b32.astype(np.uint32).view(np.float32).astype(np.float64)).all()
    b64 = rng.integers(0, 2**63, 100000, dtype=np.uint64) * np.uint64(2) + np.uint64(1)
    assert same_float(c_decode(lib, ffi, N.F64, b64), b64.view(np.float64)).all()


def test_decode_rounds_formats_wider_than_double():
    # 53 mantissa bits: the pattern just above 1.0 is 1 + 2^-53, a tie between 1.0 and 1 + 2^-52 -> 1.0
    f = N.Format(10, 53)
    one = f.bias << 53
    assert N.decode(f, one) == 1.0
    assert N.decode(f, one + 1) == 1.0
    assert N.decode(f, one + 3) == 1.0 + 2 * 2.0**-52
    # exponent range beyond double: overflow to inf, underflow to (signed) zero
    g = N.Format(15, 48)
    assert N.decode(g, g.max_code) == np.inf
    assert N.decode(g, 1 | g.sign_bit) == 0.0 and np.signbit(N.decode(g, 1 | g.sign_bit))


@pytest.mark.parametrize("which,name,bits", [(0, "bf16", 16), (1, "fp16", 16), (2, "e4m3", 8), (3, "e5m2", 8)])
def test_fast_decoders_exhaustive(lib, ffi, which, name, bits):
    f, dtype = ML[name]
    codes = np.arange(1 << bits, dtype=np.uint32)
    out = np.empty(codes.shape, np.float32)
    lib.t_fast_decode_n(which, ffi.from_buffer("uint32_t[]", codes), ffi.from_buffer("float[]", out), codes.size)
    ref = ml_from_bits(codes, dtype).astype(np.float64)
    assert same_float(out.astype(np.float64), ref).all()
