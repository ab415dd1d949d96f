"""Encoding: C == Python == ml_dtypes (from float32, where ml_dtypes rounds once) == exact oracle."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from kcgen import numeric as N

from . import oracle
from .common import CUSTOM, ML, WIDE, all_midpoints, c_encode, ml_bits, same_code

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def check_f32_inputs(lib, ffi, f, dtype, x32, sat=False):
    """x32: float32 inputs (exact as float64, so ml_dtypes rounds them once)."""
    x = x32.astype(np.float64)
    c = c_encode(lib, ffi, f, x, sat)
    py = N.encode_array(f, x, sat)
    assert (c == py).all(), x[c != py][:8]
    if sat:
        lo = 0.0 if not f.unsigned else N.decode(f, 0)
        ref = ml_bits(np.where(np.isnan(x), x, np.clip(x, -f.max_value if not f.unsigned else lo, f.max_value))
                      .astype(np.float32), dtype)
    else:
        ref = ml_bits(x32, dtype)
    ok = same_code(f, c, ref)
    ok |= ~ok & ml_misrounds(f, x, c, ref, sat)
    if f.nonan:   # ml_dtypes turns NaN into a signed zero of its choosing; our rule is +0
        ok |= np.isnan(x) & (c == 0)
    assert ok.all(), list(zip(x[~ok][:8], c[~ok][:8], ref[~ok][:8]))


def ml_misrounds(f, x, c, ref, sat=False):
    """Where ml_dtypes and we differ, the exact oracle decides: True where ours is the correctly
    rounded code and ml_dtypes' is not (older ml_dtypes rounded E8M0 from a float32 subnormal up
    to 2^-126). No ml_dtypes version's behaviour is required: with a correct one this is all False."""
    out = np.zeros(np.shape(x), bool)
    for i in np.flatnonzero(~same_code(f, c, ref)):
        want = oracle.encode(f, float(x[i]), sat)
        out[i] = int(c[i]) == want and not same_code(f, np.array([want]), np.array([ref[i]]))[0]
    return out


def test_e8m0_from_a_float32_subnormal_rounds_to_nearest(lib, ffi):
    """1.25 * 2^-127 is nearer 2^-127 than 2^-126 (ml_dtypes before 0.5 gave 2^-126)."""
    x = np.float32(1.25 * 2.0**-127)
    assert N.encode(N.E8M0, float(x)) == 0 == oracle.encode(N.E8M0, float(x))
    assert int(c_encode(lib, ffi, N.E8M0, np.array([float(x)]))[0]) == 0


@pytest.mark.parametrize("name", sorted(ML))
@pytest.mark.parametrize("sat", [False, True])
def test_encode_representable_midpoints_and_neighbours(lib, ffi, name, sat):
    f, dtype = ML[name]
    v, mid = all_midpoints(f)
    big = np.array([f.max_value * 1.5, f.max_value * 2, f.max_value * 1e10, 3.0e38, np.inf, np.nan, 0.0, -0.0])
    top = np.array([f.max_value + (2.0 ** (f.emax - f.man)) / 2])  # the overflow tie
    base = np.concatenate([v, mid, big, top])
    base = base[np.abs(base) <= np.finfo(np.float32).max]
    x32 = base.astype(np.float32)
    x32 = np.concatenate([x32, np.nextafter(x32, np.float32(np.inf)), np.nextafter(x32, np.float32(-np.inf))])
    x32 = np.concatenate([x32, -x32, [np.float32(np.inf), np.float32(-np.inf)]])
    check_f32_inputs(lib, ffi, f, dtype, x32, sat)


