"""The rules of docs/simulator.md, one at a time, on the reference interpreter.

Every expected value is worked out by hand (in the comments), not computed with the code under
test. The test ISA (tests/sim/common.py) gives each test its own operand-less instructions.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import isadl
from kcgen.sim.pyref import LoadError, RefMachine

from .common import assembler, fixture, go, machine, run, spec, view


def regs(**values):
    """A setup function: regs(r={1: 5}, u={2: 7}) writes raw register values."""
    def setup(m):
        for name, items in values.items():
            for i, v in items.items():
                m.arrays[name][i] = v
    return setup


def floats(**values):
    """Like regs, but through the store's own dtype (bf16 etc. from Python floats)."""
    def setup(m):
        for name, items in values.items():
            vw = view(m, name)
            for i, v in items.items():
                vw[i] = v
    return setup


def r(m, i):
    return int(m.arrays["r"][i])


# ---- integers wrap in their type -------------------------------------------------------------

def test_i32_add_wraps():
    m = go("r[1] = r[2] + r[3]", regs(r={2: 0x7FFFFFFF, 3: 1}))
    assert r(m, 1) == -0x80000000


def test_u32_add_and_sub_wrap():
    m = go("u[1] = u[2] + 1; u[3] = u[4] - 1", regs(u={2: 0xFFFFFFFF, 4: 0}))
    assert m.arrays["u"][1] == 0 and m.arrays["u"][3] == 0xFFFFFFFF


def test_mul_wraps():
    # 0x10000 * 0x10000 = 2^32 = 0 mod 2^32; 0x10001 * 0x10001 = 0x100020001 -> 0x00020001
    m = go("r[1] = r[2] * r[2]; r[3] = r[4] * r[4]", regs(r={2: 0x10000, 4: 0x10001}))
    assert r(m, 1) == 0 and r(m, 3) == 0x20001


def test_i8_state_wraps():
    # 100 + 100 = 200 = -56 as i8
    m = go("t8 = t8 + 100", lambda m: m.arrays["t8"].__setitem__((), 100))
    assert int(m.arrays["t8"]) == -56


def test_untyped_int_is_64_bit_signed():
    # the loop variable is an int: (2^62 * 2) wraps to -2^63 before it is converted to i64
    m = go("for i in 0..1 { q[1] = i64((i + 0x4000000000000000) * 2) }")
    assert int(m.arrays["q"][1]) == -(1 << 63)


def test_conversions_truncate_or_extend_by_source_signedness():
    # i8(0x1ff) = -1; u32(i8 -1) = 0xffffffff (sign-extends); i32(u8 0xff) = 255 (zero-extends)
    m = go("s[1] = i8(r[2]); u[1] = u32(s[1]); r[3] = i32(u8(r[2]))", regs(r={2: 0x1FF}))
    assert int(m.arrays["s"][1]) == -1
    assert int(m.arrays["u"][1]) == 0xFFFFFFFF
    assert r(m, 3) == 255


def test_literal_takes_the_type_of_the_other_side():
    # 0xffffffff on an i32 is the bit pattern -1: x & 0xffffffff == x
    m = go("r[1] = r[2] & 0xffffffff; r[3] = r[2] ^ 0xffffffff", regs(r={2: -7}))
    assert r(m, 1) == -7 and r(m, 3) == 6


# ---- shifts ------------------------------------------------------------------------------------

def test_right_shift_is_arithmetic_on_signed_logical_on_unsigned():
    # -16 >> 2 = -4; 0xfffffff0 >> 2 = 0x3ffffffc
    m = go("r[1] = r[2] >> 2; u[1] = u[2] >> 2", regs(r={2: -16}, u={2: 0xFFFFFFF0}))
    assert r(m, 1) == -4 and int(m.arrays["u"][1]) == 0x3FFFFFFC


def test_shift_left_wraps_in_the_left_type():
    # i8 31 << 4 = 496 = 0x1f0 -> 0xf0 = -16
    m = go("s[1] = s[2] << 4", regs(s={2: 31}))
    assert int(m.arrays["s"][1]) == -16


@pytest.mark.parametrize("value,amount,left,right", [
    (5, 32, 0, 0),            # amount == width: 0 either way for a non-negative value
    (-5, 32, 0, -1),          # >> of a negative value by >= width: -1
    (-5, 40, 0, -1),
    (-8, -1, 0, -1),          # the amount is unsigned: -1 is 2^32 - 1, at least the width
    (1, 31, -0x80000000, 0),  # just below the width still shifts
    (-0x80000000, 31, 0, -1),
])
def test_shift_amount_at_least_the_width(value, amount, left, right):
    m = go("r[3] = r[1] << r[2]; r[4] = r[1] >> r[2]", regs(r={1: value, 2: amount}))
    assert (r(m, 3), r(m, 4)) == (left, right)


