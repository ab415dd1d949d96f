"""A run with the timing model off (`run(timed=False)`) computes exactly what a timed run computes.

The evaluator's correctness-only trials rely on it. Two simulators of the same build start from
the same state, one runs timed and one untimed; afterwards every register, state item and memory,
the status, the pc, the instruction count and a trap must be equal. Random programs cover the
in-order and VLIW fixtures and boom's out-of-order model; every Level-1 reference kernel covers
the four targets on real inputs.
"""
from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import isadl
from kcgen import kernels, taskspec
from kcgen.asm.program import Program, Section
from kcgen.evaluation import _assembler, _lane_plan, layout_for, start_trial
from kcgen.sim.simulator import Simulator

ROOT = Path(__file__).resolve().parents[2]
PATHS = {"rv32i_mini": ROOT / "tests" / "isadl" / "fixtures" / "rv32i_mini.isa",  # inorder
         "vliw_mini": ROOT / "tests" / "isadl" / "fixtures" / "vliw_mini.isa",  # vliw
         "boom": ROOT / "targets" / "boom.isa"}  # ooo
TARGETS = ("plena", "amdnpu", "coral", "boom")


@functools.lru_cache(maxsize=None)
def pair(path: Path) -> tuple[Simulator, Simulator]:
    spec = isadl.load(path)
    timed = Simulator(spec)
    return timed, Simulator(spec, timed.built)


def same_state(a: Simulator, b: Simulator) -> None:
    for name in a.arrays:
        assert a.arrays[name].tobytes() == b.arrays[name].tobytes(), name


@pytest.mark.parametrize("name", tuple(PATHS))
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.binary(min_size=4, max_size=256), seed=st.integers(0, 2**32 - 1))
def test_random_programs_compute_the_same_untimed(name, data, seed):
    timed, untimed = pair(PATHS[name])
    rng = np.random.default_rng(seed)
    program = Program("<random>", {".text": Section(".text", 0, bytearray(data[:len(data) // 4 * 4] or b"\0" * 4))},
                      {}, set(), lambda: [], 0)
    for sim in (timed, untimed):
        sim.load(program)
    for n, store in timed.layout.stores.items():  # the same random start state in both
        if store.kind in ("reg", "state") and not store.readonly:
            raw = rng.integers(0, 256, size=timed.arrays[n].nbytes, dtype=np.uint8)
            raw = raw if seed % 3 else raw & 0x0F  # small values: some addresses land in the memories
            for sim in (timed, untimed):
                sim.arrays[n].reshape(-1).view(np.uint8)[...] = raw
                for z in store.zero:
                    sim.arrays[n][z] = 0
    a, b = timed.run(300), untimed.run(300, timed=False)
    assert (a.status, a.instret, timed.pc, a.counts) == (b.status, b.instret, untimed.pc, b.counts)
    assert str(a.trap) == str(b.trap)
    same_state(timed, untimed)
    assert a.cycles is not None and b.cycles is None and b.unit_busy == {}


@pytest.mark.parametrize("target", TARGETS)
def test_reference_kernels_compute_the_same_untimed(target):
    timed, untimed = pair(ROOT / "targets" / f"{target}.isa")
    spec = timed.spec
    checked = 0
    for task in taskspec.all_tasks():
        if task.level != 1 or target not in task.targets:
            continue
        lay = layout_for(spec, task, target, "C1")
        kernel = kernels.find("reference", spec, task, target, "C1", lay)
        program = _assembler(spec).assemble(kernel.text, f"{task.name}.s")
        cfg = task.config(target, "C1")
        for sim in (timed, untimed):
            start_trial(sim, program, task, lay, 7, "normal", cfg)
        a, b = timed.run(5_000_000), untimed.run(5_000_000, timed=False)
        assert a.status == b.status == "halted", task.name
        assert (a.instret, a.counts) == (b.instret, b.counts), task.name
        same_state(timed, untimed)
        checked += 1
    assert checked >= 10


def test_cycles_are_reported_only_when_every_run_since_the_reset_was_timed():
    timed, _ = pair(PATHS["rv32i_mini"])
    spec = timed.spec
    from kcgen.asm import Assembler
    program = Assembler(spec).assemble("addi x1, x0, 5\nloop: addi x1, x1, -1\nbne x1, x0, loop\n", "t.s")
    timed.load(program)
    first = timed.run(4, timed=False)
    assert first.status == "budget" and first.cycles is None
    assert timed.run(100).cycles is None  # timing began mid-run: no count would be right
    timed.load(program)
    whole = timed.run(100)
    timed.load(program)
    timed.run(4)
    assert timed.run(100).cycles == whole.cycles  # timed in two parts: the same count


@pytest.mark.parametrize("trials,lanes,cost", [(1, 1, 1), (3, 1, 2), (1, 2, 1), (2, 2, 2), (3, 2, 1), (3, 2, 2),
                                               (5, 2, 1), (5, 2, 2), (3, 4, 2), (8, 4, 3)])
def test_lane_plan_runs_every_trial_once_and_balances_the_work(trials, lanes, cost):
    plan = _lane_plan(trials, lanes, cost)
    assert sorted(k for lane in plan for k in lane) == list(range(trials))  # each trial once
    assert len(plan) <= max(lanes, 1) and all(lane == sorted(lane) for lane in plan)
    work = [sum(cost if k == 0 else 1 for k in lane) for lane in plan]
    if len(plan) > 1:  # no trial would finish sooner on another lane
        assert max(work) - min(work) <= max(cost, 1)


def test_lane_plan_keeps_the_timed_trial_alone_when_it_costs_two():
    assert _lane_plan(3, 2, 2) == [[0], [1, 2]]
    assert _lane_plan(3, 2, 1) == [[0, 2], [1]]
    assert _lane_plan(5, 2, 1) == [[0, 2, 4], [1, 3]]
