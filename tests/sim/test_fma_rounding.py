"""`fma` on f32 and narrower formats rounds once, as a fused multiply-add does.

Computed in double and then rounded to the format, a product that lies on a tie of the format plus
a term far below double's precision rounds twice and comes out one unit low. The oracle here is an
independent exact rounding of the rational a * b + c (fractions, round half to even); both
simulators must match it bit for bit, and boom's fmadd.s must give what a RISC-V core gives.
"""
from __future__ import annotations

import functools
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import isadl
from kcgen.asm import Assembler
from kcgen.sim.pyref import RefMachine
from kcgen.sim.simulator import Simulator

ROOT = Path(__file__).resolve().parents[2]
ISA = """
isa fmat "fused multiply-add rounding" {
  word 32
  endian little
  float bf16(exp=8, man=7)
  regs f[4]: f32 { asm "f{n}" }
  regs b[4]: bf16 { asm "b{n}" }
  format R { op 5:0; rd 7:6; ra 9:8; rb 11:10; rc 13:12; ignore 31:14 }
  instruction FMA32 { syntax "fma32 {rd:f}, {ra:f}, {rb:f}, {rc:f}"; encoding R(op=1, rd, ra, rb, rc)
    semantics { f[rd] = fma(f[ra], f[rb], f[rc]) } }
  instruction FMAB { syntax "fmab {rd:b}, {ra:b}, {rb:b}, {rc:b}"; encoding R(op=2, rd, ra, rb, rc)
    semantics { b[rd] = fma(b[ra], b[rb], b[rc]) } }
}
"""


def round_exact(x: Fraction, man: int) -> float:
    """x rounded to nearest, ties to even, in a format with `man` fraction bits and f32's exponent
    range (f32: man 23, bf16: man 7); overflow gives infinity."""
    if x == 0:
        return 0.0
    sign, x = (-1.0 if x < 0 else 1.0), abs(x)
    e = x.numerator.bit_length() - x.denominator.bit_length()  # 2^e <= x < 2^(e + 2)
    while Fraction(2) ** e > x:
        e -= 1
    while Fraction(2) ** (e + 1) <= x:
        e += 1
    e = max(e, -126)  # subnormals keep the quantum of the smallest normal binade
    q = round(x / Fraction(2) ** (e - man))  # Python rounds a Fraction half to even
    if q * Fraction(2) ** (e - man) >= Fraction(2) ** 128:
        return sign * float("inf")
    return sign * float(q * Fraction(2) ** (e - man))


@functools.lru_cache(maxsize=None)
def machines():
    spec = isadl.load_text(ISA, "fmat.isa")
    return spec, Simulator(spec), Assembler(spec)


def run_both(op: str, a: float, b: float, c: float) -> tuple[float, float]:
    """The result of `op r0, r1, r2, r3` on the C simulator and on the reference interpreter."""
    spec, sim, asm = machines()
    reg = "f" if op == "fma32" else "b"
    program = asm.assemble(f"{op} {reg}0, {reg}1, {reg}2, {reg}3\n", "t.s")
    ref = RefMachine(spec)
    ref.load(program)
    sim.load(program)
    ref_view = ref.layout.stores[reg].numpy_view(ref.arrays[reg])  # in the register's own dtype
    for k, v in ((1, a), (2, b), (3, c)):
        sim.view(reg)[k] = v
        ref_view[k] = v
    assert sim.run(10).status == "halted" and ref.run(10).status == "halted"
    return float(sim.view(reg)[0]), float(ref_view[0])


def test_a_product_on_a_tie_plus_a_tiny_term_rounds_up():
    a = b = 1 + 2.0 ** -12  # a * b = 1 + 2^-11 + 2^-24: exactly half an f32 unit above 1 + 2^-11
    c = 2.0 ** -60  # far below double's precision at 1
    want = 1 + 2.0 ** -11 + 2.0 ** -23  # above the tie: up (rounding twice would give 1 + 2^-11)
    assert round_exact(Fraction(a) * Fraction(b) + Fraction(c), 23) == want
    assert run_both("fma32", a, b, c) == (want, want)
    assert run_both("fma32", a, b, -c) == (1 + 2.0 ** -11, 1 + 2.0 ** -11)  # below the tie: down


