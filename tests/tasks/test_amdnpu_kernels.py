"""amdnpu baseline and reference generators (tasks/kernels/{baseline,reference}/amdnpu.py): a kernel
for every configuration of every Level-1 task, one that assembles, and the reference's bundles
packed (more than one slot per bundle somewhere). Correctness, speed order and roofline at every
configuration: tests/tasks/test_solvability.py."""
from __future__ import annotations

import pytest

import isadl
from kcgen import kernels, taskspec
from kcgen.asm import Assembler
from kcgen.evaluation import layout_for
from kcgen.paths import TARGETS

TASKS = [t.name for t in taskspec.all_tasks() if t.level == 1 and "amdnpu" in t.targets]


@pytest.fixture(scope="module")
def spec():
    return isadl.load(str(TARGETS / "amdnpu.isa"))


@pytest.fixture(scope="module")
def asm(spec):
    return Assembler(spec)


@pytest.mark.parametrize("task_name", TASKS)
def test_both_kernels_exist_and_assemble(spec, asm, task_name):
    task = taskspec.find(task_name)
    packed = False
    for config in taskspec.CONFIGS:
        layout = layout_for(spec, task, "amdnpu", config)
        for kind in kernels.KINDS:
            kernel = kernels.find(kind, spec, task, "amdnpu", config, layout)
            assert kernel is not None, (kind, task_name, config)
            program = asm.assemble(kernel.text, f"{kind}.s")
            if kind == "reference":
                packed |= any(len(p.ops) > 1 for p in program.placed)
    assert packed, f"{task_name}: the reference never issues two slots in one bundle"
