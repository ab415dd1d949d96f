"""numpy ground truth for every task, in float64 (or exact integers).

Each function takes the task's input tensors by name (already converted from the target's dtype,
so they carry its rounding) and its configuration variables, and returns {output name: array}.
The evaluator rounds the result to each output's dtype before comparing.
"""
from __future__ import annotations

import math

import numpy as np


def _libm(fn, x) -> np.ndarray:
    """fn (a math-module function: the C library's, one rounding) on every element of x; twice
    as fast as np.vectorize, and the same values."""
    x = np.asarray(x, dtype=np.float64)
    return np.fromiter(map(fn, x.ravel().tolist()), np.float64, count=x.size).reshape(x.shape)


def _erf(x) -> np.ndarray:
    return _libm(math.erf, x)


def silu(x, **cfg):
    return {"y": x / (1.0 + np.exp(-x))}


def relu(x, **cfg):
    return {"y": np.maximum(x, 0)}


def gelu(x, **cfg):
    return {"y": 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))}


def softmax(x, **cfg):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return {"y": e / e.sum(axis=-1, keepdims=True)}


def layer_norm(x, gamma, beta, **cfg):
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return {"y": (x - mean) / np.sqrt(var + 1e-5) * gamma + beta}


def rms_norm(x, gamma, **cfg):
    rms = np.sqrt((x * x).mean(axis=-1, keepdims=True) + 1e-6)
    return {"y": x / rms * gamma}


def gemv(a, x, **cfg):
    return {"y": a @ x}


def gemm(a, b, **cfg):
    return {"c": a @ b}


def batch_matmul(a, b, **cfg):
    return {"c": np.matmul(a, b)}


def linear(x, w, bias, **cfg):
    return {"y": x @ w.T + bias}


def conv2d(x, w, **cfg):
    """x[CI, H, W] * w[CO, CI, K, K], stride 1, no padding -> y[CO, H-K+1, W-K+1]."""
    co, ci, kh, kw = w.shape
    _, h, wd = x.shape
    windows = np.lib.stride_tricks.sliding_window_view(x, (kh, kw), axis=(1, 2))  # CI, OH, OW, KH, KW
    return {"y": np.einsum("chwij,ocij->ohw", windows, w)}


def depthwise_conv(x, w, **cfg):
    """x[C, H, W] * w[C, K, K] per channel, stride 1, no padding -> y[C, H-K+1, W-K+1]."""
    kh, kw = w.shape[1:]
    windows = np.lib.stride_tricks.sliding_window_view(x, (kh, kw), axis=(1, 2))  # C, OH, OW, KH, KW
    return {"y": np.einsum("chwij,cij->chw", windows, w)}


# ---- Level 2 -------------------------------------------------------------------------------------------
def _silu(z):
    return z / (1.0 + np.exp(-z))


def _softmax(s):
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _rms(x, g, eps=1e-6):
    return x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + eps) * g


