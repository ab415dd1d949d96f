"""The wall-clock limit of a simulator run (issue 17, item 10): `Simulator.run(max_steps, seconds=S)`.

An endless kernel with a huge step budget stops at about S seconds with status "timeout" and a
trap saying so, on every target; a run that finishes within its limit is exactly the run without
one (state, cycles, counts); a single instruction that loops long reads the clock itself.
The time bounds are generous: the suite runs on busy machines.
"""
from __future__ import annotations

import functools
import time

import ml_dtypes
import numpy as np
import pytest

import isadl
from kcgen.asm import Assembler
from kcgen.sim.simulator import Simulator

from .common import ROOT, assembler, spec

LIMIT = 0.5
SLACK = 15.0  # seconds a loaded machine may add before the run returns
HUGE = 10 ** 15  # a step budget no run reaches

ENDLESS = {
    "boom": "loop:\n    addi a0, a0, 1\n    j loop\n",
    "coral": "loop:\n    addi a0, a0, 1\n    j loop\n",
    "amdnpu": "loop:\nadd r1, r1, #1\nj #loop\n" + "nop\n" * 5,  # the jump's delay slots
    # no branches on PLENA: three nested hardware loops of 2^22 - 1 iterations each
    "plena": "C_LOOP_START gp1, 4194303\nC_LOOP_START gp2, 4194303\nC_LOOP_START gp3, 4194303\n"
             "S_ADDI_INT gp4, gp4, 1\nC_LOOP_END gp3\nC_LOOP_END gp2\nC_LOOP_END gp1\n",
}

# kernels that finish, over several times a run loop's clock interval (poll_steps <= 65536)
FINITE = {
    "boom": "    li t0, 150000\n    la a1, buf\nloop:\n    addi a0, a0, 3\n    sw a0, 0(a1)\n"
            "    addi t0, t0, -1\n    bne t0, zero, loop\n    ret\n.data\nbuf: .word 0\n",
    "coral": "    li t0, 150000\n    la a1, buf\nloop:\n    addi a0, a0, 3\n    sw a0, 0(a1)\n"
             "    addi t0, t0, -1\n    bne t0, zero, loop\n    ret\n.data\nbuf: .word 0\n",
    "amdnpu": "movxm r1, #0\nmovxm r2, #100000\nmovxm p0, #0xf000\nloop:\nadd r1, r1, #3\nst r1, [p0, #0]\n"
              "add r2, r2, #-1\njnz r2, #loop\n" + "nop\n" * 5 + "done\n",
    "plena": "S_ADDI_INT gp2, gp0, 64\nS_ADDI_INT gp3, gp0, 128\nS_ADDI_INT gp5, gp0, 192\n"
             "C_LOOP_START gp4, 100000\nV_ADD_VV gp5, gp2, gp3\nS_ADDI_INT gp6, gp6, 1\nC_LOOP_END gp4\n",
}


@functools.lru_cache(maxsize=None)
def machine(name: str) -> tuple:
    s = isadl.load(ROOT / "targets" / f"{name}.isa")
    return Simulator(s), Assembler(s)


def fresh(sim: Simulator) -> Simulator:
    """The cached simulator with all storage back at its initial values (loading keeps storage)."""
    for n, a in sim.layout.allocate().items():
        sim.arrays[n][...] = a
    return sim


def timed_run(sim, max_steps, **kw):
    t0 = time.perf_counter()
    r = sim.run(max_steps, **kw)
    return r, time.perf_counter() - t0


@pytest.mark.parametrize("name", ["boom", "coral", "amdnpu", "plena"])
def test_endless_kernel_stops_at_the_wall_clock_limit(name):
    sim, asm = machine(name)
    fresh(sim)
    program = asm.assemble(ENDLESS[name], "endless.s")
    sim.load(program)
    r, took = timed_run(sim, HUGE, seconds=LIMIT)
    assert r.status == "timeout", r
    assert r.trap is not None and r.trap.kind == "timeout"
    assert r.trap.message == f"wall-clock limit of {LIMIT:g} s exceeded"
    assert r.trap.line is not None and r.trap.text  # located like any trap: source line, instruction
    assert LIMIT <= took < LIMIT + SLACK, took
    assert r.instret > 1000
    assert r.cycles is not None and r.cycles >= r.instret // 8  # timing kept counting
    # the machine is left as after a budget stop: it runs on from there
    more = sim.run(1000)
    assert more.status == "budget" and more.instret == r.instret + 1000