f32s = st.floats(width=32, allow_nan=False, allow_infinity=False)


@settings(max_examples=300, deadline=None)
@given(a=f32s, b=f32s, c=f32s, tiny=st.integers(-200, 60), near_tie=st.booleans())
def test_fma32_is_correctly_rounded(a, b, c, tiny, near_tie):
    if near_tie:  # a tie-prone product plus a term far below it
        c = float(np.float32(np.ldexp(1.0 if c >= 0 else -1.0, tiny)))
    want = round_exact(Fraction(a) * Fraction(b) + Fraction(c), 23)
    got_c, got_ref = run_both("fma32", a, b, c)
    assert got_c == want or (got_c == 0 and want == 0), (a, b, c)
    assert got_ref == got_c and np.signbit(got_ref) == np.signbit(got_c)


bf16s = st.integers(0, 0xFFFF).map(lambda u: float(np.uint32(u << 16).view(np.float32))).filter(np.isfinite)


@settings(max_examples=300, deadline=None)
@given(a=bf16s, b=bf16s, c=bf16s)
def test_bf16_fma_is_correctly_rounded(a, b, c):
    want = round_exact(Fraction(a) * Fraction(b) + Fraction(c), 7)
    got_c, got_ref = run_both("fmab", a, b, c)
    assert got_c == want or (got_c == 0 and want == 0), (a, b, c)
    assert got_ref == got_c


def test_boom_fmadd_s_rounds_once():
    spec = isadl.load(ROOT / "targets" / "boom.isa")
    sim = Simulator(spec)
    sim.load(Assembler(spec).assemble("fmadd.s fa0, fa1, fa2, fa3\nfmsub.s fa4, fa1, fa2, fa3\n", "t.s"))
    boxed = lambda v: int(np.float32(v).view(np.uint32)) | 0xFFFFFFFF00000000  # noqa: E731
    f = sim.arrays["f"]
    f[11] = f[12] = boxed(1 + 2.0 ** -12)
    f[13] = boxed(2.0 ** -60)
    assert sim.run(10).status == "halted"
    single = lambda b: float(np.uint32(int(b) & 0xFFFFFFFF).view(np.float32))  # noqa: E731
    assert single(f[10]) == 1 + 2.0 ** -11 + 2.0 ** -23
    assert single(f[14]) == 1 + 2.0 ** -11  # a * b - c: below the tie


def test_boom_run_loop_without_its_x86_64_v3_build_computes_the_same(tmp_path, monkeypatch):
    """The run loop's second build (x86-64-v3, where fmaf is one instruction) is what this machine
    runs; the plain build, what other CPUs run, must give the same bits and cycles."""
    from kcgen.asm import Assembler as Asm
    from kcgen.sim import build as build_module
    spec = isadl.load(ROOT / "targets" / "boom.isa")
    program = Asm(spec).assemble(
        "".join(f"fmadd.s f{k}, f{k + 1}, f{k + 2}, f{k + 3}\nfmul.s f{k + 4}, f{k}, f{k + 1}\n" for k in range(0, 20, 5))
        + "fnmsub.s f30, f1, f2, f3\n", "t.s")
    rng = np.random.default_rng(5)
    regs = (np.float32(rng.standard_normal(32)) * np.float32(1 + 2.0 ** -12)).view(np.uint32).astype(np.uint64)
    regs |= np.uint64(0xFFFFFFFF00000000)
    runs = []
    for machine in ("x86_64", "generic"):
        monkeypatch.setenv("KCGEN_CACHE", str(tmp_path / machine))
        monkeypatch.setattr(build_module.platform, "machine", lambda m=machine: m)
        sim = Simulator(spec, build_module.build(spec))
        assert (b"_run_inner_v3" in sim.built.library.read_bytes()) == (machine == "x86_64")
        sim.load(program)
        sim.arrays["f"][:] = regs
        r = sim.run(100)
        runs.append((r.status, r.cycles, sim.arrays["f"].copy()))
    assert runs[0][0] == runs[1][0] == "halted" and runs[0][1] == runs[1][1]
    assert np.array_equal(runs[0][2], runs[1][2])
