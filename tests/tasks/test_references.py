"""The numpy ground truth (tasks/reference.py): every task's reference runs at every configuration
of every target and gives its outputs' shapes, and the composite references agree with the
identities that define them."""
from __future__ import annotations

import math

import numpy as np
import pytest

from kcgen import taskspec
from kcgen.paths import TASKS, load_module

R = load_module(TASKS / "reference.py")
RNG = np.random.default_rng(7)


def rand(*shape):
    return RNG.standard_normal(shape)


@pytest.mark.parametrize("task", taskspec.all_tasks(), ids=lambda t: t.name)
def test_reference_gives_every_output_at_every_config(task):
    fn = taskspec.reference(task)
    configs = {tuple(sorted(task.config(tg, c).items())) for tg in task.targets for c in taskspec.CONFIGS}
    for cfg in map(dict, configs):
        inputs = {t.name: rand(*task.shape(t, cfg)) for t in task.inputs}
        out = fn(**inputs, **cfg)
        assert set(out) == {t.name for t in task.outputs}
        for t in task.outputs:
            assert out[t.name].shape == task.shape(t, cfg) and np.isfinite(out[t.name]).all()


def test_rope_is_a_rotation_of_each_pair():
    S, NH, D = 5, 3, 8
    x, theta = rand(S, NH * D), rand(S, D // 2)
    y = R.rope(x, np.cos(theta), np.sin(theta), D)["y"].reshape(S, NH, D)
    z = x.reshape(S, NH, D)
    as_complex = (z[..., :D // 2] + 1j * z[..., D // 2:]) * np.exp(1j * theta)[:, None, :]
    assert np.allclose(y[..., :D // 2], as_complex.real) and np.allclose(y[..., D // 2:], as_complex.imag)
    assert np.allclose(R.rope(x, np.ones((S, D // 2)), np.zeros((S, D // 2)), D)["y"], x)


def test_attention_variants_agree():
    S, NH, D = 6, 4, 8
    q, k, v = rand(S, NH * D), rand(S, NH * D), rand(S, NH * D)
    assert np.allclose(R.gqa(q, k, v, NH, NH, D)["o"], R.mha(q, k, v, NH, D)["o"])
    k1, v1 = rand(S, D), rand(S, D)
    assert np.allclose(R.gqa(q, k1, v1, NH, 1, D)["o"], R.mqa(q, k1, v1, NH, D)["o"])
    # one head by hand
    s = q[:, :D] @ k[:, :D].T / math.sqrt(D)
    p = np.exp(s - s.max(1, keepdims=True))
    assert np.allclose(R.mha(q, k, v, NH, D)["o"][:, :D], (p / p.sum(1, keepdims=True)) @ v[:, :D])
    assert np.allclose(R.flash_attention(q[:, :D], k[:, :D], v[:, :D], D)["o"],
                       R.scaled_dot_product(q[:, :D], k[:, :D], v[:, :D], D)["o"])


def test_gated_and_plain_ffn():
    x, w1, w2 = rand(3, 8), rand(8, 16), rand(16, 8)
    h = x @ w1
    assert np.allclose(R.ffn(x, w1, w2)["y"], (h / (1 + np.exp(-h))) @ w2)
    wu = rand(8, 16)
    assert np.allclose(R.swiglu(x, w1, wu, w2)["y"], ((h / (1 + np.exp(-h))) * (x @ wu)) @ w2)


def test_conv_block_is_conv_then_scale_shift_then_relu():
    x, w, bn = rand(2, 6, 6), rand(3, 2, 3, 3), rand(2, 3)
    conv = R.conv2d(x, w)["y"]
    assert np.allclose(R.conv_block(x, w, bn)["y"], np.maximum(conv * bn[0][:, None, None] + bn[1][:, None, None], 0))


def test_decoder_blocks_reduce_to_their_parts():
    S, NH, D, F = 4, 2, 8, 12
    H = NH * D
    x, g = rand(S, H), np.abs(rand(2, H))
    wqkvo, cs = rand(4, H, H), rand(2, S, D // 2)
    zero = np.zeros((3, H, F))
    # no FFN weights: the block is x + attention
    h = R._rms(x, g[0])
    attn = R.mha(R.rope(h @ wqkvo[0], cs[0], cs[1], D)["y"], R.rope(h @ wqkvo[1], cs[0], cs[1], D)["y"],
                 h @ wqkvo[2], NH, D)["o"] @ wqkvo[3]
    assert np.allclose(R.decoder_block_llama(x, g, wqkvo, cs, zero, NH, D)["y"], x + attn)
    # T5: no scaling, a bias per head; zero attention weights leave the FFN on top of x
    wff = rand(2, H, F)
    hz = R._rms(x, g[1])
    assert np.allclose(R.decoder_block_t5(x, g, np.zeros((4, H, H)), rand(NH, S, S), wff, NH, D)["y"],
                       x + np.maximum(hz @ wff[0], 0) @ wff[1].T)
