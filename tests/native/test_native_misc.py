"""float -> integer, min/max, ilogb, the trap record, format constants, and a -Werror build."""
from __future__ import annotations

import math
import shutil
import subprocess
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kcgen import numeric as N

from .common import cfmt
from .conftest import NATIVE

NAN, INF = float("nan"), float("inf")

F2I = [  # (x, width, signed, expected)
    (NAN, 8, True, 0), (NAN, 8, False, 0), (INF, 8, True, 127), (-INF, 8, True, -128),
    (127.9, 8, True, 127), (128.0, 8, True, 127), (1e30, 8, True, 127),
    (-128.9, 8, True, -128), (-129.0, 8, True, -128), (-0.9, 8, True, 0), (-1.0, 8, True, -1),
    (2.5, 8, True, 2), (-2.5, 8, True, -2), (-0.0, 8, True, 0),
    (-5.0, 8, False, 0), (-0.5, 8, False, 0), (255.9, 8, False, 255), (256.0, 8, False, 255), (INF, 8, False, 255),
    (2.0**63, 64, True, 2**63 - 1), (-(2.0**63), 64, True, -(2**63)), (-1e300, 64, True, -(2**63)),
    (2.0**63 - 1024, 64, True, 2**63 - 1024), (2.0**64, 64, False, 2**64 - 1), (2.0**64 - 2048, 64, False, 2**64 - 2048),
    (1.0, 1, True, 0), (-1.0, 1, True, -1), (-7.0, 1, True, -1), (5.0, 1, False, 1), (2**31 + 0.5, 32, True, 2**31 - 1),
    (-(2**31) - 0.5, 32, True, -(2**31)), (4294967295.7, 32, False, 4294967295),
]


@pytest.mark.parametrize("x,width,signed,want", F2I)
def test_f2i_by_hand(lib, x, width, signed, want):
    assert N.f2i(x, width, signed) == want
    assert (lib.kc_f2i(x, width) if signed else lib.kc_f2u(x, width)) == want


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(x=st.one_of(st.floats(), st.floats(-(2.0**66), 2.0**66)), width=st.integers(1, 64), signed=st.booleans())
def test_f2i_c_equals_python(lib, x, width, signed):
    got = lib.kc_f2i(x, width) if signed else lib.kc_f2u(x, width)
    assert got == N.f2i(x, width, signed)
    if not math.isnan(x):
        lo, hi = (-(2 ** (width - 1)), 2 ** (width - 1) - 1) if signed else (0, 2**width - 1)
        assert got == min(max(math.trunc(x) if math.isfinite(x) else (hi if x > 0 else lo), lo), hi)


def bits(x):
    return np.float64(x).view(np.uint64)


MINMAX = [(1.0, 2.0, 1.0, 2.0), (NAN, 2.0, 2.0, 2.0), (2.0, NAN, 2.0, 2.0), (-0.0, 0.0, -0.0, 0.0),
          (0.0, -0.0, -0.0, 0.0), (-INF, INF, -INF, INF), (NAN, NAN, NAN, NAN)]


@pytest.mark.parametrize("a,b,lo,hi", MINMAX)
def test_min_max(lib, a, b, lo, hi):
    for got, want in ((lib.kc_fmin(a, b), lo), (N.fmin(a, b), lo), (lib.kc_fminf(a, b), lo),
                      (lib.kc_fmax(a, b), hi), (N.fmax(a, b), hi), (lib.kc_fmaxf(a, b), hi)):
        assert (math.isnan(got) and math.isnan(want)) or bits(got) == bits(want)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(x=st.floats(allow_nan=True))
def test_ilogb(lib, x):
    assert lib.kc_ilogb(x) == N.ilogb(x)
    if x != 0 and math.isfinite(x):
        e = N.ilogb(x)
        assert Fraction(2) ** e <= abs(Fraction(x)) < Fraction(2) ** (e + 1)


def test_ilogb_edges(lib):
    assert [lib.kc_ilogb(v) for v in (0.0, -0.0, NAN, INF, -INF, 5e-324, 1.0, 0.75)] == \
        [-(2**31), -(2**31), -(2**31), 2**31 - 1, 2**31 - 1, -1074, 0, -1]


def test_trap_first_wins(lib, ffi):
    t = ffi.new("kc_trap *")
    lib.kc_trap_clear(t)
    assert t.kind == 0
    assert lib.t_trap(t, 4, 0x40, b"misaligned load at", 3) == 4
    assert lib.t_trap(t, 2, 0x99, b"second", 1) == 4
    assert t.pc == 0x40 and ffi.string(t.message) == b"misaligned load at #3"
    lib.kc_trap_clear(t)
    lib.t_trap(t, 7, 1, b"x" * 400, 12)
    assert t.kind == 7 and len(ffi.string(t.message)) == 159


