"""PLENA's Level-2 and Level-3 kernels: the template baselines (tasks/kernels/baseline/plena.py) and the
reference kernels (tasks/kernels/reference/plena.py) are correct at every configuration, the reference
never slower.

The decoder blocks are checked on every profile of their task (normal, uniform, small, sparse: one
trial each) at C1 and C2 only, to stay fast (seconds); tests/tasks/test_solvability.py evaluates every
configuration."""
from __future__ import annotations

import numpy as np
import pytest

import isadl
from kcgen import kernels, taskspec
from kcgen.evaluation import evaluate, layout_for
from kcgen.paths import REPO

LEVEL2 = ["ffn", "swiglu", "rope", "scaled_dot_product", "mha", "mqa", "gqa", "flash_attention"]
LEVEL3 = ["decoder_block_llama", "decoder_block_t5"]


@pytest.fixture(scope="module")
def spec():
    return isadl.load(REPO / "targets" / "plena.isa")


def check(spec, task, configs=taskspec.CONFIGS, trials=2):
    problems, cycles = [], {}
    for config in configs:
        lay = layout_for(spec, task, "plena", config)
        got = {}
        for kind in kernels.KINDS:
            k = kernels.find(kind, spec, task, "plena", config, lay)
            assert k is not None, f"{task.name} {config}: no {kind} kernel"
            r = evaluate(k.text, spec, task, "plena", config, trials=trials, seed=2026, layout=lay,
                         path=str(k.origin))
            if not r.correct:
                problems.append(f"{config} {kind}: {r.summary()[:300]}")
            got[kind] = r.cycles
        if None not in got.values() and got["reference"] > got["baseline"]:
            problems.append(f"{config}: reference {got['reference']} cycles > baseline {got['baseline']}")
        cycles[config] = got
    return problems, cycles


@pytest.mark.parametrize("name", LEVEL2)
def test_level2_baseline_and_reference_are_correct_and_the_reference_is_not_slower(spec, name):
    task = taskspec.find(name)
    assert "plena" in task.targets
    problems, _ = check(spec, task)
    assert not problems, f"{name} on plena:\n" + "\n".join(problems)


@pytest.mark.parametrize("name", LEVEL3)
def test_level3_kernels_are_correct_on_every_profile(spec, name):
    task = taskspec.find(name)
    assert list(task.profiles) == ["normal", "uniform", "small", "sparse", "zeros"]
    problems, _ = check(spec, task, configs=["C1", "C2"], trials=len(task.profiles))
    assert not problems, f"{name} on plena:\n" + "\n".join(problems)


@pytest.mark.parametrize("name", LEVEL2 + LEVEL3)
def test_every_config_has_a_layout_and_a_complete_prompt(spec, name):
    task = taskspec.find(name)
    for config in taskspec.CONFIGS:
        lay = layout_for(spec, task, "plena", config)
        text = lay.prompt()
        cfg = task.config("plena", config)
        for t in task.inputs:
            n = int(np.prod(task.shape(t, cfg)))
            assert f"SCALE_OFFSET = {n};" in text
            assert lay.placements[t.name].index >= 4096          # the zero guard before every input
        for t in task.outputs:
            assert lay.placements[t.name].index == 0 and "vector SRAM rows from address 0" in text
        assert "free scratch, all zero at the start" in text
        assert [reg for reg, _, _ in lay.args] == [f"a{k}" for k in range(len(task.inputs))]
        if name in ("scaled_dot_product", "flash_attention", "mha", "gqa", "mqa", "decoder_block_llama"):
            assert "1/sqrt(D)" in text and "-inf" in text
            assert cfg["S"] % 64 == 0 or name.startswith("decoder")
