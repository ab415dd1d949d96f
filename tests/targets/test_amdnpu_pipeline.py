"""amdnpu microbenchmarks: cycles and values derived by hand from the rules of targets/amdnpu.isa
(deviation 5, the timing doc): one bundle per cycle and nothing waits for a register -- a result
written through an operand lands `latency` cycles after its bundle issues and a read before then sees
the old value (the exposed pipeline); the vector ALU forwards to the vector ALU one cycle early
(bypass mov) and the MAC family's accumulator to the MAC family three cycles early (bypass acc 3);
jumps have 5 delay slots; zero-overhead loops cost nothing; the run ends when the last result has
landed. The same programs on the interlocked variant (EXPOSED = 0) wait instead."""
from __future__ import annotations

import functools

import numpy as np
import pytest

import isadl
from kcgen.asm import Assembler
from kcgen.paths import TARGETS
from kcgen.sim.pyref import RefMachine
from kcgen.sim.simulator import Simulator


@functools.lru_cache(maxsize=None)
def machine(exposed: int = 1):
    spec = isadl.load(str(TARGETS / "amdnpu.isa"), defines={"EXPOSED": exposed})
    return Assembler(spec), Simulator(spec), RefMachine(spec)


def run(text: str, exposed: int = 1, ref: bool = False):
    """(cycles, arrays) of `text` from a cleared machine: p0 = 0x2000, r0 = 0x308 (int8 x int8 MACs),
    r2 = 3, r3 = 5, lane 0 of x0 and x1 = 1, the word at 0x2000 = 7."""
    asm, sim, pyref = machine(exposed)
    m = pyref if ref else sim
    m.load(asm.assemble(text, "bench.s"))
    for a in m.arrays.values():
        a[...] = 0
    m.arrays["p"][0] = 0x2000
    m.arrays["r"][[0, 2, 3]] = [0x308, 3, 5]
    m.arrays["wl"][0][0] = m.arrays["wl"][1][0] = 1
    m.arrays["dm"][0x2000] = 7
    res = m.run(10_000)
    assert res.status == "halted", res
    return (None if ref else res.cycles), m.arrays


def acc0(arrays) -> int:
    """Lane 0 of cm0 (int8 MACs: an int32 in the low quarter)."""
    return int(np.int32(arrays["amll"][0][0]))


def nops(n: int) -> str:
    return "nop\n" * n


CASES = [
    # (program, cycles, what the state shows, why)
    ("vlda wl0, [p0, #0]\nvmul cm0, x0, x1, r0\ndone", 7, lambda A: acc0(A) == 1 and A["wl"][0][0] == 7,
     "vlda in 0 lands in 7; vmul in 1 reads the old x0 (lane 0 = 1): 1 * 1; done in 2; ends at 7"),
    ("vlda wl0, [p0, #0]\n" + nops(6) + "vmul cm0, x0, x1, r0\ndone", 12, lambda A: acc0(A) == 7,
     "vmul in 7 reads the loaded x0 (7 * 1), lands in 12"),
    ("mul r1, r2, r3\nadd r4, r1, r1\ndone", 3, lambda A: A["r"][1] == 15 and A["r"][4] == 0,
     "mul in 0 lands in 2; add in 1 reads the old r1 (0), lands in 2; done in 2; ends at 3"),
    ("mul r1, r2, r3\nnop\nadd r4, r1, r1\ndone", 4, lambda A: A["r"][4] == 30, "add in 2 reads 15"),
    ("vmac cm0, cm0, x0, x1, r0\nvmac cm0, cm0, x0, x1, r0\ndone", 6, lambda A: acc0(A) == 1,
     "second vmac in 1: the accumulator is forwarded from 5 - 3 = 2 cycles on, so it reads the old 0; "
     "both write 0 + 1; lands in 6"),
    ("vmac cm0, cm0, x0, x1, r0\nnop\nvmac cm0, cm0, x0, x1, r0\ndone", 7, lambda A: acc0(A) == 2,
     "second vmac in 2 gets the first's result through the accumulator path: 1 + 1"),
    ("vmac cm0, cm0, x0, x1, r0\nnop\nvsrs.s8.s32 wl3, cm0, s0\ndone", 6, lambda A: A["wl"][3][0] == 0,
     "vsrs is not on the accumulator path: in 2 it reads the old cm0 (0); lands in 2 + 4"),
    ("vsel.16 x1, x0, x0, r17\nvadd.16 x4, x1, x1\ndone", 3,
     lambda A: A["wl"][4][0] == 2,
     "vsel in 0, x1 = x0 from 2 - 1 = 1 on the mov path: vadd in 1 sees it (1 + 1); lands in 3"),
    ("vclr cm0\nvmac cm0, cm0, x0, x1, r0\ndone", 6, lambda A: acc0(A) == 1,
     "vclr is not on the accumulator path: vmac in 1 reads the old cm0"),
]