def test_format_constants_match(lib, ffi):
    for f in (N.BF16, N.FP16, N.F32, N.F64, N.E4M3, N.E5M2, N.E8M0, N.E3M2, N.E2M3, N.E2M1):
        cf = cfmt(ffi, f)
        assert lib.kc_fmt_width(cf) == f.width
        assert lib.kc_fmt_emax(cf) == f.emax
        assert lib.kc_fmt_max_code(cf) == f.max_code
        assert lib.kc_fmt_nan_code(cf) == f.nan_code
    assert (N.E8M0.width, N.E8M0.max_value, N.decode(N.E8M0, 0), N.E8M0.nan_code) == (8, 2.0**127, 2.0**-127, 0xFF)
    assert N.encode(N.E8M0, 0.0) == 0xFF and N.encode(N.E8M0, 0.0, saturate=True) == 0x00


USE_ALL = r"""
#include "kc_numeric.h"
#include "kc_trap.h"
#include <stdio.h>
int main(void)
{
    static const kc_fmt fs[] = {KC_FMT_BF16, KC_FMT_FP16, KC_FMT_F32, KC_FMT_F64, KC_FMT_E4M3, KC_FMT_E5M2,
                                KC_FMT_E8M0, KC_FMT_E3M2, KC_FMT_E2M3, KC_FMT_E2M1};
    float x[32], back[32];
    uint8_t el[32], sc;
    kc_trap t;
    double acc = 0;
    uint64_t h = 0;
    int i;
    for (i = 0; i < 32; i++) x[i] = (float)(i - 13) * 0.37f;
    for (i = 0; i < 10; i++) {
        h += kc_encode(&fs[i], 1.3, 0) + kc_encode_i64(&fs[i], -77, 1) + kc_encode_u64(&fs[i], 99, 0);
        acc += kc_decode(&fs[i], 0x3c) + (double)kc_fmt_width(&fs[i]) + kc_fmt_has_inf(&fs[i]);
        acc += (double)kc_fmt_inf_code(&fs[i]) + kc_fmt_default_bias(fs[i].exp);
    }
    kc_mx_encode_block(&fs[4], x, 32, el, &sc);
    kc_mx_decode_block(&fs[4], el, sc, 32, back);
    acc += back[3] + kc_mx_decode(&fs[9], 3, 120) + kc_mx_encode(&fs[9], 2.5, 127) + kc_mx_scale(&fs[5], 9.0);
    acc += kc_mx_plena_decode(&fs[0], 0x38, 127) + kc_mx_plena_encode(&fs[0], 1.5, 127) + kc_mx_plena_scale(&fs[0], 3.0);
    acc += kc_bf16_to_f32(kc_f32_to_bf16(1.5f)) + kc_fp16_to_f32(kc_f32_to_fp16(2.5f));
    acc += kc_e4m3_to_f32(kc_f32_to_e4m3(3.5f, 1)) + kc_e5m2_to_f32(kc_f32_to_e5m2(4.5f, 0));
    acc += (double)kc_f2i(-3.7, 8) + (double)kc_f2u(3.7, 8) + kc_fmin(1, 2) + kc_fmax(1, 2);
    acc += kc_fminf(1, 2) + kc_fmaxf(1, 2) + kc_ilogb(10.0);
    kc_trap_clear(&t);
    kc_trap_set(&t, KC_TRAP_MEMORY, 0x10, "address %u out of range", 70000u);
    printf("%g %llu %d %s\n", acc, (unsigned long long)h, t.kind, t.message);
    return 0;
}
"""


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not installed")
def test_headers_compile_warning_free(tmp_path):
    hdr = tmp_path / "hdr.c"
    hdr.write_text('#include "kc_numeric.h"\n#include "kc_trap.h"\n')
    use = tmp_path / "use.c"
    use.write_text(USE_ALL)
    flags = ["-O2", "-Wall", "-Wextra", "-Werror", "-std=c99", "-I", str(NATIVE)]
    subprocess.run(["gcc", *flags, "-c", str(hdr), "-o", str(tmp_path / "hdr.o")], check=True)
    subprocess.run(["gcc", *flags, "-pedantic", "-Wshadow", "-Wconversion", "-Wno-sign-conversion",
                    "-c", str(hdr), "-o", str(tmp_path / "hdr2.o")], check=True)
    # every function instantiated, linked without libm
    subprocess.run(["gcc", *flags, str(use), "-o", str(tmp_path / "use")], check=True)
    out = subprocess.run([str(tmp_path / "use")], check=True, capture_output=True, text=True).stdout
    assert out.split()[2] == "3" and "address 70000 out of range" in out
