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


OOO_MEM = """
isa toom "out-of-order timing test machine: a memory port, an FP pipe, an iterative divider" {
  word 32
  param ROB = 16
  regs r[8]: u32 { asm "r{n}" }
  memory m: u32[4096]
  format R { op 5:0; rd 8:6; rs1 11:9; rs2 14:12; ignore 31:15 }
  format B { op 5:0; rs1 8:6; off 31:9 }
  timing ooo {
    unit alu count 2 pipelined
    unit mem pipelined
    unit fpu pipelined
    unit div
    width = 3
    rob = ROB
    commit_width = 3
    mispredict_penalty = 5
  }
  instruction ADD { syntax "add {rd:r}, {rs1:r}, {rs2:r}"; encoding R(op=1, rd, rs1, rs2)
    unit alu; cycles 1; latency 1; semantics { r[rd] = r[rs1] + r[rs2] } }
  instruction DEC { syntax "dec {rd:r}, {rs1:r}"; encoding R(op=2, rd, rs1, rs2=0)
    unit alu; cycles 1; latency 1; semantics { r[rd] = r[rs1] - 1 } }
  instruction LD { syntax "ld {rd:r}, {rs1:r}"; encoding R(op=3, rd, rs1, rs2=0)
    unit mem; cycles 1; latency 4; semantics { r[rd] = m[r[rs1] & 4095] } }
  instruction ST { syntax "st {rs2:r}, {rs1:r}"; encoding R(op=4, rd=0, rs1, rs2)
    unit mem; cycles 1; latency 1; semantics { m[r[rs1] & 4095] = r[rs2] } }
  instruction MAX { syntax "max {rd:r}, {rs1:r}, {rs2:r}"; encoding R(op=5, rd, rs1, rs2)
    unit fpu; cycles 1; latency 2; semantics { r[rd] = r[rs1] > r[rs2] ? r[rs1] : r[rs2] } }
  instruction FADD { syntax "fadd {rd:r}, {rs1:r}, {rs2:r}"; encoding R(op=6, rd, rs1, rs2)
    unit fpu; cycles 1; latency 4; semantics { r[rd] = r[rs1] + r[rs2] } }
  instruction DIV { syntax "div {rd:r}, {rs1:r}, {rs2:r}"; encoding R(op=7, rd, rs1, rs2)
    unit div; cycles 4; latency 4; semantics { r[rd] = r[rs2] == 0 ? 0 : r[rs1] / r[rs2] } }
  instruction WAIT { syntax "wait {rd:r}, {rs1:r}"; encoding R(op=8, rd, rs1, rs2=0)
    unit alu; cycles 1; latency 1000; semantics { r[rd] = r[rs1] + 1 } }
  instruction LONG { syntax "long {rd:r}, {rs1:r}"; encoding R(op=9, rd, rs1, rs2=0)
    unit alu; cycles 1; latency 5000; semantics { r[rd] = r[rs1] + 1 } }
  instruction BNZ { syntax "bnz {rs1:r}, {off:pcrel23}"; encoding B(op=10, rs1, off)
    unit alu; cycles 1; latency 1; semantics { if r[rs1] != 0 { pc = off } } }
  instruction HALT { syntax "halt"; encoding R(op=11, rd=0, rs1=0, rs2=0)
    unit alu; cycles 1; latency 1; semantics { halt } }
}
"""
# In the schedules below: d = dispatch cycle (three per cycle, in program order), t = issue cycle,
# done = t + latency; retire is in order, three per cycle; the run ends at the last retirement.


def test_ooo_load_store_loop_overlaps_iterations():
    # The flw; fmax.s; fsw loop, twice (r1 = 2). The store's address part takes the memory port as
    # soon as its address is ready; its data only delays its retirement.
    #   ld  r2    d0  t0 (port 0)            done 4
    #   max r4    d0  t4 (r2)                done 6
    #   st  r4    d0  t1 (port 0 taken)      done max(1, 6) + 1 = 7
    #   dec r1    d1  t1                     done 2
    #   bnz       d1  t2 (r1), taken as predicted (backward)
    #   ld  r2    d1  t2 (port 1 taken by the store address)  done 6
    #   max r4    d2  t6                     done 8
    #   st  r4    d2  t3 (port 2 taken)      done max(3, 8) + 1 = 9
    #   dec r1    d2  t2 (second ALU)        done 3
    #   bnz       d3  t3, not taken: mispredicted, dispatch resumes at 4 + 5 = 9
    #   halt      d9  t9                     done 10
    # Retirement: 4, 6, 7, 7, 7, 8, 8, 9, 9, 9, 10 -> 10 cycles. (One "next free" time per unit
    # made the second load wait behind the first store, issued at 6: 15 cycles.)
    program = "loop:\nld r2, r3\nmax r4, r2, r5\nst r4, r6\ndec r1, r1\nbnz r1, loop\nhalt"
    assert cycles(OOO_MEM, program, regs={1: 2}) == 10


