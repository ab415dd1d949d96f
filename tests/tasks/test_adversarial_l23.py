"""The evaluator's guards on the composite tasks (issue #10 item 4, as #6 established for Level 1 in
test_evaluation.py): a kernel that does nothing fails every Level-2/3 item with every output element
wrong, also right after the item's reference kernel ran on the same simulator (outputs start as
poison on a clean machine, so nothing a previous run left behind can pass)."""
from __future__ import annotations

import functools

import pytest

import isadl
from kcgen import kernels, taskspec
from kcgen.evaluation import evaluate, layout_for
from kcgen.paths import REPO

NOTHING = {"plena": "; nothing\n", "amdnpu": "done\n", "coral": "ret\n", "boom": "ret\n"}
ITEMS = [(target, task.name) for task in taskspec.all_tasks() if task.level >= 2 for target in task.targets]


@functools.lru_cache(maxsize=None)
def isa(target):
    return isadl.load(REPO / "targets" / f"{target}.isa")


@pytest.mark.parametrize("target,name", ITEMS, ids=[f"{t}-{n}" for t, n in ITEMS])
def test_a_kernel_that_does_nothing_fails_even_after_the_reference(target, name):
    spec, task = isa(target), taskspec.find(name)
    lay = layout_for(spec, task, target, "C1")
    idle = evaluate(NOTHING[target], spec, task, target, "C1", trials=1, seed=5, layout=lay)
    assert not idle.correct and idle.match_rate == 0.0, idle.summary()
    ref = kernels.find("reference", spec, task, target, "C1", lay)
    assert evaluate(ref.text, spec, task, target, "C1", trials=1, seed=5, layout=lay).correct
    after = evaluate(NOTHING[target], spec, task, target, "C1", trials=1, seed=5, layout=lay)
    assert not after.correct and after.match_rate == 0.0, "the reference's outputs survived into the next run"
