"""Delay slots and register-driven zero-overhead loops (docs/simulator.md, "Semantics"; docs/isadl.md,
sections 8 and 11): hand-derived state and cycles on both simulators, on the vliw_ctl fixture
(vliw_mini with `delay_slots = 2` and `hwloop { registers lc, ls, le }`; every operation here has
latency 1, so a run of n bundles takes n cycles). The random C-versus-Python programs of
tests/sim/test_differential.py cover the fixture too."""
from __future__ import annotations

import functools

import pytest

import isadl
from kcgen.asm import Assembler
from kcgen.sim.pyref import RefMachine
from kcgen.sim.simulator import Simulator

from .common import ROOT


@functools.lru_cache(maxsize=None)
def spec():
    return isadl.load(ROOT / "tests" / "isadl" / "fixtures" / "vliw_ctl.isa")


@functools.lru_cache(maxsize=None)
def csim():
    return Simulator(spec())


def run(text: str):
    """(C result, C registers r, Python machine) after running `text` on both."""
    program = Assembler(spec()).assemble(text, "t.s")
    c = csim()
    for a in c.arrays.values():
        a[...] = 0
    c.load(program)
    rc = c.run(1000)
    ref = RefMachine(spec())
    ref.load(program)
    rp = ref.run(1000)
    assert (rc.status, rc.instret) == (rp.status, rp.steps), (rc, rp)
    if rc.status == "trap":
        assert (rc.trap.kind, rc.trap.pc, rc.trap.message) == (rp.trap.kind, rp.trap.pc, rp.trap.message)
    for k in c.arrays:
        assert (c.arrays[k] == ref.arrays[k]).all(), k
    return rc, c.arrays["r"], ref


TAKEN = """
    mov r1, #{cond}
    jnz r1, #tgt
    add r2, r2, #1
    add r3, r3, #1
    add r4, r4, #1
tgt:
    done
"""


def test_a_taken_jump_runs_its_two_delay_slots_then_lands():
    # mov, jnz, the two delay slots, done: 5 bundles, 5 cycles; the bundle after the slots is skipped
    rc, r, _ = run(TAKEN.format(cond=1))
    assert rc.status == "halted" and rc.instret == 5 and rc.cycles == 5
    assert (r[2], r[3], r[4]) == (1, 1, 0)


def test_a_jump_not_taken_runs_on():
    rc, r, _ = run(TAKEN.format(cond=0))
    assert rc.status == "halted" and rc.instret == 6 and rc.cycles == 6
    assert (r[2], r[3], r[4]) == (1, 1, 1)


def test_a_jump_in_the_delay_slots_of_another_traps():
    # mov at 0 (4 bytes), jnz at 4 (8 bytes), the second jnz at 12 is the first delay slot
    rc, _, _ = run("""
        mov r1, #1
        jnz r1, #tgt
        jnz r1, #tgt
        nopx
    tgt:
        done
    """)
    assert rc.status == "trap" and rc.trap.kind == "pc" and rc.trap.pc == 12
    assert "delay slots" in rc.trap.message


SETUP = """
    mov r1, #{count}
    setlc r1
    movxm r1, #body
    setls r1
    movxm r1, #last
    setle r1
"""  # 6 bundles: lc = count, ls = body, le = last

ZOL = SETUP + """
body:
    add r2, r2, #1
last:
    add r3, r3, #2
    done
"""


@pytest.mark.parametrize("count", [1, 3, 7])
def test_a_zero_overhead_loop_runs_its_body_lc_times_at_no_cost(count):
    # 6 setup bundles, 2 body bundles per iteration, done: 6 + 2 count + 1 cycles, no loop-back cost
    rc, r, ref = run(ZOL.format(count=count))
    assert rc.status == "halted" and rc.cycles == 7 + 2 * count == rc.instret
    assert (r[2], r[3]) == (count, 2 * count)
    assert int(ref.arrays["lc"][()]) == 0


def test_a_count_of_zero_runs_the_body_once():
    rc, r, _ = run(ZOL.format(count=0))
    assert rc.status == "halted" and rc.cycles == 9 and (r[2], r[3]) == (1, 2)


def test_a_jump_landing_after_the_loop_end_wins():
    # the jump's second delay slot is the loop end: it lands at `out`, no loop-back, lc stays 3;
    # 6 setup bundles, add, jnz, two slots, done = 11 cycles
    rc, r, ref = run(SETUP.format(count=3) + """
    body:
        add r2, r2, #1
        jnz r1, #out
        add r3, r3, #1
    last:
        add r4, r4, #1
        add r5, r5, #1
    out:
        done
    """)
    assert rc.status == "halted" and rc.cycles == 11
    assert (r[2], r[3], r[4], r[5]) == (1, 1, 1, 0)
    assert int(ref.arrays["lc"][()]) == 3