def test_unsigned_shift_by_width_is_zero():
    m = go("u[3] = u[1] >> u[2]; u[4] = u[1] << u[2]", regs(u={1: 0xFFFFFFFF, 2: 32}))
    assert int(m.arrays["u"][3]) == 0 and int(m.arrays["u"][4]) == 0


# ---- division -----------------------------------------------------------------------------------

@pytest.mark.parametrize("a,b,q,rem", [
    (7, 2, 3, 1), (-7, 2, -3, -1), (7, -2, -3, 1), (-7, -2, 3, -1),
    (-0x80000000, -1, -0x80000000, 0),  # most negative / -1 wraps, remainder 0
    (-0x80000000, 1, -0x80000000, 0),
])
def test_division_truncates_toward_zero(a, b, q, rem):
    m = go("r[3] = r[1] / r[2]; r[4] = r[1] % r[2]", regs(r={1: a, 2: b}))
    assert (r(m, 3), r(m, 4)) == (q, rem)


def test_unsigned_division():
    m = go("u[3] = u[1] / u[2]; u[4] = u[1] % u[2]", regs(u={1: 0xFFFFFFFF, 2: 16}))
    assert int(m.arrays["u"][3]) == 0x0FFFFFFF and int(m.arrays["u"][4]) == 15


@pytest.mark.parametrize("op", ["/", "%"])
def test_division_by_zero_traps_and_earlier_writes_stay(op):
    m, res = run("nop\ngo", regs(r={2: 9}), go=f"r[1] = 5; r[3] = r[2] {op} r[4]; r[5] = 6")
    assert res.status == "trap"
    assert res.trap.message == "division by zero" and res.trap.kind == "arith"
    assert res.trap.pc == 4 and res.trap.line == 2 and m.pc == 4  # pc stays on the trapping instruction
    assert r(m, 1) == 5 and r(m, 3) == 0 and r(m, 5) == 0
    assert res.steps == 1 and res.counts == {"NOP": 1}


# ---- floats ---------------------------------------------------------------------------------------

def bf16(m, i):
    return float(view(m, "b")[i])


def test_bf16_add_rounds_to_nearest_even():
    # bf16 has 8 significant bits: near 1 the spacing is 2^-7.
    # 1 + 2^-8 is a tie between 1 and 1 + 2^-7: even mantissa -> 1.0
    # 1 + 3*2^-8 is a tie between 1 + 2^-7 (odd) and 1 + 2^-6 (even) -> 1 + 2^-6
    # 1 + 2^-8 + 2^-16 is above the tie -> 1 + 2^-7 (computed in double, rounded once)
    m = go("b[0] = b[1] + b[2]; b[3] = b[1] + b[3]",
           floats(b={1: 1.0, 2: 2.0 ** -8, 3: 3 * 2.0 ** -8}))
    assert bf16(m, 0) == 1.0
    assert bf16(m, 3) == 1.0 + 2.0 ** -6


def test_bf16_rounds_after_each_operation():
    # (1 + 2^-8) + 2^-8: the first sum rounds to 1.0, so the second is again 1.0 (not 1 + 2^-7)
    m = go("b[0] = (b[1] + b[2]) + b[2]", floats(b={1: 1.0, 2: 2.0 ** -8}))
    assert bf16(m, 0) == 1.0


def test_bf16_conversion_from_f32():
    # f32 1 + 2^-8 + 2^-20 is just above the tie -> 1 + 2^-7
    m = go("b[0] = bf16(f[1]); b[1] = bf16(f[2])", floats(f={1: 1.0 + 2.0 ** -8 + 2.0 ** -20, 2: 1.0 + 2.0 ** -8}))
    assert bf16(m, 0) == 1.0 + 2.0 ** -7 and bf16(m, 1) == 1.0


def test_float_overflow_gives_infinity_not_saturation():
    # bf16 max is (2 - 2^-7) * 2^127; doubling it overflows
    m = go("b[0] = b[1] + b[1]; f[0] = f[1] * f[1]", floats(b={1: (2 - 2.0 ** -7) * 2.0 ** 127}, f={1: 1e30}))
    assert bf16(m, 0) == math.inf and float(m.arrays["f"][0]) == math.inf


