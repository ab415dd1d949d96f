"""The hand-written reference kernels of the RISC-V targets (tasks/kernels/reference/{coral,boom}/*.s)
are real kernels: one described, config-independent file per item (sizes come from the argument
registers), ending with `ret`, correct also at sizes off the configurations' grid (their correctness
at every configuration is tests/tasks/test_solvability.py's).

Per (target, task): all five configurations, two trials each with a fixed seed (value profiles
normal and uniform), so a failure reproduces with
`kcgen eval TARGET TASK KERNEL.s --config C --seed 2026`.
"""
from __future__ import annotations

import dataclasses
import functools

import pytest

import isadl
from kcgen import kernels, taskspec
from kcgen.evaluation import evaluate, layout_for
from kcgen.paths import REPO

TARGETS = ("coral", "boom")
TASKS = ("silu", "relu", "gelu", "softmax", "layer_norm", "rms_norm",
         "gemv", "gemm", "batch_matmul", "linear", "conv2d", "depthwise_conv")
ITEMS = [(target, name) for target in TARGETS for name in TASKS]
KERNELS = REPO / "tasks" / "kernels" / "reference"


@functools.lru_cache(maxsize=None)
def isa(target):
    return isadl.load(REPO / "targets" / f"{target}.isa")


@pytest.mark.parametrize("target,name", ITEMS, ids=[f"{t}-{n}" for t, n in ITEMS])
def test_reference_kernel_is_one_described_file_for_every_config(target, name):
    """Their correctness at every configuration: tests/tasks/test_solvability.py."""
    spec, task = isa(target), taskspec.find(name)
    assert target in task.targets
    path = KERNELS / target / f"{name}.s"
    assert path.exists(), f"missing {path}"
    text = path.read_text(encoding="utf-8")
    assert text.startswith("#"), "the kernel starts with its description"
    assert "ret" in text.split()
    for config in taskspec.CONFIGS:
        kernel = kernels.find("reference", spec, task, target, config, layout_for(spec, task, target, config))
        assert kernel is not None and kernel.origin == path and kernel.text == text


# Sizes off the configurations' grid reach the kernels' general paths (tails, non-3x3 taps), which
# no configuration exercises: (target, task, configuration variables).
OFF_GRID = [
    ("boom", "relu", {"N": 1003}),
    ("boom", "silu", {"N": 1003}),
    ("boom", "gelu", {"N": 1003}),
    ("coral", "relu", {"N": 1003}),
    ("coral", "silu", {"N": 1003}),
    ("coral", "gelu", {"N": 1003}),
    ("boom", "depthwise_conv", {"C": 3, "H": 11, "W": 12, "K": 5}),
    ("coral", "depthwise_conv", {"C": 4, "H": 12, "W": 11, "K": 5}),
    ("coral", "conv2d", {"CI": 3, "CO": 6, "H": 9, "W": 12, "K": 2}),
    ("coral", "gemv", {"M": 6, "K": 72}),
    ("coral", "gemm", {"M": 6, "K": 7, "N": 40}),
    ("coral", "batch_matmul", {"B": 3, "M": 6, "K": 9, "N": 40}),
    ("coral", "linear", {"M": 6, "K": 36, "N": 40}),
]


@pytest.mark.parametrize("target,name,cfg", OFF_GRID, ids=[f"{t}-{n}-{'-'.join(map(str, c.values()))}" for t, n, c in OFF_GRID])
def test_reference_kernel_general_paths(target, name, cfg):
    task = taskspec.find(name)
    use = dataclasses.replace(task.targets[target], configs={})
    task = dataclasses.replace(task, configs={**task.configs, "CX": cfg}, targets={**task.targets, target: use})
    text = (KERNELS / target / f"{name}.s").read_text(encoding="utf-8")
    r = evaluate(text, isa(target), task, target, "CX", trials=2, seed=2026)
    assert r.correct, r.summary()[:400]
