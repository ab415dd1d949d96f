"""Timing models on tiny programs, against cycle counts worked out by hand.

Each ISA below is made for the test: a few instructions whose unit, cycles and latency make the
expected count easy to follow. The comment above each case gives the schedule.
"""
from __future__ import annotations

import functools

import pytest

import isadl
from kcgen.asm import Assembler
from kcgen.sim.simulator import Simulator

INORDER = """
isa tim "timing test machine" {
  word 32
  param ISSUE = 1
  regs r[8]: u32 { asm "r{n}" }
  memory m: u32[4096]
  format R { op 5:0; rd 8:6; rs1 11:9; rs2 14:12; ignore 31:15 }
  format B { op 5:0; rs1 8:6; off 31:9 }
  timing inorder {
    unit alu
    unit mul pipelined
    unit div
    unit mem
    unit dma async queue 1
    issue_width = ISSUE
    branch_penalty = 2
  }
  instruction ADD { syntax "add {rd:r}, {rs1:r}, {rs2:r}"; encoding R(op=1, rd, rs1, rs2)
    unit alu; cycles 1; latency 1; semantics { r[rd] = r[rs1] + r[rs2] } }
  instruction MUL { syntax "mul {rd:r}, {rs1:r}, {rs2:r}"; encoding R(op=2, rd, rs1, rs2)
    unit mul; cycles 1; latency 3; semantics { r[rd] = r[rs1] * r[rs2] } }
  instruction DIV { syntax "div {rd:r}, {rs1:r}, {rs2:r}"; encoding R(op=3, rd, rs1, rs2)
    unit div; cycles 4; latency 4; semantics { r[rd] = r[rs2] == 0 ? 0 : r[rs1] / r[rs2] } }
  instruction LD { syntax "ld {rd:r}, {rs1:r}"; encoding R(op=4, rd, rs1, rs2=0)
    unit mem; cycles 1; latency 2; semantics { r[rd] = m[r[rs1]] } }
  instruction DMA { syntax "dma {rs1:r}"; encoding R(op=5, rd=0, rs1, rs2=0)
    unit dma; cycles 1; latency 50
    semantics { for i in 0..64 { m[r[rs1] + i] = u32(i) } } }
  instruction BNZ { syntax "bnz {rs1:r}, {off:pcrel23}"; encoding B(op=6, rs1, off)
    unit alu; cycles 1; latency 1; semantics { if r[rs1] != 0 { pc = off } } }
  instruction HALT { syntax "halt"; encoding R(op=7, rd=0, rs1=0, rs2=0)
    unit alu; cycles 1; latency 1; semantics { halt } }
}
"""

OOO = """
isa too "out-of-order timing test machine" {
  word 32
  param ROB = 8
  param COMMIT = 2
  regs r[8]: u32 { asm "r{n}" }
  format R { op 5:0; rd 8:6; rs1 11:9; rs2 14:12; ignore 31:15 }
  format B { op 5:0; rs1 8:6; off 31:9 }
  timing ooo { unit alu count 2; unit mul pipelined; width = 2; rob = ROB; commit_width = COMMIT; mispredict_penalty = 5 }
  instruction ADD { syntax "add {rd:r}, {rs1:r}, {rs2:r}"; encoding R(op=1, rd, rs1, rs2)
    unit alu; cycles 1; latency 1; semantics { r[rd] = r[rs1] + r[rs2] } }
  instruction MUL { syntax "mul {rd:r}, {rs1:r}, {rs2:r}"; encoding R(op=2, rd, rs1, rs2)
    unit mul; cycles 1; latency 3; semantics { r[rd] = r[rs1] * r[rs2] } }
  instruction BNZ { syntax "bnz {rs1:r}, {off:pcrel23}"; encoding B(op=6, rs1, off)
    unit alu; cycles 1; latency 1; semantics { if r[rs1] != 0 { pc = off } } }
  instruction HALT { syntax "halt"; encoding R(op=7, rd=0, rs1=0, rs2=0)
    unit alu; cycles 1; latency 1; semantics { halt } }
}
"""


@functools.lru_cache(maxsize=None)
def _machine(text: str, defines: tuple = ()):
    spec = isadl.load_text(text, "<timing test>", dict(defines))
    return spec, Assembler(spec), Simulator(spec)


def cycles(text: str, program: str, defines: tuple = (), regs: dict | None = None) -> int:
    spec, asm, sim = _machine(text, defines)
    sim.arrays["r"][:] = 0
    for i, v in (regs or {}).items():
        sim.arrays["r"][i] = v
    sim.load(asm.assemble(program))
    result = sim.run(10_000)
    assert result.status == "halted", result
    return result.cycles


@pytest.mark.parametrize("program, expected", [
    # three independent one-cycle instructions issue at 0, 1, 2; the last result is ready at 3
    ("add r1, r2, r3\nadd r4, r5, r6\nhalt", 3),
    # add r4 waits for r1 (ready at 1): issue 0, 1; halt at 2
    ("add r1, r2, r3\nadd r4, r1, r1\nhalt", 3),
    # mul latency 3: r1 ready at 3, the dependent add issues at 3 (ready 4), halt at 4 → 5
    ("mul r1, r2, r3\nadd r4, r1, r1\nhalt", 5),
    # the pipelined multiplier takes one per cycle: mul at 0 (ready 3), mul at 1 (ready 4); halt at 2
    ("mul r1, r2, r3\nmul r4, r5, r6\nhalt", 4),
    # the divider is busy 4 cycles: div at 0, the next div at 4 (ready 8); halt issues at 5
    ("div r1, r2, r3\ndiv r4, r5, r6\nhalt", 8),
    # an independent instruction does not wait for the divider: div 0 (ready 4), add 1, halt 2
    ("div r1, r2, r3\nadd r4, r5, r6\nhalt", 4),
    # the DMA returns at once (issue 0) and its data lands at 50; a load from that block waits: 50 → 52
    ("dma r0\nld r1, r0\nhalt", 52),
    # independent work goes on while the DMA runs; the run ends when the DMA lands at 50
    ("dma r0\nadd r1, r2, r3\nhalt", 50),
    # a load outside the DMA's 64-element block does not wait: dma 0, ld 1 (ready 3), halt 2
    ("dma r0\nld r1, r7\nhalt", 50),
    # queue 1: the second DMA waits for the first to land (50) and lands at 100
    ("dma r0\ndma r7\nhalt", 100),
])
def test_inorder(program, expected):
    assert cycles(INORDER, program, regs={7: 128}) == expected


