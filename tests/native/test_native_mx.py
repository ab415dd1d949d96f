"""OCP microscaling (MX v1.0): the shared-scale rule by hand, element conversion, C == Python."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kcgen import numeric as N

from .common import cfmt

E4M3, E5M2, E2M1, E3M2, E2M3 = N.E4M3, N.E5M2, N.E2M1, N.E3M2, N.E2M3


def test_emax_of_ocp_element_formats():
    # exponent of the largest normal: E4M3 448 = 1.75*2^8, E5M2 57344 = 1.75*2^15,
    # E2M1 6 = 1.5*2^2, E3M2 28 = 1.75*2^4, E2M3 7.5 = 1.875*2^2
    assert [f.emax for f in (E4M3, E5M2, E2M1, E3M2, E2M3)] == [8, 15, 2, 4, 2]
    assert [f.max_value for f in (E4M3, E5M2, E2M1, E3M2, E2M3)] == [448.0, 57344.0, 6.0, 28.0, 7.5]


# (elem, amax, expected scale bits) from X = floor(log2(amax)) - emax, bits = X + 127, clamped
SCALES = [
    (E4M3, 448.0, 127), (E4M3, 449.0, 127), (E4M3, 512.0, 128), (E4M3, 511.9, 127),
    (E4M3, 1.0, 119), (E4M3, 0.75, 118), (E4M3, -3.0, 120),
    (E5M2, 1.0, 112), (E5M2, 57344.0, 127), (E5M2, 65536.0, 128),
    (E2M1, 6.0, 127), (E2M1, 7.9, 127), (E2M1, 8.0, 128), (E2M1, 2.9, 126),
    (E4M3, 0.0, 0), (E4M3, -0.0, 0),
    (E4M3, 2.0**200, 254), (E4M3, 2.0**-200, 0), (E4M3, 5e-324, 0),
    (E4M3, 2.0**-119, 0), (E4M3, 2.0**-120, 0), (E4M3, 2.0**-118, 1),
    (E4M3, float("nan"), 255), (E4M3, float("inf"), 255), (E4M3, -float("inf"), 255),
]


@pytest.mark.parametrize("elem,amax,bits", SCALES)
def test_mx_scale_by_hand(lib, ffi, elem, amax, bits):
    assert N.mx_scale(elem, amax) == bits
    assert lib.kc_mx_scale(cfmt(ffi, elem), amax) == bits


# (elem, x, scale bits, expected element bits, its element value; mx_decode = value * 2^(scale-127))
ELEMS = [
    (E4M3, 1.0, 119, 0x78, 256.0),        # 1 / 2^-8 = 256 = 1.0 * 2^8: exponent field 15
    (E4M3, 500.0, 127, 0x7E, 448.0),      # saturates to the largest normal
    (E4M3, -1e9, 127, 0xFE, -448.0),
    (E4M3, float("inf"), 127, 0x7E, 448.0),
    (E4M3, -3.0, 127, 0xC4, -3.0),
    (E4M3, float("nan"), 127, 0x7F, float("nan")),
    (E4M3, 2.0**-137, 127, 0x00, 0.0),    # below half the smallest subnormal
    (E4M3, 2.0**-9, 127, 0x01, 2.0**-9),  # smallest subnormal
    (E2M1, 1.25, 127, 0x2, 1.0),          # tie 1 | 1.5 -> even mantissa (1.0)
    (E2M1, 2.5, 127, 0x4, 2.0),           # tie 2 | 3 -> 2
    (E2M1, 5.0, 127, 0x6, 4.0),           # tie 4 | 6 -> 4
    (E2M1, 0.25, 127, 0x0, 0.0),          # tie 0 | 0.5 -> 0
    (E2M1, -0.26, 127, 0x9, -0.5),
    (E2M1, float("nan"), 127, 0x0, 0.0),  # no NaN in FP4: +0
    (E2M1, 100.0, 127, 0x7, 6.0),
]


@pytest.mark.parametrize("elem,x,scale,bits,value", ELEMS)
def test_mx_encode_decode_by_hand(lib, ffi, elem, x, scale, bits, value):
    f = cfmt(ffi, elem)
    assert N.mx_encode(elem, x, scale) == bits == lib.kc_mx_encode(f, x, scale)
    dec_py, dec_c = N.mx_decode(elem, bits, scale), lib.kc_mx_decode(f, bits, scale)
    want = value * 2.0 ** (scale - 127)
    if math.isnan(value):
        assert math.isnan(dec_py) and math.isnan(dec_c)
    else:
        assert dec_py == dec_c == want


def test_mx_nan_scale(lib, ffi):
    for elem in (E4M3, E2M1):
        f = cfmt(ffi, elem)
        assert math.isnan(N.mx_decode(elem, 0x00, 0xFF)) and math.isnan(lib.kc_mx_decode(f, 0x00, 0xFF))
        assert N.mx_encode(elem, 1.0, 0xFF) == lib.kc_mx_encode(f, 1.0, 0xFF) == (elem.nan_code & 0xFF)


def test_fp4_block_by_hand(lib, ffi):
    # amax 2.9: floor(log2 2.9) = 1, X = 1 - 2 = -1 -> bits 126; elements are x * 2 rounded to E2M1
    x = np.array([0.5, -1.0, 1.5, 0.3, 0.0, -0.25, 0.75, 2.9], np.float32)
    want_elems = [0x2, 0xC, 0x5, 0x1, 0x0, 0x9, 0x3, 0x7]
    want_vals = np.array([0.5, -1.0, 1.5, 0.25, 0.0, -0.25, 0.75, 3.0], np.float32)
    elems, scale = N.mx_encode_block(E2M1, x)
    assert scale == 126 and list(elems) == want_elems
    ce, cs = c_block_encode(lib, ffi, E2M1, x)
    assert cs == 126 and list(ce) == want_elems
    assert (N.mx_decode_block(E2M1, elems, scale) == want_vals).all()
    assert (c_block_decode(lib, ffi, E2M1, elems, scale) == want_vals).all()


def c_block_encode(lib, ffi, elem, x):
    x = np.ascontiguousarray(x, np.float32)
    out = np.empty(x.size, np.uint8)
    s = ffi.new("uint8_t *")
    lib.kc_mx_encode_block(cfmt(ffi, elem), ffi.from_buffer("float[]", x), x.size, ffi.from_buffer("uint8_t[]", out), s)
    return out, s[0]


def c_block_decode(lib, ffi, elem, elems, scale):
    elems = np.ascontiguousarray(elems, np.uint8)
    out = np.empty(elems.size, np.float32)
    lib.kc_mx_decode_block(cfmt(ffi, elem), ffi.from_buffer("uint8_t[]", elems), scale, elems.size,
                           ffi.from_buffer("float[]", out))
    return out


def test_block_with_nan_has_nan_scale(lib, ffi):
    x = np.array([1.0, np.nan, 3.0], np.float32)
    for elem in (E4M3, E2M1):
        e, s = N.mx_encode_block(elem, x)
        ce, cs = c_block_encode(lib, ffi, elem, x)
        assert s == cs == 0xFF and list(e) == list(ce) == [elem.nan_code & 0xFF] * 3
        assert np.isnan(N.mx_decode_block(elem, e, s)).all() and np.isnan(c_block_decode(lib, ffi, elem, ce, cs)).all()


ELEM_FORMATS = {"e4m3": E4M3, "e5m2": E5M2, "e2m1": E2M1, "e3m2": E3M2, "e2m3": E2M3,
                "e3m4": N.Format(3, 4), "u_e4m4": N.Format(4, 4, unsigned=True)}


@pytest.mark.parametrize("name", sorted(ELEM_FORMATS))
def test_blocks_c_equals_python_random(lib, ffi, name):
    elem = ELEM_FORMATS[name]
    rng = np.random.default_rng(len(name))
    for trial in range(150):
        n = [32, 8, 1, 17][trial % 4]
        x = (rng.standard_normal(n) * 2.0 ** rng.integers(-140, 130)).astype(np.float32)
        if trial % 10 == 0:
            x[rng.integers(0, n)] = 0.0
        e, s = N.mx_encode_block(elem, x)
        ce, cs = c_block_encode(lib, ffi, elem, x)
        assert s == cs and (e == ce).all()
        d = N.mx_decode_block(elem, e, s)
        cd = c_block_decode(lib, ffi, elem, ce, cs)
        assert (d.view(np.uint32) == cd.view(np.uint32)).all()
        if s not in (0, 254, 255) and not elem.unsigned:
            # within range the largest magnitude element lands in the top binade (OCP rule)
            i = int(np.argmax(np.abs(x)))
            assert 2.0 ** elem.emax <= abs(N.decode(elem, int(e[i]))) <= elem.max_value


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(x=st.floats(allow_nan=True, allow_infinity=True), scale=st.integers(0, 255),
       elem=st.sampled_from(sorted(ELEM_FORMATS)))
def test_mx_scalar_c_equals_python(lib, ffi, x, scale, elem):
    f = ELEM_FORMATS[elem]
    cf = cfmt(ffi, f)
    b = N.mx_encode(f, x, scale)
    assert b == lib.kc_mx_encode(cf, x, scale)
    dp, dc = N.mx_decode(f, b, scale), lib.kc_mx_decode(cf, b, scale)
    assert (math.isnan(dp) and math.isnan(dc)) or (dp == dc and math.copysign(1, dp) == math.copysign(1, dc))
    assert N.mx_scale(f, x) == lib.kc_mx_scale(cf, x)
    # mx_encode is encode(x / 2^(scale-127), saturate) with a single rounding
    if scale != 255 and math.isfinite(x):
        assert b == N.encode(f, x * 2.0 ** (127 - scale), saturate=True) or abs(x * 2.0 ** (127 - scale)) < 2.0**-1000
