"""The ieee_* builtins, differentially: the C simulator's (native/kc_ieee.h: the host's IEEE
arithmetic under the rounding mode, an exact round-to-odd path for RMM and near underflow) against
the Python reference's (kcgen/sim/ieee.py: exact rationals rounded once), on random and edge
operands in every rounding mode, and both against numpy (the host's float32/float64) for
round-to-nearest-even values and the NV/DZ/OF/UF flags. The random-program tests against
qemu-user are in tests/targets/test_boom.py and test_coral.py."""

from __future__ import annotations

import ctypes
import random
import struct
import subprocess
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from kcgen.sim import ieee
from kcgen.sim.build import CFLAGS, NATIVE

OPS = ["add", "sub", "mul", "div", "sqrt", "fma"]
NV, DZ, OF, UF, NX = 16, 8, 4, 2, 1

WRAPPER = r"""
#include "kc_ieee.h"
uint64_t t_op(int op, uint64_t a, uint64_t b, uint64_t c, int w, unsigned m, unsigned *fl) { return kc_ieee_op(op, a, b, c, w, m, fl); }
uint64_t t_minmax(uint64_t a, uint64_t b, int w, int mx, unsigned *fl) { return kc_ie_min_max(a, b, w, mx, fl); }
int t_cmp(uint64_t a, uint64_t b, int w, int kind, unsigned *fl) { return kc_ie_compare(a, b, w, kind, fl); }
uint64_t t_to_int(uint64_t a, int w, unsigned m, int bits, int sg, unsigned *fl) { return kc_ie_to_int(a, w, m, bits, sg, fl); }
uint64_t t_from_int(uint64_t mag, int neg, int w, unsigned m, unsigned *fl) { return kc_ie_from_int(mag, neg, w, m, fl); }
uint64_t t_convert(uint64_t a, int from, int to, unsigned m, unsigned *fl) { return kc_ie_convert(a, from, to, m, fl); }
"""


def _has_fma() -> bool:
    try:
        return " fma " in Path("/proc/cpuinfo").read_text() and " avx2 " in Path("/proc/cpuinfo").read_text()
    except OSError:
        return False