def test_f32_ties_to_even_and_division_by_zero():
    # 1 + 2^-24 is a tie in f32 -> 1.0; 1/0 = inf, 0/0 = nan, -1/0 = -inf (IEEE, no trap)
    m = go("f[0] = f[1] + f[2]; f[3] = f[1] / f[3]; d[0] = d[1] / d[2]; d[3] = -d[1] / d[2]",
           floats(f={1: 1.0, 2: 2.0 ** -24}, d={1: 1.0}))
    assert float(m.arrays["f"][0]) == 1.0
    assert float(m.arrays["f"][3]) == math.inf
    assert float(m.arrays["d"][0]) == math.inf and float(m.arrays["d"][3]) == -math.inf


def test_float_literal_takes_the_format_of_its_context():
    # 0.1 as bf16 is 0.10009765625 (0x3dcd); 0.1 as f32 is 0.100000001490116...
    m = go("b[0] = 0.1; f[0] = 0.1; d[0] = 0.1; b[1] = b[2] * 2")
    assert bf16(m, 0) == 0.10009765625
    assert float(m.arrays["f"][0]) == float(np.float32(0.1))
    assert float(m.arrays["d"][0]) == 0.1


@pytest.mark.parametrize("x,i32,u8,i8", [
    (3e9, 0x7FFFFFFF, 255, 127),
    (-3e9, -0x80000000, 0, -128),
    (-2.7, -2, 0, -2),
    (2.7, 2, 2, 2),
    (math.nan, 0, 0, 0),
    (math.inf, 0x7FFFFFFF, 255, 127),
    (-math.inf, -0x80000000, 0, -128),
])
def test_float_to_int_truncates_and_saturates(x, i32, u8, i8):
    m = go("r[1] = i32(d[1]); u[1] = u32(u8(d[1])); s[1] = i8(d[1]); r[2] = i32(sat(d[1], u8))",
           floats(d={1: x}))
    assert r(m, 1) == i32 and int(m.arrays["u"][1]) == u8 and int(m.arrays["s"][1]) == i8
    assert r(m, 2) == u8


def test_sat():
    # ints clamp; to a float format: the largest finite value instead of infinity
    m = go("s[1] = sat(r[1], i8); s[2] = sat(r[2], i8); b[0] = sat(d[1], bf16); e[0] = sat(d[2], e4m3); "
           "e[1] = e4m3(d[2]); b[1] = sat(d[3], bf16)",
           lambda m: (regs(r={1: 1000, 2: -1000})(m), floats(d={1: 1e300, 2: -1000.0, 3: math.inf})(m)))
    assert int(m.arrays["s"][1]) == 127 and int(m.arrays["s"][2]) == -128
    assert bf16(m, 0) == (2 - 2.0 ** -7) * 2.0 ** 127 and bf16(m, 1) == bf16(m, 0)
    assert float(view(m, "e")[0]) == -448.0  # E4M3 max
    assert math.isnan(float(view(m, "e")[1]))  # E4M3 has no infinity: overflow gives NaN


def test_float_min_max_ignore_nan():
    m = go("d[0] = min(d[1], d[2]); d[3] = max(d[2], d[1])", floats(d={1: math.nan, 2: 2.0}))
    assert float(m.arrays["d"][0]) == 2.0 and float(m.arrays["d"][3]) == 2.0


def test_math_builtins_round_to_the_format():
    m = go("f[0] = exp(f[1]); f[2] = sqrt(f[3]); f[3] = recip(f[1]); b[0] = log(b[1]); b[2] = tanh(b[1]); "
           "b[3] = erf(b[1])", floats(f={1: 1.0, 3: 2.0}, b={1: 1.0}))
    f = m.arrays["f"]
    assert float(f[0]) == float(np.float32(math.exp(1.0)))  # 2.7182817459106445
    assert float(f[2]) == float(np.float32(math.sqrt(2.0)))  # 1.4142135381698608
    assert float(f[3]) == 1.0
    assert bf16(m, 0) == 0.0
    assert bf16(m, 2) == 0.76171875  # tanh(1) = 0.76159..., bf16 neighbours 0.7578125 and 0.76171875
    assert bf16(m, 3) == 0.84375  # erf(1) = 0.84270..., bf16 neighbours 0.83984375 and 0.84375


def test_math_special_values_never_raise():
    m = go("d[0] = exp(d[1]); d[1] = log(d[2]); d[2] = sqrt(d[3]); d[3] = log(d[3])",
           floats(d={1: 1e6, 2: 0.0, 3: -1.0}))
    d = m.arrays["d"]
    assert d[0] == math.inf and d[1] == -math.inf and math.isnan(d[2]) and math.isnan(d[3])


