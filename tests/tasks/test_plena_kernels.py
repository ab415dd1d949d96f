"""PLENA's baseline (tasks/kernels/baseline/plena.py) and reference (tasks/kernels/reference/plena.py)
kernels: both correct at every configuration of every PLENA task, the reference never slower."""
from __future__ import annotations

import pytest

import isadl
from kcgen import kernels, taskspec
from kcgen.evaluation import evaluate, layout_for
from kcgen.paths import REPO

PLENA_TASKS = [t.name for t in taskspec.all_tasks() if "plena" in t.targets and t.level == 1]


@pytest.fixture(scope="module")
def spec():
    return isadl.load(REPO / "targets" / "plena.isa")


@pytest.mark.parametrize("name", PLENA_TASKS)
def test_baseline_and_reference_are_correct_and_the_reference_is_not_slower(spec, name):
    task = taskspec.find(name)
    problems = []
    for config in taskspec.CONFIGS:
        lay = layout_for(spec, task, "plena", config)
        cycles = {}
        for kind in kernels.KINDS:
            k = kernels.find(kind, spec, task, "plena", config, lay)
            assert k is not None, f"{name} {config}: no {kind} kernel"
            r = evaluate(k.text, spec, task, "plena", config, trials=2, seed=2026, layout=lay, path=str(k.origin))
            if not r.correct:
                problems.append(f"{config} {kind}: {r.summary()[:300]}")
            cycles[kind] = r.cycles
        if cycles["reference"] is not None and cycles["baseline"] is not None and \
                cycles["reference"] > cycles["baseline"]:
            problems.append(f"{config}: reference {cycles['reference']} cycles > baseline {cycles['baseline']}")
    assert not problems, f"{name} on plena:\n" + "\n".join(problems)


def test_generators_answer_none_for_tasks_without_a_template(spec):
    from kcgen.paths import TASKS, load_module
    for kind in kernels.KINDS:
        gen = load_module(TASKS / "kernels" / kind / "plena.py")
        task = taskspec.find("conv2d")
        assert gen.generate(task, task.configs["C1"], None, spec) is None