# as the simulator builds its run loop: baseline x86-64, and x86-64-v3 where the CPU has it (there
# the binary64 fast path checks exactness with fma)
@pytest.fixture(scope="module", params=["baseline", "x86-64-v3"])
def lib(request, tmp_path_factory):
    extra = []
    if request.param == "x86-64-v3":
        if not _has_fma():
            pytest.skip("the CPU has no x86-64-v3 (FMA, AVX2)")
        extra = ["-march=x86-64-v3"]
    d = tmp_path_factory.mktemp("ieee")
    (d / "w.c").write_text(WRAPPER)
    so = d / "w.so"
    done = subprocess.run(["gcc", *CFLAGS, *extra, "-I", str(NATIVE), "-o", str(so), str(d / "w.c"), "-lm"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    L = ctypes.CDLL(str(so))
    u64, i, u, pu = ctypes.c_uint64, ctypes.c_int, ctypes.c_uint, ctypes.POINTER(ctypes.c_uint)
    L.t_op.argtypes, L.t_op.restype = [i, u64, u64, u64, i, u, pu], u64
    L.t_minmax.argtypes, L.t_minmax.restype = [u64, u64, i, i, pu], u64
    L.t_cmp.argtypes, L.t_cmp.restype = [u64, u64, i, i, pu], i
    L.t_to_int.argtypes, L.t_to_int.restype = [u64, i, u, i, i, pu], u64
    L.t_from_int.argtypes, L.t_from_int.restype = [u64, i, i, u, pu], u64
    L.t_convert.argtypes, L.t_convert.restype = [u64, i, i, u, pu], u64
    return L


def c_call(fn, *args, accrued: int = 0):
    """(result, flags) of a C builtin; `accrued`: the flags accrued before (the host's flag
    register is then cleared only of others), which must come out again OR-ed with the call's."""
    fl = ctypes.c_uint(accrued)
    r = fn(*args, ctypes.byref(fl))
    return r, fl.value


def edges(w: int) -> list[int]:
    """Operands where rounding is delicate: zeros, subnormals, the normal boundary, the largest
    finite, infinities, quiet and signalling NaNs with payloads, ones and their neighbours."""
    f = ieee.FMT[w]
    top = f.expmask | f.manmask
    pos = [0, 1, 2, 3, f.manmask, f.manmask + 1, f.manmask + 2, 1 << (f.p - 1) | 1, f.expmask - 1, f.expmask - 2,
           f.expmask, f.expmask | 1, f.expmask | f.quiet, f.expmask | f.quiet | 0x1234, f.expmask | 0x55,
           f.bias << (f.p - 1), (f.bias << (f.p - 1)) | 1, (f.bias << (f.p - 1)) - 1, ((f.bias + 1) << (f.p - 1)) | 1,
           ((f.bias - 1) << (f.p - 1)) | f.manmask, ((f.bias + f.p) << (f.p - 1)) | 1, top]
    return pos + [b | f.sign for b in pos]


def operand(rng: random.Random, w: int) -> int:
    r = rng.random()
    if r < 0.35:
        return rng.choice(edges(w))
    f = ieee.FMT[w]
    if r < 0.5:  # values near one another so that sums cancel and round on ties
        base = ((f.bias + rng.randint(-3, 3)) << (f.p - 1)) | rng.getrandbits(4)
        return base | (f.sign if rng.random() < 0.5 else 0)
    if r < 0.6:  # tiny: products and quotients underflow
        return ((rng.randint(0, f.p) << (f.p - 1)) | rng.getrandbits(f.p - 1)) | (f.sign if rng.random() < 0.5 else 0)
    if r < 0.7:  # huge: overflow
        return (((f.emax + f.bias - rng.randint(0, 3)) << (f.p - 1)) | rng.getrandbits(f.p - 1)) | \
            (f.sign if rng.random() < 0.5 else 0)
    return rng.getrandbits(w)


def test_edges_include_what_they_claim():
    assert ieee.issnan(0x7F800001, 32) and ieee.isnan(0x7FC01234, 32) and not ieee.issnan(0x7FC01234, 32)
    assert ieee.value(1, 32) == Fraction(1, 2 ** 149) and ieee.value(0x3F800000, 32) == 1


@pytest.mark.parametrize("w", [32, 64])
@pytest.mark.parametrize("op", OPS)
def test_c_and_reference_agree_in_every_mode(lib, w, op):
    rng = random.Random(f"{op}{w}")
    n = {"sqrt": 1, "fma": 3}.get(op, 2)
    kinds = {"add": 0, "sub": 1, "mul": 2, "div": 3, "sqrt": 4, "fma": 5}
    bad = []
    for k in range(3000):
        args = [operand(rng, w) for _ in range(n)]
        m = k % 5
        want = getattr(ieee, op)(*args, w, m)
        padded = args + [0] * (3 - n)
        accrued = rng.choice([0, 0, NX, UF | NX, 31, rng.randrange(32)])
        got = c_call(lib.t_op, kinds[op], *padded, w, m, accrued=accrued)
        want = (want[0], want[1] | accrued)
        if got != want:
            bad.append(f"{op}{w} mode {m} {[hex(a) for a in args]}: C {got[0]:#x}/{got[1]} ref {want[0]:#x}/{want[1]}")
    assert not bad, "\n".join(bad[:20]) + f"\n({len(bad)} of 3000)"


def _numpy_op(op, w, args):
    dt = np.float32 if w == 32 else np.float64
    it = np.uint32 if w == 32 else np.uint64
    xs = [np.array([a], dtype=it).view(dt) for a in args]
    raised = set()
    with np.errstate(all="call"):
        np.seterrcall(lambda kind, flag: raised.add(kind))
        r = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
             "div": lambda a, b: a / b, "sqrt": np.sqrt}[op](*xs)
    bits = int(r.view(it)[0])
    flags = (NV if "invalid value" in raised else 0) | (DZ if "divide by zero" in raised else 0) | \
        (OF if "overflow" in raised else 0) | (UF if "underflow" in raised else 0)
    return bits, flags


@pytest.mark.parametrize("w", [32, 64])
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "sqrt"])
def test_round_to_nearest_even_is_numpys(w, op):
    """An oracle outside both: the host's own arithmetic through numpy (NaN results compared as
    NaN: numpy keeps payloads, RISC-V makes them canonical; NaN operands are left out, where x86
    and RISC-V differ on purpose)."""
    rng = random.Random(f"np{op}{w}")
    n = 1 if op == "sqrt" else 2
    bad = []
    for _ in range(2000):
        args = [operand(rng, w) for _ in range(n)]
        if any(ieee.isnan(a, w) for a in args):
            continue
        want, want_flags = _numpy_op(op, w, args)
        got, flags = getattr(ieee, op)(*args, w, 0)
        same = got == want or (ieee.isnan(got, w) and ieee.isnan(want, w))
        if not same or flags & ~NX != want_flags:
            bad.append(f"{op}{w} {[hex(a) for a in args]}: ours {got:#x}/{flags} numpy {want:#x}/{want_flags}")
    assert not bad, "\n".join(bad[:20])