def test_fma_rounds_once():
    # a = 1 + 2^-30, b = 1 - 2^-30: a*b = 1 - 2^-60 exactly. a*b + (-1) = -2^-60 with one rounding;
    # rounding the product first would give 1 - 1 = 0.
    m = go("d[0] = fma(d[1], d[2], d[3]); d[3] = d[1] * d[2] + d[3]",
           floats(d={1: 1 + 2.0 ** -30, 2: 1 - 2.0 ** -30, 3: -1.0}))
    assert float(m.arrays["d"][0]) == -(2.0 ** -60)
    assert float(m.arrays["d"][3]) == 0.0


def test_ldexp_ilogb_isnan_isinf():
    m = go("d[0] = ldexp(d[1], 3); r[1] = ilogb(d[1]); r[2] = ilogb(d[2]); r[3] = ilogb(d[3]); "
           "r[4] = ilogb(d[0] - d[0]); flag = isnan(d[0] - d[0]) || isinf(d[0]); "
           "r[5] = isinf(d[3]) ? 1 : 0; f[0] = ldexp(f[1], 200)",
           floats(d={1: 1.5, 2: 0.0, 3: -math.inf}, f={1: 1.0}))
    assert float(m.arrays["d"][0]) == 12.0
    assert [r(m, i) for i in range(1, 6)] == [0, -(1 << 31), (1 << 31) - 1, -(1 << 31), 1]
    assert bool(m.arrays["flag"]) is False
    assert float(m.arrays["f"][0]) == math.inf  # 2^200 overflows f32


def test_int_to_float_goes_through_double():
    # 2^53 + 1 to f64: a tie between 2^53 and 2^53 + 2 -> 2^53 (even).
    # 2^24 + 1 to f32 -> 2^24; 0x7fffffff to bf16 -> 2^31.
    # 2^60 + 2^36 + 1 to f32: to double first (2^60 + 2^36, the 1 is below half an ulp), then to f32,
    # where 2^36 is exactly half an ulp: a tie, to even -> 2^60. (Rounding once from the integer
    # would give 2^60 + 2^37.)
    m = go("d[0] = f64(q[1]); f[0] = f32(r[1]); b[0] = bf16(r[2]); f[1] = f32(q[2])",
           regs(q={1: (1 << 53) + 1, 2: (1 << 60) + (1 << 36) + 1}, r={1: (1 << 24) + 1, 2: 0x7FFFFFFF}))
    assert float(m.arrays["d"][0]) == 2.0 ** 53
    assert float(m.arrays["f"][0]) == 2.0 ** 24
    assert bf16(m, 0) == 2.0 ** 31
    assert float(m.arrays["f"][1]) == 2.0 ** 60


# ---- other builtins -------------------------------------------------------------------------------

def test_bitcast_scalars_and_vectors_lane0_low():
    m = go("u[1] = bitcast(v[1], u32); v[2] = bitcast(u[2], u8[4]); u[3] = bitcast(f[1], u32); "
           "s[1] = bitcast(v[1][3], i8)",
           lambda m: (regs(v={1: [1, 2, 3, 0xFE]}, u={2: 0x11223344})(m), floats(f={1: 1.0})(m)))
    assert int(m.arrays["u"][1]) == 0xFE030201
    assert m.arrays["v"][2].tolist() == [0x44, 0x33, 0x22, 0x11]
    assert int(m.arrays["u"][3]) == 0x3F800000
    assert int(m.arrays["s"][1]) == -2


def test_bit_counting_and_extension():
    m = go("u[1] = clz(u[0]); u[2] = ctz(u[0]); s[1] = popcount(s[2]); u[3] = clz(u[4]); u[5] = ctz(u[4]); "
           "r[1] = sext(u8(u[6]), 32); u[7] = u32(zext(s[2], 16))",
           regs(u={0: 0, 4: 0x00F0, 6: 0x80}, s={2: -1}))
    u = m.arrays["u"]
    assert (int(u[1]), int(u[2]), int(m.arrays["s"][1])) == (32, 32, 8)
    assert (int(u[3]), int(u[5])) == (24, 4)
    assert r(m, 1) == -128 and int(u[7]) == 0xFF  # zext: the i8 pattern 0xff with zeros above


def test_bit_slices_and_bit():
    # 0xabcc: [7:4] = 0xc; [15:8] = 0xab. bit 31 of a negative i32 is set; bits above its width are 0.
    m = go("u[1] = u32(r[1][7:4]); u[2] = u32(r[1][15:8]); "
           "flag = bit(r[2], 31) && !bit(r[2], u[3]) && !bit(r[1], 0) && bit(r[1], 2) && !bit(r[2], u[4]); "
           "for k in 4..5 { u[5] = u32(r[1][k + 7:k]) }",
           regs(r={1: 0xABCC, 2: -1}, u={3: 40, 4: 64}))
    assert int(m.arrays["u"][1]) == 0xC and int(m.arrays["u"][2]) == 0xAB
    assert bool(m.arrays["flag"]) is True
    assert int(m.arrays["u"][5]) == 0xBC  # a slice with run-time bounds


