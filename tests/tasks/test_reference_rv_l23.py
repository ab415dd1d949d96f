"""The hand-written reference kernels of coral and boom for their Level-2/3 tasks (issue #10: ffn,
swiglu, conv_block; tasks/kernels/reference/{coral,boom}/<task>.s): correct at every configuration,
never slower than the item's compiler baseline (tasks/kernels/baseline/{coral,boom}/<task>.s, its
cycles as kcgen.kernels.baseline_cycles measures them: the denominator of every speedup), and
real kernels: one config-independent file per item (sizes come from the argument registers) that
starts with its description and ends with `ret`.

Per item: all five configurations, two trials each with a fixed seed (value profiles normal and
uniform), so a failure reproduces with `kcgen eval TARGET TASK --reference --config C --seed 2026`.
Sizes off the configuration grid reach the kernels' general paths (remainder tiles, odd widths).
"""
from __future__ import annotations

import dataclasses

import pytest

import isadl
from kcgen import kernels, taskspec
from kcgen.evaluation import evaluate, layout_for
from kcgen.paths import REPO

TARGETS = ("coral", "boom")
TASKS = ("ffn", "swiglu", "conv_block")
ITEMS = [(target, name) for target in TARGETS for name in TASKS]
SEED = 2026
_SPECS: dict = {}


def spec_of(target):
    if target not in _SPECS:
        _SPECS[target] = isadl.load(REPO / "targets" / f"{target}.isa")
    return _SPECS[target]


@pytest.mark.parametrize("target,name", ITEMS, ids=[f"{t}-{n}" for t, n in ITEMS])
def test_reference_is_one_described_file_for_every_config(target, name):
    """Correct, and never slower than the baseline, at every configuration: test_solvability.py."""
    spec, task = spec_of(target), taskspec.find(name)
    assert target in task.targets
    path = REPO / "tasks" / "kernels" / "reference" / target / f"{name}.s"
    text = path.read_text(encoding="utf-8")
    assert text.startswith("#"), "the kernel starts with its description"
    assert "Entry:" in text and "Algorithm" in text, "the header states the registers on entry and the algorithm"
    assert "ret" in text.split()
    for config in taskspec.CONFIGS:
        lay = layout_for(spec, task, target, config)
        ref = kernels.find("reference", spec, task, target, config, lay)
        base = kernels.find("baseline", spec, task, target, config, lay)
        assert ref is not None and ref.origin == path
        assert base is not None and base.origin == REPO / "tasks" / "kernels" / "baseline" / target / f"{name}.s"


# (target, task, configuration variables) off the grid: remainder tiles and odd widths
OFF_GRID = [
    ("boom", "ffn", {"M": 8, "H": 24, "F": 40}),
    ("boom", "swiglu", {"M": 12, "H": 20, "F": 36}),
    ("boom", "conv_block", {"CI": 3, "CO": 8, "H": 9, "W": 11}),
    ("boom", "conv_block", {"CI": 1, "CO": 4, "H": 5, "W": 7}),
    ("coral", "ffn", {"M": 8, "H": 24, "F": 40}),
    ("coral", "swiglu", {"M": 12, "H": 16, "F": 48}),
    ("coral", "conv_block", {"CI": 3, "CO": 6, "H": 9, "W": 11}),
    ("coral", "conv_block", {"CI": 7, "CO": 4, "H": 12, "W": 36}),
]


@pytest.mark.parametrize("target,name,cfg", OFF_GRID,
                         ids=[f"{t}-{n}-{'-'.join(map(str, c.values()))}" for t, n, c in OFF_GRID])
def test_reference_general_paths(target, name, cfg):
    spec, task = spec_of(target), taskspec.find(name)
    use = dataclasses.replace(task.targets[target], configs={})
    task = dataclasses.replace(task, configs={**task.configs, "CX": cfg}, targets={**task.targets, target: use})
    text = (REPO / "tasks" / "kernels" / "reference" / target / f"{name}.s").read_text(encoding="utf-8")
    r = evaluate(text, spec, task, target, "CX", trials=2, seed=SEED)
    assert r.correct, r.summary()[:400]
