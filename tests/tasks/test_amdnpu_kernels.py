"""amdnpu baseline and reference kernels (tasks/kernels/{baseline,reference}/amdnpu.py): correct on
every configuration of every Level-1 task, and the reference never slower than the baseline."""
from __future__ import annotations

import pytest

import isadl
from kcgen import kernels, taskspec
from kcgen.evaluation import evaluate, layout_for
from kcgen.paths import TARGETS

TASKS = ("silu", "relu", "gelu", "softmax", "layer_norm", "rms_norm", "gemv", "gemm", "batch_matmul",
         "linear", "conv2d", "depthwise_conv")
CONFIGS = ("C1", "C2", "C3", "C4", "C5")


@pytest.fixture(scope="module")
def spec():
    return isadl.load(str(TARGETS / "amdnpu.isa"))


@pytest.mark.parametrize("task_name", TASKS)
def test_baseline_and_reference(spec, task_name):
    task = taskspec.find(task_name)
    for config in CONFIGS:
        layout = layout_for(spec, task, "amdnpu", config)
        cycles = {}
        for kind in ("baseline", "reference"):
            kernel = kernels.find(kind, spec, task, "amdnpu", config, layout)
            assert kernel is not None, (kind, task_name, config)
            result = evaluate(kernel.text, spec, task, "amdnpu", config, trials=2, seed=11, layout=layout)
            assert result.correct, (kind, task_name, config, result.summary())
            cycles[kind] = result.cycles
        assert cycles["reference"] <= cycles["baseline"], (task_name, config, cycles)