def _rope(x, cos, sin, D):
    """Rotate-half RoPE on every D-wide head of x[S, heads*D]; cos/sin[S, D/2]."""
    s = x.shape[0]
    xh = x.reshape(s, -1, D)
    x1, x2 = xh[..., :D // 2], xh[..., D // 2:]
    c, sn = cos[:, None, :], sin[:, None, :]
    return np.concatenate([x1 * c - x2 * sn, x2 * c + x1 * sn], axis=-1).reshape(x.shape)


def _attention(q, k, v, nh, nkv, D, scale=True, bias=None):
    """Multi-head attention over q[S, nh*D], k/v[S, nkv*D] (nh/nkv query heads share a K/V head);
    not causal. Returns o[S, nh*D], heads side by side."""
    s = q.shape[0]
    qh = q.reshape(s, nh, D).transpose(1, 0, 2)
    kh = np.repeat(k.reshape(s, nkv, D).transpose(1, 0, 2), nh // nkv, axis=0)
    vh = np.repeat(v.reshape(s, nkv, D).transpose(1, 0, 2), nh // nkv, axis=0)
    scores = qh @ kh.transpose(0, 2, 1)
    if scale:
        scores = scores / math.sqrt(D)
    if bias is not None:
        scores = scores + bias
    return (_softmax(scores) @ vh).transpose(1, 0, 2).reshape(s, nh * D)


def rope(x, cos, sin, D, **cfg):
    return {"y": _rope(x, cos, sin, D)}


def ffn(x, w1, w2, **cfg):
    return {"y": _silu(x @ w1) @ w2}


def swiglu(x, wg, wu, wd, **cfg):
    return {"y": (_silu(x @ wg) * (x @ wu)) @ wd}


def scaled_dot_product(q, k, v, D, **cfg):
    return {"o": _attention(q, k, v, 1, 1, D)}


def flash_attention(q, k, v, D, **cfg):
    return {"o": _attention(q, k, v, 1, 1, D)}


def mha(q, k, v, NH, D, **cfg):
    return {"o": _attention(q, k, v, NH, NH, D)}


def gqa(q, k, v, NH, NKV, D, **cfg):
    return {"o": _attention(q, k, v, NH, NKV, D)}


def mqa(q, k, v, NH, D, **cfg):
    return {"o": _attention(q, k, v, NH, 1, D)}


# ---- Level 3 -------------------------------------------------------------------------------------------
def decoder_block_llama(x, g, wqkvo, cs, wffn, NH, D, **cfg):
    """Pre-norm LLaMA block: RMSNorm, attention with RoPE on q and k, residual; RMSNorm, SwiGLU, residual.
    wffn[3, H, F] holds the gate, up and (as nn.Linear stores it, [H, F]) down projections."""
    h = _rms(x, g[0])
    q, k = _rope(h @ wqkvo[0], cs[0], cs[1], D), _rope(h @ wqkvo[1], cs[0], cs[1], D)
    x = x + _attention(q, k, h @ wqkvo[2], NH, NH, D) @ wqkvo[3]
    h = _rms(x, g[1])
    return {"y": x + (_silu(h @ wffn[0]) * (h @ wffn[1])) @ wffn[2].T}


def decoder_block_t5(x, g, wqkvo, bias, wff, NH, D, **cfg):
    """T5 (v1.0) self-attention block: RMSNorm, attention with a relative position bias and no
    1/sqrt(D) scaling, residual; RMSNorm, ReLU FFN, residual. wff[2, H, F]: wi, and wo as [H, F]."""
    h = _rms(x, g[0])
    x = x + _attention(h @ wqkvo[0], h @ wqkvo[1], h @ wqkvo[2], NH, NH, D, scale=False, bias=bias) @ wqkvo[3]
    h = _rms(x, g[1])
    return {"y": x + np.maximum(h @ wff[0], 0) @ wff[1].T}


def conv_block(x, w, bn, **cfg):
    """conv2d (stride 1, no padding), then inference batch norm folded into a per-channel scale
    bn[0] and shift bn[1], then ReLU."""
    y = conv2d(x, w)["y"]
    return {"y": np.maximum(y * bn[0][:, None, None] + bn[1][:, None, None], 0)}


# ---- dLLM sampling (tasks/level2/dllm_sampling.yaml) ----------------------------------------------------
def _bf16_round(x):
    """float64 -> the nearest bf16 value (ties to even, subnormals kept, overflow to inf), as float64.
    Rounded once from float64, as PLENA's simulator rounds (ml_dtypes' astype rounds via float32)."""
    from kcgen import numeric
    a = np.asarray(x, dtype=np.float64)
    return numeric.decode_array(numeric.BF16, numeric.encode_array(numeric.BF16, a)).reshape(a.shape)


def dllm_sampling(logits, mask, K, **cfg):
    """LLaDA low-confidence remasking step. The confidence c = 1/S is computed in bf16 as the task
    states (the chunked V_RED_SUM order); the argmax and the top-K choice break ties by the lowest index.
    The chosen tokens come out as t // 256 and t % 256 (exact in bf16)."""
    x = np.asarray(logits, dtype=np.float64)
    L, V = x.shape
    m = x.max(axis=1)
    t = x.argmax(axis=1)                                          # first occurrence: lowest index
    d = _bf16_round(x - m[:, None])                               # V_SUB_VF
    u, inv = np.unique(d, return_inverse=True)                    # few distinct bf16 values: exp them once
    e = _bf16_round(_libm(math.exp, u))[inv.reshape(-1)].reshape(d.shape)   # V_EXP_V (libm exp, one rounding)
    s = np.zeros(L, dtype=np.float32)                             # the bf16 running sum (held in f32)
    pad = -V % 64
    chunks = np.pad(e, ((0, 0), (0, pad))).astype(np.float32).reshape(L, -1, 64)
    part = np.zeros(chunks.shape[:2], dtype=np.float32)
    for i in range(64):                                           # V_RED_SUM: fp32, column order in a chunk
        part = part + chunks[:, :, i]
    for j in range(part.shape[1]):                                # one 64-column chunk at a time
        s = _bf16_round((s + part[:, j]).astype(np.float64)).astype(np.float32)  # bf16(fp32(S + part))
    c = _bf16_round(1.0 / s.astype(np.float64))                   # S_RECI_FP
    masked = np.asarray(mask, dtype=np.float64) > 0
    n = min(int(K), int(masked.sum()))
    order = np.lexsort((np.arange(L), -np.where(masked, c, -np.inf)))  # c descending, then l ascending
    chosen = order[:n]
    hi, lo = np.full(L, -1.0), np.full(L, -1.0)
    hi[chosen], lo[chosen] = t[chosen] // 256, t[chosen] % 256
    mask_out = masked.astype(np.float64)
    mask_out[chosen] = 0.0
    return {"tokens_hi": hi, "tokens_lo": lo, "mask_out": mask_out}