def test_fma_rounds_once_against_fractions():
    """fma in every mode against an independent exact computation (the product and sum as
    Fractions, rounded by the bracketing neighbours)."""
    rng = random.Random(5)
    w = 64
    for k in range(400):
        a, b, c = (rng.uniform(-4, 4) for _ in range(3))
        bits = [struct.unpack("<Q", struct.pack("<d", v))[0] for v in (a, b, c)]
        exact = Fraction(a) * Fraction(b) + Fraction(c)
        if exact == 0:
            continue
        lo = float(exact)  # nearest, ties to even
        lo_f = Fraction(lo)
        below = lo if lo_f <= exact else np.nextafter(lo, -np.inf)
        above = lo if lo_f >= exact else np.nextafter(lo, np.inf)
        for m, want in ((1, below if exact > 0 else above), (2, below), (3, above)):
            got, _ = ieee.fma(*bits, w, m)
            assert got == struct.unpack("<Q", struct.pack("<d", want))[0], (a, b, c, m)


@pytest.mark.parametrize("w", [32, 64])
def test_min_max_compare_agree_and_follow_riscv(lib, w):
    rng = random.Random(w)
    for _ in range(4000):
        a, b = operand(rng, w), operand(rng, w)
        for mx in (0, 1):
            assert c_call(lib.t_minmax, a, b, w, mx) == ieee.min_max(a, b, w, bool(mx)), (hex(a), hex(b), mx)
        for kind in (0, 1, 2):
            c, fl = c_call(lib.t_cmp, a, b, w, kind)
            assert (bool(c), fl) == ieee.compare(a, b, w, kind), (hex(a), hex(b), kind)
    f = ieee.FMT[w]
    assert ieee.min_max(f.sign, 0, w, True) == (0, 0) and ieee.min_max(0, f.sign, w, False) == (f.sign, 0)
    assert ieee.min_max(f.expmask | 1, f.expmask | 1, w, False) == (f.canon, NV)


@pytest.mark.parametrize("w", [32, 64])
def test_conversions_agree(lib, w):
    rng = random.Random(100 + w)
    for k in range(4000):
        m = k % 5
        a = operand(rng, w)
        for bits in (32, 64):
            for signed in (True, False):
                got, fl = c_call(lib.t_to_int, a, w, m, bits, int(signed))
                want, wfl = ieee.to_int(a, w, m, bits, signed)
                assert (got, fl) == (want & ((1 << bits) - 1), wfl), (hex(a), m, bits, signed)
        x = rng.choice([0, 1, -1, (1 << 63) - 1, -(1 << 63), (1 << 64) - 1, (1 << 24) + 1, (1 << 53) + 1]) \
            if rng.random() < 0.3 else rng.getrandbits(rng.randint(1, 64)) * rng.choice([1, -1])
        x = max(min(x, (1 << 64) - 1), -(1 << 63))
        assert c_call(lib.t_from_int, abs(x), int(x < 0), w, m) == ieee.from_int(x, w, m), (x, m)
        other = 96 - w
        assert c_call(lib.t_convert, a, w, other, m) == ieee.convert(a, w, other, m), (hex(a), m)


