"""Shared helpers for the simulator tests: the fixtures, and a small inline test ISA whose
instructions take no operands, so a test writes only the semantics it is about."""
from __future__ import annotations

import functools
from pathlib import Path

import isadl
from kcgen.asm import Assembler
from kcgen.sim.pyref import RefMachine

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = sorted((ROOT / "tests" / "isadl" / "fixtures").glob("*.isa"))


@functools.lru_cache(maxsize=None)
def fixture(stem: str):
    return isadl.load(ROOT / "tests" / "isadl" / "fixtures" / f"{stem}.isa")


HEAD = """
isa t "pyref test machine" {
  word 32
  endian little
  float bf16(exp=8, man=7)
  float e4m3(exp=4, man=3, finite)
  float e8m0(exp=8, man=0, unsigned, finite)
  mx mxfp8(elem=e4m3, scale=e8m0, block=8)
  regs r[8]: i32 { asm "r{n}"; zero r0 }
  regs u[8]: u32 { asm "u{n}" }
  regs q[4]: i64 { asm "q{n}" }
  regs s[4]: i8 { asm "s{n}" }
  regs f[4]: f32 { asm "f{n}" }
  regs d[4]: f64 { asm "d{n}" }
  regs b[4]: bf16 { asm "b{n}" }
  regs e[4]: e4m3 { asm "e{n}" }
  regs v[4]: u8[4] { asm "v{n}" }
  regs lo[4]: u8 { asm "lo{n}" }
  regs hi[4]: u8 { asm "hi{n}" }
  regs w[4]: u16 { group lo[n], hi[n] }
  regs bl[2]: u8[2] { asm "bl{n}" }
  regs bh[2]: u8[2] { asm "bh{n}" }
  regs bw[2]: u8[4] { group bl[n], bh[n] }
  state t8: i8
  state flag: bool
  state m2[2][3]: u16
  memory ram: u8[256] { base 0; align 4 }
  format F { op 31:24; ignore 23:0 }
  format JF { op 31:24; t 23:0 }
  dialect { labels named; directives .word, .text, .data }
  instruction J { syntax "j {t:pcrel24}"; encoding JF(op=1, t); semantics { pc = t } }
  instruction NOP { syntax "nop"; encoding F(op=2); semantics { } }
%s
}
"""


@functools.lru_cache(maxsize=None)
def _spec(items: tuple) -> isadl.Spec:
    body = []
    for k, (name, sem) in enumerate(items):
        body.append(f'  instruction {name.upper()} {{ syntax "{name}"; encoding F(op={16 + k}); '
                    f'semantics {{ {sem} }} }}')
    return isadl.load_text(HEAD % "\n".join(body), "pyref_test.isa")


def spec(**insns: str) -> isadl.Spec:
    """The test ISA with one operand-less instruction per keyword: name="semantics"."""
    return _spec(tuple(sorted(insns.items())))


_ASSEMBLERS: dict[int, tuple] = {}


def assembler(s) -> Assembler:
    hit = _ASSEMBLERS.get(id(s))
    if hit is None or hit[0] is not s:
        hit = _ASSEMBLERS[id(s)] = (s, Assembler(s))
    return hit[1]


def machine(s, code: str, setup=None) -> RefMachine:
    m = RefMachine(s)
    m.load(assembler(s).assemble(code, "test.s"))
    if setup is not None:
        setup(m)
    return m


def view(m: RefMachine, name: str):
    """A store in its own dtype (bfloat16 for bf16, ...): write floats into it directly."""
    return m.layout.stores[name].numpy_view(m.arrays[name])


def run(code: str, setup=None, max_steps: int = 1000, **insns: str):
    """Build the test ISA with `insns`, run `code` on a fresh RefMachine; (machine, result)."""
    m = machine(spec(**insns), code, setup)
    return m, m.run(max_steps)


def go(semantics: str, setup=None, **extra: str) -> RefMachine:
    """Run one instruction `go` with the given semantics; it must not trap."""
    m, res = run("go", setup, go=semantics, **extra)
    assert res.status == "halted", res.trap
    return m