@pytest.mark.parametrize("name", sorted(ML))
def test_encode_random_float32_patterns(lib, ffi, name):
    f, dtype = ML[name]
    rng = np.random.default_rng(11)
    x32 = rng.integers(0, 2**32, 200000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    # concentrate on the format's own exponent range too
    y = (rng.standard_normal(100000) * 2.0 ** rng.integers(-f.bias - f.man - 2, f.emax + 3, 100000))
    x32 = np.concatenate([x32, y.astype(np.float32)])
    check_f32_inputs(lib, ffi, f, dtype, x32, False)
    check_f32_inputs(lib, ffi, f, dtype, x32, True)


@pytest.mark.parametrize("name", sorted(ML) + sorted(CUSTOM))
def test_encode_float64_near_midpoints_vs_oracle(lib, ffi, name):
    """One double-ulp either side of each midpoint rounds to that side; the midpoint to even."""
    f = ML[name][0] if name in ML else CUSTOM[name]
    v, mid = all_midpoints(f)
    up = np.nextafter(mid, np.inf)
    dn = np.nextafter(mid, -np.inf)
    for x in (mid, up, dn, -mid, -up, -dn):
        c = c_encode(lib, ffi, f, x)
        assert (c == N.encode_array(f, x)).all()
        want = [oracle.encode(f, float(t)) for t in x[:: max(1, x.size // 300)]]
        assert [int(b) for b in c[:: max(1, x.size // 300)]] == want
    lo = c_encode(lib, ffi, f, dn)
    hi = c_encode(lib, ffi, f, up)
    sel = np.isfinite(dn)
    assert (N.decode_array(f, lo[sel]) <= mid[sel]).all() and (N.decode_array(f, hi[sel]) >= mid[sel]).all()


def test_float64_rounds_once(lib, ffi):
    """1 + 2^-8 + 2^-30 is just above the bf16 midpoint between 1 and 1 + 2^-7: rounding through
    float32 first (as older ml_dtypes did) lands on the midpoint and ties to even, 0x3F80."""
    x = 1.0 + 2.0**-8 + 2.0**-30
    assert N.encode(N.BF16, x) == 0x3F81 == oracle.encode(N.BF16, x)
    assert int(c_encode(lib, ffi, N.BF16, np.array([x]))[0]) == 0x3F81


float64s = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(min_value=-1e6, max_value=1e6),
    st.floats(min_value=-1e-3, max_value=1e-3),
    st.floats(min_value=-2.0**-120, max_value=2.0**-120),
    st.builds(lambda m, e: math.ldexp(m, e), st.integers(-(2**53), 2**53), st.integers(-1100, 140)),
)


@pytest.mark.parametrize("name", ["bf16", "fp16", "e4m3", "e5m2", "e8m0", "e2m1", "e3m4"])
@SETTINGS
@given(x=float64s, sat=st.booleans())
@example(x=0.0, sat=False)
@example(x=-0.0, sat=False)
@example(x=float("nan"), sat=True)
@example(x=-float("inf"), sat=True)
@example(x=5e-324, sat=False)
def test_encode_hypothesis_ml_formats(lib, ffi, name, x, sat):
    f, dtype = ML[name]
    c = int(c_encode(lib, ffi, f, np.array([x]), sat)[0])
    assert c == N.encode(f, x, sat) == int(N.encode_array(f, np.array([x]), sat)[0])
    assert c == oracle.encode(f, x, sat)
    x32 = np.float32(x) if abs(x) <= 3.4e38 or not math.isfinite(x) else None
    if (not sat and x32 is not None and (float(x32) == x or math.isnan(x)) and not (f.nonan and math.isnan(x))
):
        ref = ml_bits(np.array([x32]), dtype)
        assert (same_code(f, np.array([c]), ref) | ml_misrounds(f, np.array([x]), np.array([c]), ref, sat)).all()


@pytest.mark.parametrize("name", sorted(CUSTOM))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(x=float64s, sat=st.booleans())
def test_encode_hypothesis_custom(lib, ffi, name, x, sat):
    f = CUSTOM[name]
    c = int(c_encode(lib, ffi, f, np.array([x]), sat)[0])
    assert c == N.encode(f, x, sat) == int(N.encode_array(f, np.array([x]), sat)[0]) == oracle.encode(f, x, sat)


@pytest.mark.parametrize("name", sorted(CUSTOM) + sorted(ML))
def test_custom_random_doubles_and_round_trip(lib, ffi, name):
    f = CUSTOM[name] if name in CUSTOM else ML[name][0]
    rng = np.random.default_rng(5)
    x = rng.standard_normal(50000) * 2.0 ** rng.integers(-f.bias - f.man - 4, f.emax + 4, 50000)
    for sat in (False, True):
        assert (c_encode(lib, ffi, f, x, sat) == N.encode_array(f, x, sat)).all()
    # encode(decode(b)) == b for every pattern whose value is a number or canonical infinity
    codes = np.arange(1 << f.width, dtype=np.uint64)
    vals = N.decode_array(f, codes)
    keep = ~np.isnan(vals)
    if f.has_inf:
        keep &= ~np.isinf(vals) | ((codes & np.uint64((1 << (f.exp + f.man)) - 1)) == np.uint64(f.inf_code))
    back = c_encode(lib, ffi, f, vals[keep])
    assert (back == codes[keep]).all(), codes[keep][back != codes[keep]][:8]
    assert (N.encode_array(f, vals[keep]) == codes[keep]).all()
    nan = c_encode(lib, ffi, f, vals[np.isnan(vals)])
    assert (nan == np.uint64(f.nan_code)).all()


@pytest.mark.parametrize("name", sorted(WIDE))
def test_wide_formats_c_equals_python(lib, ffi, name):
    f = WIDE[name]
    rng = np.random.default_rng(9)
    x = rng.integers(0, 2**63, 30000, dtype=np.uint64).view(np.float64) * rng.choice([-1.0, 1.0], 30000)
    x = np.concatenate([x, rng.standard_normal(30000) * 2.0 ** rng.integers(-1074, 1023, 30000)])
    for sat in (False, True):
        c = c_encode(lib, ffi, f, x, sat)
        assert (c == N.encode_array(f, x, sat)).all()
        assert [int(b) for b in c[:1500]] == [N.encode(f, float(t), sat) for t in x[:1500]]


def test_f32_and_f64_descriptions_match_ieee(lib, ffi):
    rng = np.random.default_rng(1)
    x = rng.integers(0, 2**64 - 1, 200000, dtype=np.uint64).view(np.float64)
    x = x[~np.isnan(x)]
    x = np.concatenate([x, rng.standard_normal(100000) * 2.0 ** rng.integers(-160, 130, 100000)])
    with np.errstate(over="ignore"):
        ref = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    assert (c_encode(lib, ffi, N.F32, x) == ref).all()
    assert (N.encode_array(N.F32, x) == ref).all()
    assert (c_encode(lib, ffi, N.F64, x) == x.view(np.uint64)).all()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(v=st.one_of(st.integers(-(2**63), 2**63 - 1), st.integers(-70000, 70000)), sat=st.booleans(),
       name=st.sampled_from(["bf16", "fp16", "e4m3", "e8m0", "e2m1", "e3m2_ieee", "u_e4m4", "f32"]))
def test_encode_integers_exactly(lib, ffi, v, sat, name):
    f = {**{k: m[0] for k, m in ML.items()}, **CUSTOM, **WIDE}[name]
    c = lib.kc_encode_i64(ffi.new("kc_fmt *", [f.exp, f.man, f.bias, f.finite, f.unsigned, f.nonan]), v, sat)
    assert c == N.encode(f, v, sat)
    if v >= 0:
        cu = lib.kc_encode_u64(ffi.new("kc_fmt *", [f.exp, f.man, f.bias, f.finite, f.unsigned, f.nonan]), v, sat)
        assert cu == c
    if f.width <= 16:
        assert c == oracle.encode(f, v, sat)


def test_integer_encode_avoids_double_rounding(lib, ffi):
    # 2^60 + 2^52 + 1 -> bf16: just above the midpoint of 2^60 and 2^60 + 2^53; via double it is a tie
    v = 2**60 + 2**52 + 1
    assert float(v) == 2.0**60 + 2.0**52
    assert N.encode(N.BF16, v) == N.encode(N.BF16, 2.0**60) + 1
    assert N.encode(N.BF16, float(v)) == N.encode(N.BF16, 2.0**60)
    assert lib.kc_encode_u64(ffi.new("kc_fmt *", [8, 7, 127, 0, 0, 0]), v, 0) == N.encode(N.BF16, v)
