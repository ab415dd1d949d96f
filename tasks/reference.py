"""numpy ground truth for every task, in float64 (or exact integers).

Each function takes the task's input tensors by name (already converted from the target's dtype,
so they carry its rounding) and its configuration variables, and returns {output name: array}.
The evaluator rounds the result to each output's dtype before comparing.
"""
from __future__ import annotations

import math

import numpy as np

_erf = np.vectorize(math.erf, otypes=[np.float64])


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
