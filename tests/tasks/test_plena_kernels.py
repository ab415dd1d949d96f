"""PLENA's baseline (tasks/kernels/baseline/plena.py) and reference (tasks/kernels/reference/plena.py)
generators: both answer every Level-1 PLENA item and nothing else (tests/tasks/test_solvability.py
evaluates them)."""
from __future__ import annotations

import pytest

import isadl
from kcgen import kernels, taskspec
from kcgen.evaluation import layout_for
from kcgen.paths import REPO

PLENA_TASKS = [t.name for t in taskspec.all_tasks() if "plena" in t.targets and t.level == 1]


@pytest.fixture(scope="module")
def spec():
    return isadl.load(REPO / "targets" / "plena.isa")


@pytest.mark.parametrize("name", PLENA_TASKS)
def test_every_level1_task_has_both_kernels_at_every_config(spec, name):
    """Their correctness, speed order and roofline: tests/tasks/test_solvability.py."""
    task = taskspec.find(name)
    for config in taskspec.CONFIGS:
        lay = layout_for(spec, task, "plena", config)
        for kind in kernels.KINDS:
            k = kernels.find(kind, spec, task, "plena", config, lay)
            assert k is not None, f"{name} {config}: no {kind} kernel"
            assert k.text.startswith(";"), f"{name} {config} {kind}: a generated kernel starts with its header"


def test_generators_answer_none_for_tasks_without_a_template(spec):
    from kcgen.paths import TASKS, load_module
    for kind in kernels.KINDS:
        gen = load_module(TASKS / "kernels" / kind / "plena.py")
        task = taskspec.find("conv2d")
        assert gen.generate(task, task.configs["C1"], None, spec) is None