@pytest.mark.parametrize("name", ["boom", "coral", "amdnpu", "plena"])
@pytest.mark.parametrize("timed", [True, False])
def test_a_run_within_its_limit_is_the_run_without_one(name, timed):
    sim, asm = machine(name)
    fresh(sim)
    program = asm.assemble(FINITE[name], "finite.s")
    rng = np.random.default_rng(7)
    if name == "plena":
        sim.mem("vsram")[:256] = rng.standard_normal(256).astype(ml_dtypes.bfloat16)
    start = {n: a.copy() for n, a in sim.arrays.items()}
    runs = []
    for seconds in (None, 120.0):
        for n, a in sim.arrays.items():
            a[...] = start[n]
        sim.load(program)
        r = sim.run(10 ** 9, timed=timed, seconds=seconds)
        runs.append((r, {n: a.copy() for n, a in sim.arrays.items()}, sim.pc))
    (a, state_a, pc_a), (b, state_b, pc_b) = runs
    assert a.status == b.status == "halted", (a, b)
    assert a.instret > 3 * sim.meta["poll_steps"]
    assert (a.cycles, a.instret, a.counts, a.unit_busy, pc_a) == (b.cycles, b.instret, b.counts, b.unit_busy, pc_b)
    for n in state_a:
        assert np.array_equal(state_a[n], state_b[n]), n


@pytest.mark.parametrize("name", ["boom", "plena"])
def test_budget_with_a_limit_stops_at_the_same_step(name):
    sim, asm = machine(name)
    fresh(sim)
    program = asm.assemble(ENDLESS[name], "endless.s")
    steps = 3 * sim.meta["poll_steps"] + 5  # not a multiple of the clock interval
    start = {n: a.copy() for n, a in sim.arrays.items()}
    got = []
    for seconds in (None, 120.0):
        for n, a in sim.arrays.items():  # loading keeps storage (PLENA's loop stack): start afresh
            a[...] = start[n]
        sim.load(program)
        r = sim.run(steps, seconds=seconds)
        got.append((r.status, r.instret, r.cycles, r.counts, sim.pc))
    assert got[0] == got[1]
    assert got[0][0] == "budget" and got[0][1] == steps


def test_poll_interval_follows_the_longest_instruction():
    # PLENA's M_BMM may loop 278,788 times: the clock is read every 128 instructions; boom every 65536
    assert machine("plena")[0].meta["poll_steps"] == 128
    assert machine("boom")[0].meta["poll_steps"] == 65536
    for name in ("boom", "plena"):
        assert machine(name)[0].meta["polled"] == []  # no instruction of the targets loops long enough


LONG = spec(spin="for i in 0..min(u[1], 4000000000) { u[2] = u[2] + 1 }",
            acc="u[3] = sum(k in 0..min(u[1], 4000000000): u32(k) & 1)",
            nest="for i in 0..min(u[1], 1000000) { for j in 0..4096 { u[2] = u[2] + u32(j) } }",
            short="for i in 0..16 { u[2] = u[2] + 1 }")


@functools.lru_cache(maxsize=None)
def long_machine() -> Simulator:
    return Simulator(LONG)


def test_only_long_instruction_loops_read_the_clock():
    meta = long_machine().meta
    assert sorted(meta["polled"]) == ["ACC", "NEST", "SPIN"]
    assert meta["poll_steps"] == 65536  # their loops read it themselves: the run loop need not hurry


@pytest.mark.parametrize("insn", ["spin", "acc", "nest"])
def test_one_long_instruction_stops_at_the_limit_and_does_not_retire(insn):
    sim = fresh(long_machine())
    sim.load(assembler(LONG).assemble(f"nop\n{insn}\n", "long.s"))
    sim.reg("u")[1] = 0xFFFFFFFF  # billions of iterations
    sim.reg("u")[3] = 7
    r, took = timed_run(sim, 10, seconds=LIMIT)
    assert r.status == "timeout" and r.trap.kind == "timeout", r
    assert r.trap.message == f"wall-clock limit of {LIMIT:g} s exceeded"
    assert r.trap.pc == 4 and r.trap.line == 2  # the interrupted instruction
    assert r.instret == 1  # the nop retired; the long instruction did not
    assert LIMIT <= took < LIMIT + SLACK, took
    assert sim.pc == 4
    if insn == "acc":
        assert int(sim.reg("u")[3]) == 7  # the half-done sum was never written


@pytest.mark.parametrize("seconds", [None, 60.0])
def test_long_instructions_that_finish_compute_the_same_with_and_without_a_limit(seconds):
    sim = fresh(long_machine())
    sim.load(assembler(LONG).assemble("spin\nacc\nnest\nshort\n", "long.s"))
    sim.reg("u")[1] = 1000
    sim.reg("u")[2] = 0
    r = sim.run(10, seconds=seconds)
    assert r.status == "halted" and r.instret == 4
    assert int(sim.reg("u")[2]) == (1000 + 1000 * (4095 * 4096 // 2) + 16) % (1 << 32)
    assert int(sim.reg("u")[3]) == 500


def test_traced_run_has_the_limit_too():
    sim, asm = machine("boom")
    sim.load(asm.assemble(ENDLESS["boom"], "endless.s"))
    r, took = timed_run(sim, HUGE, trace=True, seconds=0.2)
    assert r.status == "timeout" and r.trap.message == "wall-clock limit of 0.2 s exceeded"
    assert len(r.trace) > 10 and took < 0.2 + SLACK


@pytest.mark.parametrize("bad", [0, -1.0, float("nan")])
def test_limit_must_be_positive(bad):
    sim, asm = machine("boom")
    sim.load(asm.assemble("ret\n", "r.s"))
    with pytest.raises(ValueError):
        sim.run(10, seconds=bad)