def test_abs_min_max_ints():
    # abs of the most negative i8 wraps to itself
    m = go("s[1] = abs(s[2]); r[1] = min(r[2], r[3]); u[1] = max(u[2], u[3])",
           regs(s={2: -128}, r={2: -5, 3: 3}, u={2: 5, 3: 0xFFFFFFFF}))
    assert int(m.arrays["s"][1]) == -128 and r(m, 1) == -5 and int(m.arrays["u"][1]) == 0xFFFFFFFF


def test_conditional_and_short_circuit():
    # the right side of && is not evaluated when the left is false: no out-of-bounds trap
    m = go("r[1] = u[1] < 256 && ram[u[1]] == 0 ? 1 : 2; r[2] = u[2] < 256 && ram[u[2]] == 0 ? 1 : 2",
           regs(u={1: 1000, 2: 5}))
    assert r(m, 1) == 2 and r(m, 2) == 1


def test_user_function_widens_its_arguments():
    import isadl
    from .common import HEAD
    s_ = isadl.load_text(HEAD % """
  function twice(x: i32) -> i32 = x * 2
  function add3(a: u8, b: u16, c: u32) -> u32 = a + b + c
  instruction GO { syntax "go"; encoding F(op=16); semantics { r[1] = twice(s[1]); u[1] = add3(lo[1], w[1], 7) } }""",
                         "fn.isa")
    m = machine(s_, "go", regs(s={1: -100}, lo={1: 200, 2: 0xFF}, hi={1: 1}))
    assert m.run().status == "halted"
    # w[1] = {lo[1], hi[1]} = 0x01c8 = 456; 200 + 456 + 7 = 663
    assert r(m, 1) == -200 and int(m.arrays["u"][1]) == 663
    assert "def F_twice(m, A, p_x):" in m.source("twice")


def test_load_store_little_endian_multi_element():
    m = go("store(ram, u32, 0x40, u[1]); r[1] = i32(load(ram, i16, 0x42)); u[2] = u32(load(ram, u8, 0x43)); "
           "store(ram, i16, 0x44, i16(-2))", regs(u={1: 0x81223344}))
    ram = m.arrays["ram"]
    assert ram[0x40:0x46].tolist() == [0x44, 0x33, 0x22, 0x81, 0xFE, 0xFF]
    assert r(m, 1) == -0x7EDE  # 0x8122 as i16
    assert int(m.arrays["u"][2]) == 0x81


def test_mx_builtins():
    # E4M3 0x40 = 2.0, scale 127 = 2^0; scale 120 = 2^-7. mx_scale: floor(log2 amax) - emax(E4M3 = 8) + 127.
    m = go("f[0] = mx_decode(mxfp8, u8(u[1]), 127); f[1] = mx_decode(mxfp8, u8(u[1]), 120); "
           "u[2] = u32(mx_scale(mxfp8, f[2])); u[3] = u32(mx_scale(mxfp8, f[3])); "
           "u[4] = u32(mx_encode(mxfp8, f[0], 127)); u[5] = u32(mx_encode(mxfp8, f[2], 127))",
           lambda m: (regs(u={1: 0x40})(m), floats(f={2: 448.0, 3: 1.0})(m)))
    assert float(m.arrays["f"][0]) == 2.0 and float(m.arrays["f"][1]) == 2.0 ** -6
    assert int(m.arrays["u"][2]) == 127 and int(m.arrays["u"][3]) == 119
    assert int(m.arrays["u"][4]) == 0x40 and int(m.arrays["u"][5]) == 0x7E  # 448 = E4M3 max, 0x7e


# ---- reductions ---------------------------------------------------------------------------------

def test_reductions_over_empty_ranges():
    # the bound is an operand-free runtime value capped with min(): the range is empty at run time
    m = go(" ".join(f"{dst} = {op}(i in 0..min(u[0], 4): {src}[i]);" for dst, op, src in [
        ("r[1]", "sum", "r"), ("r[2]", "prod", "r"), ("r[3]", "max", "r"), ("r[4]", "min", "r"),
        ("r[5]", "and", "r"), ("r[6]", "or", "r"), ("r[7]", "xor", "r"), ("u[1]", "and", "u"),
        ("d[0]", "max", "d"), ("d[1]", "min", "d"), ("d[2]", "sum", "d"), ("d[3]", "prod", "d")])
           + " flag = and(i in 0..min(u[0], 4): bit(u[i], 0))")
    assert [r(m, i) for i in range(1, 8)] == [0, 1, -(1 << 31), (1 << 31) - 1, -1, 0, 0]
    assert int(m.arrays["u"][1]) == 0xFFFFFFFF
    assert m.arrays["d"].tolist() == [-math.inf, math.inf, 0.0, 1.0]
    assert bool(m.arrays["flag"]) is True