@pytest.mark.parametrize("text,expected,state,why", CASES)
def test_latency_microbenchmarks(text, expected, state, why):
    cycles, A = run(text)
    assert cycles == expected, why
    assert state(A), why
    _, R = run(text, ref=True)  # the reference interpreter computes the same state
    for name in A:
        assert np.array_equal(A[name], R[name]), (name, why)


@pytest.mark.parametrize("text,cycles,state", [
    # vmul waits to 7 for x0 (7 * 1), lands in 12
    ("vlda wl0, [p0, #0]\nvmul cm0, x0, x1, r0\ndone", 12, lambda A: acc0(A) == 7),
    # add waits to 2 for r1 (15 + 15), lands in 3; done in 3
    ("mul r1, r2, r3\nadd r4, r1, r1\ndone", 4, lambda A: A["r"][4] == 30),
    # the second vmac waits to 5 (the stall rule knows no forwarding): 1 + 1, lands in 10
    ("vmac cm0, cm0, x0, x1, r0\nvmac cm0, cm0, x0, x1, r0\ndone", 10, lambda A: acc0(A) == 2),
])
def test_the_interlocked_variant_waits(text, cycles, state):
    c, A = run(text, exposed=0)
    assert c == cycles
    assert state(A)
    _, R = run(text, exposed=0, ref=True)  # the reference interpreter runs the variant the same way
    for name in A:
        assert np.array_equal(A[name], R[name]), name


def test_a_same_bundle_read_sees_the_old_value():
    # movx (alu slot) and mov (mv slot) in one bundle: mov reads r1 as the bundle issues (0), not the 5
    _, A = run("movx r1, #5 ; mov r6, r1\ndone")
    assert A["r"][1] == 5 and A["r"][6] == 0
    _, R = run("movx r1, #5 ; mov r6, r1\ndone", ref=True)
    assert R["r"][6] == 0


def test_a_jump_costs_its_five_delay_slots():
    # j in 0, its 5 delay slots in 1..5, done (the target) in 6: 7 cycles, the skipped bundle never runs
    text = "j #end\n" + "nop\n" * 5 + "movx r1, #1\nend:\ndone"
    assert run(text)[0] == 7


def test_a_counted_loop_with_jnz_against_a_zero_overhead_loop():
    # jnz: movx, then 4 iterations of add, add, jnz and its 5 delay slots (8 bundles), done: 34 cycles
    jnz = "movx r2, #4\ntop:\nadd r1, r1, #1\nadd r2, r2, #-1\njnz r2, #top\n" + "nop\n" * 5 + "done"
    assert run(jnz)[0] == 34
    # zero-overhead: 3 setup bundles, 4 iterations of the one-bundle body, done: 8 cycles
    zol = "movxm ls, #body\nmovxm le, #body\nmovx lc, #4\nbody:\nadd r1, r1, #1\ndone"
    cycles, A = run(zol)
    assert cycles == 8
    assert A["r"][1] == 4 and A["lc"] == 0