def test_inorder_issue_width_two():
    program = "add r1, r0, r0\nmul r2, r0, r0\nadd r3, r0, r0\nmul r4, r0, r0\nhalt"
    # two per cycle on different units: add, mul at 0; add, mul at 1 (ready 4); halt at 2
    assert cycles(INORDER, program, (("ISSUE", 2),)) == 4
    # one per cycle: add 0, mul 1, add 2, mul 3 (ready 6), halt 4
    assert cycles(INORDER, program) == 6
    # one ALU that is busy for its one cycle: two adds cannot issue together even when two may
    assert cycles(INORDER, "add r1, r0, r0\nadd r2, r0, r0\nhalt", (("ISSUE", 2),)) == 3


def test_inorder_branch_penalty():
    # r1 = 2: bnz taken at 0 (+2 penalty: the next issue is at 3), add at 3 ... taken again at 4 → 7,
    # then bnz falls through at 8 (r1 = 0) and halt issues at 9, ready 10
    program = "loop:\nadd r1, r1, r2\nbnz r1, loop\nhalt"
    # r2 = -1 (all ones): the add counts r1 down
    spec, asm, sim = _machine(INORDER)
    sim.arrays["r"][:] = 0
    sim.arrays["r"][1] = 3
    sim.arrays["r"][2] = 0xFFFFFFFF
    sim.load(asm.assemble(program))
    r = sim.run(100)
    # iteration k: add at a_k, bnz at a_k + 1; taken → next add at a_k + 4. a = 0, 4, 8 (r1: 2, 1, 0)
    # the last bnz (not taken) issues at 9, halt at 10, ready 11
    assert r.status == "halted" and r.cycles == 11
    assert r.counts == {"ADD": 3, "BNZ": 3, "HALT": 1}


def test_inorder_unit_busy_counts_cycles():
    spec, asm, sim = _machine(INORDER)
    sim.load(asm.assemble("div r1, r2, r3\ndiv r4, r5, r6\nmul r1, r1, r1\nhalt"))
    r = sim.run(100)
    assert r.unit_busy["div"] == 8 and r.unit_busy["mul"] == 1 and r.unit_busy["alu"] == 1


@pytest.mark.parametrize("program, rob, commit, expected", [
    # two independent adds per cycle on two ALUs: 0, 0, 1, 1; halt dispatched at 2, done 3
    ("add r1, r0, r0\nadd r2, r0, r0\nadd r3, r0, r0\nadd r4, r0, r0\nhalt", 8, 2, 3),
    # mul (done 3), dependent add (3 → 4); the independent add and halt finish at 2 but retire in
    # order: at 4 only two may retire (add, add), so halt retires at 5 ...
    ("mul r1, r2, r3\nadd r4, r1, r1\nadd r5, r6, r6\nhalt", 8, 2, 5),
    # ... and at 4 when four may retire per cycle
    ("mul r1, r2, r3\nadd r4, r1, r1\nadd r5, r6, r6\nhalt", 8, 4, 4),
    # independent adds behind a mul: everything retires with the mul at 3 ...
    ("mul r1, r2, r3\nadd r4, r5, r5\nadd r6, r7, r7\nhalt", 8, 4, 3),
    # ... unless the ROB has two entries: the second add dispatches when the mul retires (3) → 4
    ("mul r1, r2, r3\nadd r4, r5, r5\nadd r6, r7, r7\nhalt", 2, 4, 4),
])
def test_ooo(program, rob, commit, expected):
    assert cycles(OOO, program, (("ROB", rob), ("COMMIT", commit))) == expected


def test_ooo_forward_taken_branch_is_a_mispredict():
    # bnz forward and taken: predicted not taken; it resolves at 1, dispatch resumes at 1 + 5 = 6,
    # halt dispatched at 6, done 7
    program = "bnz r1, skip\nadd r2, r2, r2\nskip:\nhalt"
    assert cycles(OOO, program, regs={1: 1}) == 7
    # not taken: predicted right, no penalty: bnz 0, add 0, halt 1 → 2
    assert cycles(OOO, program, regs={1: 0}) == 2


def test_vliw_bundle_waits_for_operands():
    spec = isadl.load("tests/isadl/fixtures/vliw_mini.isa")
    asm, sim = Assembler(spec), Simulator(spec)
    # mov (latency 1) then an add that reads it: bundles at 0 and 1; done at 2 → 3
    sim.load(asm.assemble("mov r1, #5\nadd r2, r1, r1\ndone"))
    r = sim.run(100)
    assert r.status == "halted" and r.cycles == 3 and sim.arrays["r"][2] == 10
    # vmac has latency 6: a vsrs reading its accumulator waits until 6; done at 7 → 8
    sim.load(asm.assemble("vmac cm0, cm1, x1, x2\nvsrs.s8.s32 wl0, cm0, #0\ndone"))
    r = sim.run(100)
    assert r.status == "halted" and r.cycles == 8
