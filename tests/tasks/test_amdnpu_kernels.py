"""amdnpu baseline and reference generators (tasks/kernels/{baseline,reference}/amdnpu.py): a kernel
for every configuration of every Level-1 task, one that assembles, and the reference's bundles
packed (more than one slot per bundle somewhere). Correctness, speed order and roofline at every
configuration: tests/tasks/test_solvability.py."""
from __future__ import annotations

import re

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


@pytest.mark.parametrize("task_name", ["conv2d", "depthwise_conv"])
def test_convolutions_are_int8_with_shift_round_saturate(spec, task_name):
    """The published AIE-ML convolution kernels are int8 with 32-bit accumulators and an SRS
    output: amdnpu's conv2d and depthwise_conv are int8, requantised (round half up = crrnd 9,
    positive_inf; saturating), and both kernels use the int8 MAC and the 8-bit SRS."""
    task = taskspec.find(task_name)
    use = task.targets["amdnpu"]
    assert use.dtype == "i8" and not use.dtypes and set(use.requant) == {"y"}
    for config in taskspec.CONFIGS:
        shift = task.requant_shift("amdnpu", "y", task.config("amdnpu", config))
        assert 9 <= shift <= 11, (config, shift)
        layout = layout_for(spec, task, "amdnpu", config)
        for kind in kernels.KINDS:
            text = kernels.find(kind, spec, task, "amdnpu", config, layout).text
            # (movxm, or where the baseline's scheduler moved it to another slot movx or mova: the same move)
            mov = lambda reg, v: re.search(rf"\bmov(xm|x|a) {reg}, #{v}\b", text)  # noqa: E731
            assert mov("crrnd", 9) and mov("crsat", 1), (kind, config)
            assert mov("s1", shift), (kind, config)
            assert mov("r9", 776) and "vmac cm" in text, (kind, config)  # 0x308: int8 x int8
            assert ".srs.s8.s32" in text or "vsrs.s8.s32" in text, (kind, config)
