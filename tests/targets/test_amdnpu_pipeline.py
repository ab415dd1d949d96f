"""amdnpu microbenchmarks: cycles derived by hand from the rules of targets/amdnpu.isa (one bundle per
cycle; a bundle waits for the registers it reads; results ready `latency` cycles after issue, the
llvm-aie latencies of deviation 5; jumps have 5 delay slots; zero-overhead loops cost nothing; the run
ends when the last result is ready)."""
from __future__ import annotations

import functools

import pytest

import isadl
from kcgen.asm import Assembler
from kcgen.paths import TARGETS
from kcgen.sim.simulator import Simulator


@functools.lru_cache(maxsize=None)
def machine():
    spec = isadl.load(str(TARGETS / "amdnpu.isa"))
    return Assembler(spec), Simulator(spec)


def cycles(text: str) -> int:
    asm, sim = machine()
    for a in sim.arrays.values():
        a[...] = 0
    sim.load(asm.assemble(text, "bench.s"))
    sim.arrays["p"][0] = 0x2000
    sim.arrays["r"][0] = 0x308  # MAC configuration: int8 x int8
    res = sim.run(10_000)
    assert res.status == "halted", res
    return res.cycles


@pytest.mark.parametrize("text,expected,why", [
    ("vlda wl0, [p0, #0]\nvmul cm0, x0, x1, r0\ndone", 12,
     "vlda issues in cycle 0, x0 ready in 7; vmul waits to 7, its result ready in 7 + 5; done in 8"),
    ("vmul cm0, x0, x1, r0\nvsrs.s8.s32 wl3, cm0, s0\ndone", 9,
     "vmul in 0, cm0 ready in 5; vsrs in 5, wl3 ready in 5 + 4; done in 6"),
    ("vmac cm0, cm0, x0, x1, r0\nvmac cm0, cm0, x0, x1, r0\ndone", 6,
     "the accumulator input is not waited for: the second vmac in 1, ready in 6 (llvm-aie: it could issue in 2)"),
    ("vups.s32.s8 cm1, wl2, s0\nvsrs.s8.s32 wl3, cm1, s0\ndone", 7,
     "vups in 0, cm1 ready in 3; vsrs in 3, ready in 3 + 4; done in 4"),
    ("vsel.16 x1, x2, x3, r17\nvadd.16 x4, x1, x1\ndone", 4,
     "vsel in 0, x1 ready in 2; vadd in 2, ready in 4; done in 3 (hardware forwards: 1 less)"),
    ("mul r1, r2, r3\nadd r4, r1, r1\ndone", 4, "mul in 0, ready in 2; add in 2, ready in 3; done in 3, ends 4"),
    ("vclr cm2\nvsrs.s8.s32 wl3, cm2, s0\ndone", 9, "vclr ready in 5; vsrs in 5, ready in 9"),
])
def test_latency_microbenchmarks(text, expected, why):
    assert cycles(text) == expected, why


def test_a_jump_costs_its_five_delay_slots():
    # j in 0, its 5 delay slots in 1..5, done (the target) in 6: 7 cycles, the skipped bundle never runs
    text = "j #end\n" + "nop\n" * 5 + "movx r1, #1\nend:\ndone"
    assert cycles(text) == 7


def test_a_counted_loop_with_jnz_against_a_zero_overhead_loop():
    # jnz: movx, then 4 iterations of add, add, jnz and its 5 delay slots (8 bundles), done: 34 cycles
    jnz = "movx r2, #4\ntop:\nadd r1, r1, #1\nadd r2, r2, #-1\njnz r2, #top\n" + "nop\n" * 5 + "done"
    assert cycles(jnz) == 34
    # zero-overhead: 3 setup bundles, 4 iterations of the one-bundle body, done: 8 cycles
    zol = "movxm ls, #body\nmovxm le, #body\nmovx lc, #4\nbody:\nadd r1, r1, #1\ndone"
    assert cycles(zol) == 8
    _, sim = machine()
    assert sim.arrays["r"][1] == 4 and sim.arrays["lc"] == 0
