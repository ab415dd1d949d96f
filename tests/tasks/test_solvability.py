"""Every benchmark item is solvable: its baseline or its reference kernel (issue #6 item 6) passes
at every configuration; every shipped kernel is correct; the reference is never slower than the
baseline; and no kernel beats the item's roofline (a lower bound). This is the one test that
evaluates every item's kernels (the per-target kernel tests check what only they know).

Per (target, task), all five configurations, each kernel evaluated as the benchmark evaluates an
agent's: one trial per value profile, on seeds drawn from the OS (ROUNDS rounds; set
KCGEN_SOLVABILITY_ROUNDS to run more). A failure prints its seed, so it reproduces with
`kcgen eval TARGET TASK --baseline|--reference --config C --seed SEED`.
"""
from __future__ import annotations

import os

import pytest

import isadl
from kcgen import kernels, taskspec
from kcgen.evaluation import evaluate, layout_for
from kcgen.paths import REPO

TARGETS = ("plena", "amdnpu", "coral", "boom")
ITEMS = [(target, task.name) for target in TARGETS for task in taskspec.all_tasks() if target in task.targets]
_SPECS: dict = {}
ROUNDS = int(os.environ.get("KCGEN_SOLVABILITY_ROUNDS", "1"))


def spec_of(target):
    if target not in _SPECS:
        _SPECS[target] = isadl.load(REPO / "targets" / f"{target}.isa")
    return _SPECS[target]


@pytest.mark.parametrize("target,name", ITEMS, ids=[f"{t}-{n}" for t, n in ITEMS])
def test_item_has_a_passing_kernel_at_every_config(target, name):
    spec, task = spec_of(target), taskspec.find(name)
    problems = []
    for config in taskspec.CONFIGS:
        lay = layout_for(spec, task, target, config)
        passed, cycles = [], {}
        for kind in kernels.KINDS:
            kernel = kernels.find(kind, spec, task, target, config, lay)
            if kernel is None:
                continue
            for _ in range(ROUNDS):
                r = evaluate(kernel.text, spec, task, target, config, layout=lay, path=str(kernel.origin))
                if not r.correct:
                    break
            if not r.correct:
                problems.append(f"{config} {kind} (--seed {r.seeds[0] if r.seeds else '?'}): {r.summary()[:300]}")
                continue
            passed.append(kind)
            cycles[kind] = r.cycles
            if r.roofline_cycles is not None and r.cycles < r.roofline_cycles:
                problems.append(f"{config} {kind}: {r.cycles} cycles beats the roofline {r.roofline_cycles}: "
                                f"tasks/roofline.yaml overstates no rate of {target}?")
        if not passed:
            problems.append(f"{config}: no passing kernel (an item without one is not in the benchmark)")
        if len(cycles) == 2 and cycles["reference"] > cycles["baseline"]:
            problems.append(f"{config}: the reference ({cycles['reference']} cycles) is slower than the baseline "
                            f"({cycles['baseline']})")
    assert not problems, f"{name} on {target}:\n" + "\n".join(problems)