def test_ooo_load_is_not_held_up_by_a_store_waiting_for_data():
    # fadd d0 t0 done 4; st (data r4 at 4, address ready) d0 t0 done 5; ld d0 t1 (port 0 taken)
    # done 5; add d1 t5 done 6; halt d1 t1 done 2. Retirement 4, 5, 5, 6, 6 -> 6.
    # (Issuing the whole store when its data is ready put it on the port at 4 and the load at 5: 10.)
    program = "fadd r4, r5, r5\nst r4, r6\nld r2, r3\nadd r1, r2, r2\nhalt"
    assert cycles(OOO_MEM, program) == 6


def test_ooo_load_overtakes_a_store_waiting_for_its_address():
    # div d0 t0 done 4 (r6); st r2 to m[r6]: d0, address ready at 4: port 4, done 5; the load after
    # it is ready at once and takes port 0: done 4; add d1 t4 done 5; halt d1 t1 done 2.
    # Retirement 4, 5, 5, 5, then the fourth at 5 spills to 6 -> 6 (in program order the load
    # would have waited for port 5: 10).
    program = "div r6, r7, r7\nst r2, r6\nld r3, r0\nadd r4, r3, r3\nhalt"
    assert cycles(OOO_MEM, program) == 6


def test_ooo_iterative_divider_books_consecutive_cycles():
    # ld d0 t0 done 4; max d0 t4 done 6 (r1); div r2 (needs r1) d0: cycles 6..9, done 10;
    # div r3 d1: cycles 1..4 are free, done 5; div r4 d1: the gap 5 is too short for 4 cycles and
    # 6..9 are booked: cycles 10..13, done 14; halt d1 t1 done 2. The last retires at 14.
    # (One "next free" time: div r3 after div r2 at 10, div r4 at 14: 18.)
    program = "ld r1, r0\nmax r1, r1, r1\ndiv r2, r1, r7\ndiv r3, r5, r7\ndiv r4, r6, r7\nhalt"
    assert cycles(OOO_MEM, program) == 14


def test_ooo_bookings_past_the_calendar():
    # The calendar covers 4096 cycles from the dispatch cycle (rounded down to a multiple of 64).
    # long: r1 ready at 5000; max (d0) issues at 5000, past the calendar (0..4095), r2 ready at 5002;
    # div r3 (d0) books cycles 5002..5005 in the divider's overflow range, done 5006. wait (d1):
    # r4 ready at 1001; bnz r4 (d1) t1001, done 1002, taken forward: mispredicted, dispatch resumes
    # at 1007 and the calendar moves to 960..5055, marking 5002..5005 booked. div r5 (independent,
    # d1007): cycles 1007..1010. div r6 (needs r1, d1007): 5000..5003 would overlap 5002, so
    # 5006..5009, done 5010; the add is skipped; halt d1007 done 1008. The last retires at 5010.
    # (One "next free" time per unit: div r5 after div r3 at 5006, div r6 at 5010: 5014.)
    program = ("long r1, r0\nmax r2, r1, r1\ndiv r3, r2, r7\nwait r4, r5\nbnz r4, skip\nadd r5, r5, r5\n"
               "skip:\ndiv r5, r0, r7\ndiv r6, r1, r7\nhalt")
    assert cycles(OOO_MEM, program) == 5010
    # Without the move: both dependent divides book past the calendar, the second after the first
    # (the latest such booking: 5004..5007), and the independent one runs at 1..4 meanwhile: 5008.
    # (One "next free" time per unit: the independent divide after both, 5012.)
    program = "long r1, r0\ndiv r2, r1, r7\ndiv r3, r1, r7\ndiv r4, r5, r7\nhalt"
    assert cycles(OOO_MEM, program) == 5008


def test_ooo_window_limits_still_hold():
    # The ROB still bounds the window: with two entries the load dispatches when fadd retires (4),
    # takes port 4 and is done at 8 (halt dispatches at 5, when the store retires) ...
    program = "fadd r4, r5, r5\nst r4, r6\nld r2, r3\nhalt"
    assert cycles(OOO_MEM, program, (("ROB", 2),)) == 8
    # ... and with sixteen it dispatches at 0 and takes port 1: done 5 (retirement 4, 5, 5, 5)
    assert cycles(OOO_MEM, program) == 5
    # three dispatched per cycle, two ALUs: adds issue at 0, 0, 1 | 1, 2, 2; halt (d2) at 3, done 4
    program = "".join(f"add r{k}, r0, r0\n" for k in range(1, 7)) + "halt"
    assert cycles(OOO_MEM, program) == 4