@pytest.mark.parametrize("w", [32, 64])
def test_signed_zero_sums_agree(lib, w):
    """Every combination of zero and cancelling operands, every mode: random operands rarely meet."""
    f = ieee.FMT[w]
    one = f.bias << (f.p - 1)
    cases = [(x, y) for x in (0, f.sign, one, one | f.sign) for y in (0, f.sign, one, one | f.sign)]
    for m in range(5):
        for x, y in cases:
            assert c_call(lib.t_op, 0, x, y, 0, w, m) == ieee.add(x, y, w, m), (hex(x), hex(y), m)
            assert c_call(lib.t_op, 1, x, y, 0, w, m) == ieee.sub(x, y, w, m), (hex(x), hex(y), m)
            for z in (0, f.sign, one, one | f.sign):
                assert c_call(lib.t_op, 5, x, y, z, w, m) == ieee.fma(x, y, z, w, m), (hex(x), hex(y), hex(z), m)


def test_riscv_saturation_and_nan_rules():
    """Hand-computed from the RISC-V specification (fcvt table 11.4; NaN generation 11.3)."""
    assert ieee.to_int(0x7FC00000, 32, 1, 32, True) == ((1 << 31) - 1, NV)
    assert ieee.to_int(0x7FC00000, 32, 1, 32, False) == ((1 << 32) - 1, NV)
    assert ieee.to_int(0xFF800000, 32, 1, 32, False) == (0, NV)
    assert ieee.to_int(0xBF000000, 32, 0, 32, False) == (0, NX)  # -0.5 rounds to -0: in range, inexact
    assert ieee.to_int(0xBF400000, 32, 0, 32, False) == (0, NV)  # -0.75 rounds to -1: out of range
    assert ieee.to_int(0x40200000, 32, 4, 32, True) == (3, NX)  # 2.5 to nearest, ties away
    assert ieee.add(0x7F800001, 0x3F800000, 32, 0) == (0x7FC00000, NV)  # signalling NaN: invalid, canonical
    assert ieee.add(0x7FC01234, 0x3F800000, 32, 0) == (0x7FC00000, 0)
    assert ieee.fma(0x7F800000, 0, 0x7FC00000, 32, 0) == (0x7FC00000, NV)  # inf * 0 + qNaN is invalid
    assert ieee.div(0x3F800000, 0, 32, 0) == (0x7F800000, DZ)
    assert ieee.add(0x7F7FFFFF, 0x7F7FFFFF, 32, 1) == (0x7F7FFFFF, OF | NX)  # RTZ overflow: the largest finite
    assert ieee.add(0x7F7FFFFF, 0x7F7FFFFF, 32, 4) == (0x7F800000, OF | NX)
    assert ieee.sub(0x3F800000, 0x3F800000, 32, 2) == (0x80000000, 0)  # x - x is -0 rounding down
    # the sign of an exact zero sum (IEEE 754 6.3): the addends' when both are zeros of one sign
    assert ieee.add(0, 0, 32, 2) == (0, 0) and ieee.add(0x80000000, 0x80000000, 32, 3) == (0x80000000, 0)
    assert ieee.add(0, 0x80000000, 32, 2) == (0x80000000, 0) and ieee.add(0, 0x80000000, 32, 0) == (0, 0)
    assert ieee.fma(0, 0x3F800000, 0, 32, 2) == (0, 0) and ieee.fma(0x80000000, 0x3F800000, 0, 32, 2) == (0x80000000, 0)
    # tininess after rounding: 2^-126 * (1 - 2^-25) rounds to 2^-126 with 24 bits, not tiny: no UF
    near = Fraction(2) ** -126 * (1 - Fraction(1, 2 ** 25))
    assert ieee.round_fraction(near, 32, 0) == (0x00800000, NX)
    assert ieee.round_fraction(near, 32, 1) == (0x007FFFFF, UF | NX)
