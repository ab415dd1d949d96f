"""PLENA's Level-2 and Level-3 kernels: the template baselines (tasks/kernels/baseline/plena.py) and the
reference kernels (tasks/kernels/reference/plena.py) are correct at every configuration, the reference
never slower.

The decoder blocks are judged on the small and sparse profiles only: on the normal and uniform ones
their N(0, 1) weights make attention logits of 100..500, where merely rounding rmsnorm(x) to bf16 (the
on-chip type) flips the softmax beyond the tolerance, whatever the kernel does (see the test below)."""
from __future__ import annotations

import dataclasses
import math
import sys

import ml_dtypes
import numpy as np
import pytest

import isadl
from kcgen import kernels, taskspec
from kcgen.evaluation import draw, evaluate, layout_for
from kcgen.paths import REPO, TASKS

LEVEL2 = ["ffn", "swiglu", "rope", "scaled_dot_product", "mha", "mqa", "gqa", "flash_attention"]
LEVEL3 = ["decoder_block_llama", "decoder_block_t5"]
BF16 = np.dtype(ml_dtypes.bfloat16)


@pytest.fixture(scope="module")
def spec():
    return isadl.load(REPO / "targets" / "plena.isa")


def check(spec, task, configs=taskspec.CONFIGS):
    problems, cycles = [], {}
    for config in configs:
        lay = layout_for(spec, task, "plena", config)
        got = {}
        for kind in kernels.KINDS:
            k = kernels.find(kind, spec, task, "plena", config, lay)
            assert k is not None, f"{task.name} {config}: no {kind} kernel"
            r = evaluate(k.text, spec, task, "plena", config, trials=2, seed=2026, layout=lay, path=str(k.origin))
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
def test_level3_kernels_are_correct_on_the_small_and_sparse_profiles(spec, name):
    task = dataclasses.replace(taskspec.find(name), profiles=["small", "sparse"])
    problems, _ = check(spec, task)
    assert not problems, f"{name} on plena:\n" + "\n".join(problems)


def test_decoder_blocks_on_normal_weights_fail_in_bf16_whatever_the_kernel():
    """Why the Level-3 test above leaves out the normal profile: numpy with every step exact except
    h = rmsnorm(x) * g rounded to bf16 and the (max-subtracted) scores rounded to bf16 already misses
    the tolerance at C3 (a fact about the task's numerics, reported, not something a kernel can fix)."""
    sys.path.insert(0, str(TASKS))
    import reference as R
    bf = lambda a: np.asarray(a).astype(BF16).astype(np.float64)  # noqa: E731
    task = taskspec.find("decoder_block_t5")
    cfg = task.config("plena", "C3")
    worst = 0.0
    for seed in range(3):
        rng = np.random.default_rng(seed)
        v = {t.name: bf(draw(rng, "normal", task.shape(t, cfg), BF16)) for t in task.inputs}
        ref = R.decoder_block_t5(**v, **cfg)["y"]
        NH, D = cfg["NH"], cfg["D"]
        x, g, w = v["x"], v["g"], v["wqkvo"]
        h = bf(R._rms(x, g[0]))
        s = x.shape[0]
        q, k, vv = ((h @ w[i]).reshape(s, NH, D).transpose(1, 0, 2) for i in range(3))
        sc = q @ k.transpose(0, 2, 1) + v["bias"]
        sc = bf(sc - bf(sc).max(axis=-1, keepdims=True))
        a = (R._softmax(sc) @ vv).transpose(1, 0, 2).reshape(s, NH * D)
        x2 = x + a @ w[3]
        y = x2 + np.maximum(R._rms(x2, g[1]) @ v["wff"][0], 0) @ v["wff"][1].T
        tol = 0.05 + 0.05 * np.maximum(np.abs(ref), math.sqrt((ref ** 2).mean()))
        worst = max(worst, float((np.abs(y - ref) > tol).mean()))
    assert worst > 0.01


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