def test_float_sum_rounds_after_each_step_from_the_low_bound():
    # bf16: 1 + 2^-8 -> 1 (tie, even); again -> 1. A single rounding of the total would give 1 + 2^-7.
    m = go("b[0] = sum(i in 1..4: b[i])", floats(b={1: 1.0, 2: 2.0 ** -8, 3: 2.0 ** -8}))
    assert bf16(m, 0) == 1.0
    # from the low bound up: 2^-8 + 2^-8 = 2^-7 first, then + 1 = 1 + 2^-7 exactly
    m = go("b[0] = sum(i in 1..4: b[i])", floats(b={1: 2.0 ** -8, 2: 2.0 ** -8, 3: 1.0}))
    assert bf16(m, 0) == 1.0 + 2.0 ** -7


def test_int_reductions_wrap():
    # 3 * 0x7fffffff = 0x17ffffffd -> 0x7ffffffd as u32... as i32: 0x7ffffffd = 2147483645
    m = go("r[1] = sum(i in 1..4: r[2]); u[1] = prod(i in 0..3: u[2])", regs(r={2: 0x7FFFFFFF}, u={2: 0x10000}))
    assert r(m, 1) == 0x7FFFFFFD
    assert int(m.arrays["u"][1]) == 0  # 2^48 mod 2^32


# ---- storage: bounds, zero registers, groups ---------------------------------------------------------

@pytest.mark.parametrize("sem,message", [
    ("r[1] = i32(ram[u[1]])", "out of bounds: ram[256] (size 256)"),
    ("r[1] = i32(v[1][u[2]])", "out of bounds: v lane[4] (size 4)"),
    ("v[u[3]][0] = 1", "out of bounds: v[8] (size 4)"),
    ("r[u[3]] = 1", "out of bounds: r[8] (size 8)"),
    ("m2[u[4]][0] = 1", "out of bounds: m2[2] (size 2)"),  # each dimension is checked on its own
    ("m2[0][u[4] + 1] = 1", "out of bounds: m2[3] (size 3)"),
    ("r[1] = r[r[7]]", "out of bounds: r[-1] (size 8)"),
    ("let x = bitcast(u[1], u8[4]); r[1] = i32(x[u[2]])", "out of bounds: vector lane[4] (size 4)"),
    ("u[1] = u32(w[u[2]])", "out of bounds: w[4] (size 4)"),
    ("bw[0][u[2]] = 1", "out of bounds: bw lane[4] (size 4)"),
    ("r[1] = load(ram, i32, u[5])", "misaligned load(ram, i32, 0x41)"),
    ("store(ram, u16, q[3], 1)", "misaligned store(ram, u16, 0xfd)"),
    ("store(ram, u16, u[6], 1)", "out of bounds: ram[255..256] (size 256)"),  # bounds are checked first
    ("store(ram, u16, u[1], 1)", "out of bounds: ram[256..257] (size 256)"),
    ("r[1] = load(ram, i32, u[7])", "out of bounds: ram[4032..4035] (size 256)"),
])
def test_bounds_and_alignment_trap(sem, message):
    m, res = run("go", regs(u={1: 256, 2: 4, 3: 8, 4: 2, 5: 0x41, 6: 0xFF, 7: 0xFC0}, r={7: -1}, q={3: 0xFD}), go=sem)
    assert res.status == "trap", res
    assert res.trap.message == message
    assert res.trap.kind == ("misaligned" if "misaligned" in message else "memory")
    assert res.trap.pc == 0 and res.trap.line == 1 and res.steps == 0


def test_byte_loads_are_never_misaligned_and_align_caps_at_the_memory():
    # align 4: an 8-byte access needs only 4-byte alignment; a byte access none
    m = go("q[1] = load(ram, i64, u[1]); u[2] = u32(load(ram, u8, u[3]))",
           regs(u={1: 0x44, 3: 0x45}))
    assert int(m.arrays["q"][1]) == 0


def test_zero_register_reads_zero_and_drops_writes():
    # r0 is hard-wired: a write through a runtime index is dropped, a read gives 0 even if the array is poked
    m = go("r[u[1]] = 5; r[2] = r[u[1]] + 1", regs(u={1: 0}))
    assert r(m, 0) == 0 and r(m, 2) == 1
    m = go("r[2] = r[u[1]]", lambda m: (m.arrays["r"].__setitem__(0, 99), None)[1])
    assert r(m, 2) == 0