# ---- the ooo model against a direct statement of it, on random straight-line programs ------------------
_OPS = {"add": ("alu", 1), "dec": ("alu", 1), "ld": ("mem", 4), "st": ("mem", 1), "max": ("fpu", 2),
        "fadd": ("fpu", 4), "div": ("div", 4), "halt": ("alu", 1)}  # unit, latency (div: 4 cycles)
_COPIES = {"alu": 2, "mem": 1, "fpu": 1, "div": 1}


def _ooo_reference(program: list, rob: int) -> int:
    """OOO_MEM's cycle count as docs/simulator.md states the ooo model: dispatch three per cycle while
    the ROB has room; issue at the first cycle with the operands ready and a unit copy free for its
    slots (a set of booked cycles per copy, no horizon); a store's data only delays its completion;
    retire in order, three per cycle."""
    ready, booked, entry = [0] * 8, {u: [set() for _ in range(n)] for u, n in _COPIES.items()}, [0] * rob
    now = dispatched = retire = retired = 0
    for k, (op, rd, rs1, rs2) in enumerate(program):
        unit, lat = _OPS[op]
        if entry[k % rob] > now:
            now, dispatched = entry[k % rob], 0
        t = now
        dispatched += 1
        if dispatched == 3:
            now, dispatched = now + 1, 0
        data = 0
        if op == "st":  # st rs2, rs1: address r[rs1], data r[rs2]
            t = max(t, ready[rs1])
            data = ready[rs2] if rs2 != rs1 else 0
        elif op in ("ld", "dec"):
            t = max(t, ready[rs1])
        elif op != "halt":
            t = max(t, ready[rs1], ready[rs2])
        slots = 4 if op == "div" else 1
        start, copy = min((next(s for s in range(t, t + 10 ** 6) if not booked[unit][c] & set(range(s, s + slots))), c)
                          for c in range(_COPIES[unit]))
        booked[unit][copy] |= set(range(start, start + slots))
        done = max(start, data) + lat
        if done > retire:
            retire, retired = done, 0
        retired += 1
        if retired > 3:
            retire, retired = retire + 1, 1
        entry[k % rob] = retire
        if op not in ("st", "halt"):
            ready[rd] = done
    return max(now, retire, *ready)


@pytest.mark.parametrize("seed", range(24))
def test_ooo_matches_its_statement_on_random_programs(seed):
    import random
    rng = random.Random(seed)
    rob = rng.choice([2, 4, 16, 64])
    ops = ["add", "dec", "ld", "st", "max", "fadd", "div", "ld", "st", "fadd"] + ["div"] * rng.randint(0, 3)
    program = [(rng.choice(ops), rng.randrange(8), rng.randrange(8), rng.randrange(8))
               for _ in range(rng.randint(1, 300))]
    text = {"ld": "ld r{0}, r{1}", "dec": "dec r{0}, r{1}", "st": "st r{2}, r{1}"}
    source = "\n".join(text.get(op, op + " r{0}, r{1}, r{2}").format(rd, rs1, rs2) for op, rd, rs1, rs2 in program)
    expected = _ooo_reference(program + [("halt", 0, 0, 0)], rob)
    assert cycles(OOO_MEM, source + "\nhalt", (("ROB", rob),)) == expected


# ---- the properties a timing section records but no simulator reads ---------------------------------------
RECORDED = [("boom", "fetch_width = FETCH_WIDTH", "fetch_width = 3"), ("boom", "iq = INT_IQ", "iq = 5"),
            ("boom", "lsq = LDQ", "lsq = 7"), ("plena", "clock_mhz = 1000", "clock_mhz = 500"),
            ("plena", "dma_latency = HBM_LATENCY", "dma_latency = 3"),
            ("plena", "hbm_bytes_per_cycle = HBM_BYTES_PER_CYCLE", "hbm_bytes_per_cycle = 5"),
            ("amdnpu", "load_latency = LOAD_LAT", "load_latency = 3")]


@pytest.mark.parametrize("target,prop,changed", RECORDED)
def test_a_recorded_timing_property_changes_nothing(target, prop, changed):
    """docs/isadl.md section 8: the generated simulator is the same whatever the value of a property the
    model does not read, and the generated docs say it is not simulated."""
    from isadl.check import TIMING_MODELLED
    from kcgen.paths import TARGETS
    from kcgen.sim.cgen import CGen
    path = TARGETS / f"{target}.isa"
    text = path.read_text(encoding="utf-8")
    assert text.count(prop) == 1
    spec = isadl.load(path)
    name = prop.split()[0]
    assert name not in TIMING_MODELLED[spec.isa.timing.model]
    variant = isadl.load_text(text.replace(prop, changed), str(path))
    assert CGen(spec).generate_files() == CGen(variant).generate_files()
    from kcgen.docs import render_markdown
    row = next(line for line in render_markdown(spec).splitlines() if line.startswith(f"| `{name}` |"))
    assert row.endswith("| no: recorded, the simulators ignore it |"), row