def test_grouped_register_reads_parts_low_first_and_splits_writes():
    # w[n] = {lo[n], hi[n]}: lo is the low byte
    m = go("u[1] = u32(w[1]); w[2] = u16(0xbeef); w[3] = w[3] + 1",
           regs(lo={1: 0x34, 3: 0xFF}, hi={1: 0x12, 3: 0x00}))
    assert int(m.arrays["u"][1]) == 0x1234
    assert (int(m.arrays["lo"][2]), int(m.arrays["hi"][2])) == (0xEF, 0xBE)
    assert (int(m.arrays["lo"][3]), int(m.arrays["hi"][3])) == (0x00, 0x01)  # the carry crosses parts


def test_grouped_vector_register_lanes():
    # bw[n] = {bl[n], bh[n]}: lanes 0-1 in bl, 2-3 in bh
    m = go("bw[1][2] = 7; u[1] = bitcast(bw[0], u32); bw[0][u[2]] = 1",
           regs(bl={0: [1, 2]}, bh={0: [3, 4]}, u={2: 1}))
    assert m.arrays["bh"][1].tolist() == [7, 0] and m.arrays["bl"][1].tolist() == [0, 0]
    assert int(m.arrays["u"][1]) == 0x04030201
    assert m.arrays["bl"][0].tolist() == [1, 1]


def test_grouped_registers_on_vliw_mini():
    s = fixture("vliw_mini")
    m = RefMachine(s)
    m.load(assembler(s).assemble("vadd.s8 x0, x1, x2\nvmac cm3, cm1, x1, x2\ndone"))
    A = m.arrays
    # x1 = {wl1, wh1}: lane 0 in wl1[0], lane 32 in wh1[0], lane 63 in wh1[31]
    A["wl"][1][0], A["wh"][1][0], A["wh"][1][31] = 200, 3, 0x7F
    A["wl"][2][0], A["wh"][2][0], A["wh"][2][31] = 100, 4, 1
    A["bmh"][1][15] = 1000  # cm1 lane 31
    assert m.run().status == "halted"
    assert A["wl"][0][0] == 44 and A["wh"][0][0] == 7 and A["wh"][0][31] == 0x80  # 127 + 1 wraps as i8
    # cm3 lane 0 = 200(as i8: -56) * 100 + 0 = -5600; lane 16 (bmh lane 0) = 3*4 = 12;
    # lane 31 = 1000 + 0x7f * 1 (lanes 62, 63: 0*0 + 127*1)
    assert int(A["bml"][3][0]) == -5600 and int(A["bmh"][3][0]) == 12 and int(A["bmh"][3][15]) == 1127


def test_vliw_slots_run_in_bundle_format_order():
    # B128 declares alu, ld, st, vec: the alu add reads r2 before the ld slot's lda writes it,
    # and the st slot (after ld) stores the loaded value.
    s = fixture("vliw_mini")
    m = RefMachine(s)
    m.load(assembler(s).assemble("lda r2, [p0, #4] ; add r3, r2, r2 ; st r2, [p1, #0]\ndone"))
    A = m.arrays
    A["p"][0], A["p"][1], A["r"][2] = 0x100, 0x200, 5
    A["dm"][0x104] = 7
    res = m.run()
    assert res.status == "halted" and res.steps == 2
    assert int(A["r"][3]) == 10 and int(A["r"][2]) == 7 and int(A["dm"][0x200]) == 7
    # every slot runs, filler nops included
    assert res.counts == {"ADD": 1, "LDA": 1, "ST": 1, "NOPV": 1, "DONE": 1}


# ---- control: halt, end of program, budget, pc ---------------------------------------------------------

def test_halt_finishes_the_instruction_and_stops():
    m, res = run("hlt\nset", hlt="halt; r[1] = 7", set="r[2] = 1")
    assert res.status == "halted" and res.steps == 1 and res.trap is None
    assert r(m, 1) == 7 and r(m, 2) == 0
    assert m.pc == 4 and res.counts == {"HLT": 1}


def test_running_past_the_end_halts():
    m, res = run("set\nset", set="r[1] = r[1] + 1")
    assert res.status == "halted" and res.steps == 2 and r(m, 1) == 2 and m.pc == 8


def test_budget_and_resume():
    s = spec(set="r[1] = r[1] + 1")
    m = machine(s, "loop: set\nj loop")
    res = m.run(10)
    assert res.status == "budget" and res.steps == 10 and r(m, 1) == 5
    assert m.pc == 0  # the next instruction to run
    res = m.run(5)
    assert res.status == "budget" and res.steps == 15 and res.instret == 15
    assert res.counts == {"SET": 3, "J": 2}  # counts are per run() call


def test_end_of_program_is_noticed_by_the_next_step():
    # as in the C simulator: the step after the last instruction finds the end
    m, res = run("set\nset", max_steps=2, set="r[1] = 1")
    assert res.status == "budget" and res.steps == 2
    res = m.run(1)
    assert res.status == "halted" and res.steps == 2 and res.counts == {}


def test_pc_reads_the_instruction_address_and_writes_jump():
    # a write to pc decides where execution continues; reading pc still gives this instruction's address
    m, res = run("nop\nhere\nnop\nset", here="r[1] = i32(pc); pc = pc + 8; r[2] = i32(pc)", set="r[3] = 1")
    assert res.status == "halted"
    assert r(m, 1) == 4 and r(m, 2) == 4 and r(m, 3) == 1
    assert res.counts == {"NOP": 1, "HERE": 1, "SET": 1}


@pytest.mark.parametrize("target,message", [
    (0x1000, "pc 0x1000 is outside the program"),
    (2, "pc 0x2 is not at the start of an instruction"),
])
def test_bad_pc_traps(target, message):
    m, res = run("jr\nnop", regs(u={1: target}), jr="pc = u[1]")
    assert res.status == "trap" and res.trap.message == message and res.trap.kind == "pc"
    assert res.trap.pc == target and res.steps == 1


def test_undecodable_word_traps():
    m, res = run("nop\n.word 0xff000000")
    assert res.status == "trap" and res.trap.kind == "illegal"
    assert res.trap.message == "illegal instruction 0xff000000"
    assert res.trap.pc == 4 and res.steps == 1
    assert res.trap.line is None  # a data word: the program has no instruction record for it


def test_require_and_trap_statements():
    m, res = run("a\nb", None, a="require u[1] == 0 : \"u1 must be zero\"; r[1] = 1",
                 b="trap \"never here\"")
    assert res.status == "trap" and res.trap.kind == "user" and res.trap.message == "never here"
    assert res.trap.pc == 4 and r(m, 1) == 1
    m, res = run("a", regs(u={1: 3}), a="require u[1] == 0 : \"u1 must be zero\"; r[1] = 1")
    assert res.trap.kind == "require" and res.trap.message == "u1 must be zero" and r(m, 1) == 0


def test_a_stopped_machine_stays_stopped():
    m, res = run("a", regs(u={1: 3}), a="require u[1] == 0 : \"u1 must be zero\"")
    assert m.step() == "trap" and m.run(10).status == "trap" and m.run(10).trap == res.trap


# ---- loading --------------------------------------------------------------------------------------------

def test_load_copies_sections_into_byte_memory_and_starts_at_entry():
    s = spec(set="r[1] = 1")
    prog = assembler(s).assemble(".word 0x01020304\nset")
    m = RefMachine(s)
    m.arrays["ram"][0x80] = 0xAA
    m.load(prog)
    assert m.arrays["ram"][:4].tolist() == [4, 3, 2, 1] and m.arrays["ram"][0x80] == 0xAA
    assert m.pc == 0


def _at_0x10000():
    import isadl
    from .common import HEAD
    return isadl.load_text(HEAD % """
  instruction SET { syntax "set"; encoding F(op=16); semantics { r[1] = r[1] + 1 } }
  abi { entry 0x10000 }""", "entry.isa")


def test_text_outside_every_memory_runs_from_an_instruction_store():
    s = _at_0x10000()
    m = machine(s, "set\nset")
    assert m.pc == 0x10000
    res = m.run()
    assert res.status == "halted" and r(m, 1) == 2 and m.pc == 0x10008
    assert not m.arrays["ram"].any()


def test_data_outside_every_memory_is_a_load_error():
    """The assembler refuses such a section (located); a program built otherwise is refused on load."""
    from kcgen.asm.program import Section
    s = _at_0x10000()
    with pytest.raises(isadl.IsaError, match="outside every memory"):
        assembler(s).assemble("set\n.data\n.word 5")
    prog = assembler(s).assemble("set\n")
    prog.sections[".data"] = Section(".data", 0x10010, bytearray(b"\x05\0\0\0"))
    with pytest.raises(LoadError, match="section .data"):
        RefMachine(s).load(prog)


def test_source_is_readable_python():
    m = RefMachine(fixture("rv32i_mini"))
    src = m.source("ADD")
    assert src.startswith("def I_ADD(m, A, o):")
    assert "S_x.put(A, (o_rd,)" in src
    with pytest.raises(KeyError):
        m.source("NOPE")
