"""The task references computed in each target's own arithmetic (for the measured tolerances).

tasks/reference.py is the golden model: float64 (or exact integers) on the inputs as the kernel sees
them. This module computes the same outputs the way a straightforward kernel on the target does:
every value the target stores is rounded to the format it stores it in, sums run in the order a
plain loop runs them, in the format the target accumulates in. `kcgen.tolerances` compares the
two over many seeds and every value profile and sets each task's tolerance a stated margin above
the worst difference (docs/tasks.md, "Tolerances").

    out = device.compute(task, target, inputs, cfg)   # {output name: float64 array}

The arithmetic of each target (a `Device`):

- coral, boom (`Scalar32`): IEEE float32, each operation rounded once to nearest even (division
  and square root are instructions); the sums of products are fused multiply-adds (clang contracts
  `acc += a * b` to fmadd.s; the model rounds the product too, which covers kernels with and
  without fused multiply-adds), summed from the first term to the last. exp and erf have no
  instruction: a kernel computes them in software (range reduction and a polynomial, or a
  table), modelled as a routine within 4 units in the last place (OpenCL's bound for a
  single-precision exp is 3 ulp, for erf 16): the exact value moved by a seeded uniform draw of
  up to 3.5 ulp, then rounded.
- amdnpu (`AieMl`): bf16 values, products on the bf16 MAC (exact products, fp32 accumulators,
  one rounding per addition) narrowed to bf16 by vconv; a row's sum is 16 fp32 lane sums, each
  narrowed to bf16 and added in two MAC steps that narrow again (the only way out of the
  accumulators). The core has no exp and no element-wise product of two vectors, so exp, silu
  and gelu are software functions of one input (tables, interpolants evaluated in the fp32
  accumulators and narrowed once), modelled within 2 bf16 ulp as above; 1/x and 1/sqrt(x) are
  the kernels' tables of every bf16 mantissa, exact to one rounding.
- plena (`Plena`): the ISA's rounding model (targets/plena.isa "Deviation: arithmetic"): every
  vector and scalar result rounded once to bf16; exp, 1/x and sqrt correctly rounded; the matrix
  machine sums products in fp32 from k = 0 upwards and writes bf16, one group of four 64-row K
  tiles at a time (matrix SRAM holds four tiles; groups are added in bf16); V_RED_SUM adds a
  64-lane chunk's fp32 sum to a bf16 scalar and rounds it to bf16. PLENA has no max, erf or
  element-wise select, so relu is x * sigmoid(2^32 x) and gelu the tanh form x * sigmoid(2 sqrt(2/pi)
  (x + 0.044715 x^3)), each step an instruction, as its kernels compute them; attention runs the
  online softmax over blocks of 64 keys that 64 x 64 matrix tiles give; the decoder blocks store
  k and v to HBM as MXFP8 high and low parts (the matrix machine reads only HBM).

Inputs arrive as the kernel sees them (already in the target's formats, MXFP8-rounded on PLENA),
as float64 arrays.
"""
from __future__ import annotations

import math

import ml_dtypes
import numpy as np

_BF16 = np.dtype(ml_dtypes.bfloat16)


# ---- rounding ------------------------------------------------------------------------------------------
def f32(x) -> np.ndarray:
    """float64 -> the nearest float32 (ties to even), as float64."""
    with np.errstate(over="ignore"):
        return np.asarray(x, dtype=np.float64).astype(np.float32).astype(np.float64)


def bf16(x) -> np.ndarray:
    """float64 -> the nearest bf16 (ties to even, subnormals kept, overflow to inf), as float64,
    rounded once (whatever ml_dtypes version): float64 to float32 by rounding to odd (truncate, then
    set the last bit when inexact), then to bf16, which with float32's 16 extra bits gives the
    correctly rounded result."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        f = np.atleast_1d(x.astype(np.float32))
        back = f.astype(np.float64)
    xs = np.atleast_1d(x)
    inexact = (back != xs) & np.isfinite(back)
    bits = f.view(np.uint32).copy()
    bits -= (inexact & (np.abs(back) > np.abs(xs))).astype(np.uint32)  # one step toward zero
    bits |= inexact.astype(np.uint32)
    out = bits.view(np.float32).astype(_BF16).astype(np.float64)
    return out.reshape(x.shape)


def _libm(fn, x) -> np.ndarray:
    """fn (a math-module function) on every element: the C library's values on every machine
    (numpy's own SIMD loops differ between CPUs in the last bit)."""
    x = np.asarray(x, dtype=np.float64)
    return np.fromiter(map(fn, x.ravel().tolist()), np.float64, count=x.size).reshape(x.shape)


def exp(x) -> np.ndarray:
    """exp in float64 (overflow to inf, underflow to 0, NaN kept)."""
    return _libm(math.exp, np.clip(x, -1000.0, 700.0))


def erf(x) -> np.ndarray:
    return _libm(math.erf, x)


def _quiet(fn):
    def wrapped(*a, **k):
        with np.errstate(all="ignore"):
            return fn(*a, **k)
    wrapped.__name__, wrapped.__doc__ = fn.__name__, fn.__doc__
    return wrapped


# ---- the targets' arithmetic ---------------------------------------------------------------------------
def ulp(x, man: int) -> np.ndarray:
    """The unit in the last place of x in a format with `man` stored mantissa bits and float32's
    exponent range (float32, bf16); 0 for 0, inf and NaN."""
    x = np.asarray(x, dtype=np.float64)
    e = np.frexp(x)[1].astype(np.int64) - 1  # floor(log2 |x|)
    u = np.ldexp(1.0, (np.maximum(e, -126) - man).astype(np.int32))
    return np.where(np.isfinite(x) & (x != 0), u, 0.0)


def seqsum(p: np.ndarray) -> np.ndarray:
    """The float32 sum over the last axis (keepdims), added from the first term to the last, each
    addition rounded to float32 (numpy's accumulate is sequential; its reduce is pairwise)."""
    p = np.asarray(p, dtype=np.float32)
    if p.shape[-1] == 0:
        return np.zeros(p.shape[:-1] + (1,))
    return np.add.accumulate(p, axis=-1, dtype=np.float32)[..., -1:].astype(np.float64)


def matsum(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a[..., M, K] @ b[..., K, N], each product rounded to float32 (exact for bf16 operands) and
    the products summed in float32 from k = 0 upwards, as float64."""
    a = np.asarray(a, dtype=np.float32)
    b = np.asarray(b, dtype=np.float32)
    acc = np.zeros(np.broadcast_shapes(a.shape[:-1] + (1,), b.shape[:-2] + (1, b.shape[-1])), np.float32)
    tmp = np.empty_like(acc)
    for k in range(a.shape[-1]):
        np.multiply(a[..., :, k:k + 1], b[..., k:k + 1, :], out=tmp)
        acc += tmp
    return acc.astype(np.float64)


class Device:
    """Operations of one target's arithmetic on float64 arrays holding its values. `w` rounds to
    the working format (the format values are stored in), `acc` to the accumulators' format.
    `soft_ulps`: elementary functions are software routines within that many units in the last
    place (0: instructions, correctly rounded), their errors drawn with `rng`."""
    name = "?"
    man = 23
    soft_ulps = 0.0

    def __init__(self, rng: np.random.Generator | None = None):
        self.rng = rng or np.random.default_rng(0)

    def w(self, x):
        raise NotImplementedError

    def fn(self, exact):
        """An elementary function's result from its exact value: rounded once, or for a software
        routine moved by up to soft_ulps - 1/2 ulp first (uniform, seeded), so within soft_ulps."""
        exact = np.asarray(exact, dtype=np.float64)
        if not self.soft_ulps:
            return self.w(exact)
        u = self.rng.uniform(-(self.soft_ulps - 0.5), self.soft_ulps - 0.5, exact.shape)
        return self.w(exact + u * ulp(exact, self.man))

    def acc(self, x):
        return f32(x)

    # element-wise
    def add(self, a, b):
        return self.w(a + b)

    def sub(self, a, b):
        return self.w(a - b)

    def mul(self, a, b):
        return self.w(a * b)

    def fma(self, a, b, c):
        """a * b + c (a fused multiply-add, or the MAC's fp32 sum, rounded once)."""
        return self.w(self.acc(a * b + c))

    def dot2(self, a, b, c, d):
        """a * b + c * d (RoPE's rotation)."""
        return self.w(self.acc(self.acc(a * b) + c * d))

    def exp(self, x):
        return self.fn(exp(x))

    def recip(self, x):
        return self.w(1.0 / x)

    def rsqrt(self, x):
        return self.recip(self.w(np.sqrt(x)))

    def relu(self, x):
        return np.maximum(x, 0.0)

    def silu(self, x):
        return self.w(x / self.w(1.0 + self.exp(-x)))

    def gelu(self, x):
        u = self.w(1.0 + self.fn(erf(self.w(x * self.w(np.float64(1.0 / math.sqrt(2.0)))))))
        return self.w(self.w(0.5 * x) * u)

    # reductions over the last axis (keepdims)
    def products(self, p):
        """Products of two stored values as the accumulator receives them (float32): exact for bf16
        operands; rounded for float32 ones, a multiply then an add (a fused multiply-add is at
        least as accurate, so the model covers kernels with and without). Sums of products
        (dot, mm) round every product to float32 the same way."""
        return np.asarray(p, dtype=np.float64).astype(np.float32)

    def rsum(self, x):
        return self.w(seqsum(self.products(x)))

    def dot(self, a, b):
        """sum(a * b) over the last axis."""
        return self.w(seqsum(self.products(a * b)))

    def mm(self, a, b, bias=None):
        """a[..., M, K] @ b[..., K, N] (+ bias), the products summed from k = 0 upwards in the
        accumulator format (float32), written out in the working format."""
        acc = matsum(a, b)
        if bias is not None:
            return self.add(self.w(acc), bias)
        return self.w(acc)

    def softmax(self, x):
        """Over the last axis: max, exp(x - max), sum, one reciprocal, products."""
        m = x.max(axis=-1, keepdims=True)
        e = self.exp(self.sub(x, m))
        return self.mul(e, self.recip(self.rsum(e)))

    def attention(self, q, k, v, scale, bias=None):
        """softmax(q k^T * scale + bias) v for one head (q[S, D], k/v[Sk, D]); q is scaled first
        (1/sqrt(D) = 1/8: exact)."""
        if scale != 1.0:
            q = self.mul(q, self.w(np.float64(scale)))
        s = self.mm(q, k.T)
        if bias is not None:
            s = self.add(s, bias)
        return self.mm(self.softmax(s), v)


class Scalar32(Device):
    """coral and boom: float32 scalar code as clang -O2 compiles the C kernels."""
    name = "f32"
    soft_ulps = 4.0

    def w(self, x):
        return f32(x)

    def fma(self, a, b, c):
        return self.add(self.mul(a, b), c)  # two roundings: a fused multiply-add is at least as accurate

    def dot2(self, a, b, c, d):
        return self.add(self.mul(a, b), self.mul(c, d))


class AieMl(Device):
    """amdnpu: bf16 data, the bf16 MAC into fp32 accumulators, vconv to bf16."""
    name = "amdnpu"
    man = 7
    soft_ulps = 2.0

    def w(self, x):
        return bf16(x)

    def mul(self, a, b):
        return self.w(self.acc(a * b))  # the MAC: exact product in fp32, narrowed

    def rsqrt(self, x):
        return self.w(1.0 / np.sqrt(x))  # one table lookup: 1/sqrt of a bf16 value, rounded once

    def silu(self, x):
        return self.fn(x / (1.0 + exp(-x)))

    def gelu(self, x):
        return self.fn(0.5 * x * (1.0 + erf(x / math.sqrt(2.0))))

    def rsum(self, x):
        return self.dot(x, np.ones(1))

    def dot(self, a, b):
        """Element i of the row into fp32 lane i % 16, each lane summed in order; the 16 lanes
        narrowed to bf16, two sums of 8 lanes (fp32, narrowed), then their sum (narrowed)."""
        p = self.products(a * b)
        n = p.shape[-1]
        p = np.concatenate([p, np.zeros(p.shape[:-1] + (-n % 16,), np.float32)], axis=-1)
        lanes = self.w(seqsum(np.swapaxes(p.reshape(p.shape[:-1] + (-1, 16)), -1, -2))[..., 0])
        halves = [self.w(seqsum(lanes[..., 8 * h:8 * h + 8].astype(np.float32))) for h in (0, 1)]
        return self.w(self.acc(halves[0] + halves[1]))


class Plena(Device):
    """PLENA: bf16 vector and scalar units, fp32 matrix accumulators (targets/plena.isa)."""
    name = "plena"
    man = 7
    group = 256  # K rows of the four matrix SRAM tiles one accumulation can use

    def w(self, x):
        return bf16(x)

    def fma(self, a, b, c):
        return self.add(self.mul(a, b), c)

    def dot2(self, a, b, c, d):
        return self.add(self.mul(a, b), self.mul(c, d))

    def sigmoid_mul(self, x, t):
        """x * 1 / (1 + exp(t)) as V_EXP_V, V_ADD_VF 1, V_RECI_V, V_MUL_VV."""
        return self.mul(x, self.recip(self.add(self.exp(t), 1.0)))

    def relu(self, x):
        return self.sigmoid_mul(x, self.mul(x, -2.0 ** 32))

    def silu(self, x):
        return self.sigmoid_mul(x, -x)

    def gelu(self, x):
        c2 = self.w(-2.0 * float(self.w(np.float64(math.sqrt(2.0 / math.pi)))))     # -2 sqrt(2/pi)
        c3 = self.w(c2 * float(self.w(np.float64(0.044715))))                        # * 0.044715
        t = self.mul(self.add(self.mul(self.mul(x, x), c3), c2), x)
        return self.sigmoid_mul(x, t)

    def rsum(self, x):
        """V_RED_SUM per 64-lane chunk: s = bf16(s + fp32 sum of the chunk's lanes in order)."""
        s = np.zeros(x.shape[:-1] + (1,))
        for c in range(0, x.shape[-1], 64):
            s = self.w(self.acc(s + seqsum(self.products(x[..., c:c + 64]))))
        return s

    def dot(self, a, b):
        return self.rsum(self.mul(a, b))

    def mm(self, a, b, bias=None, group=None):
        """M_MM: fp32 sums over up to `group` K rows (four 64-row tiles), written out as bf16; the
        groups' results added in bf16 (V_ADD_VV)."""
        group = group or self.group
        K = a.shape[-1]
        out = None
        for g in range(0, K, group):
            part = Device.mm(self, a[..., g:g + group], b[..., g:g + group, :])
            out = part if out is None else self.add(out, part)
        if bias is not None:
            out = self.add(out, bias)
        return out

    def attention(self, q, k, v, scale, bias=None):
        """The online softmax over blocks of 64 keys (running max m and sum l per row in bf16 FP
        SRAM): per block s = q k_b^T (+ bias), m' = max(m, max s), a = exp(m - m'),
        p = exp(s - m'), l = l a + sum p, o = o a + p v_b; finally o / l (one reciprocal)."""
        if scale != 1.0:
            q = self.mul(q, self.w(np.float64(scale)))
        Sk = k.shape[0]
        m = l = o = None
        for b0 in range(0, Sk, 64):
            s = self.mm(q, k[b0:b0 + 64].T)
            if bias is not None:
                s = self.add(s, bias[:, b0:b0 + 64])
            mb = s.max(axis=-1, keepdims=True)
            if m is None:
                m = mb
                p = self.exp(self.sub(s, m))
                l = self.rsum(p)
                o = self.mm(p, v[b0:b0 + 64])
            else:
                m2 = np.maximum(m, mb)
                a = self.exp(self.sub(m, m2))
                p = self.exp(self.sub(s, m2))
                l = self.add(self.mul(l, a), self.rsum(p))
                o = self.add(self.mul(o, a), self.mm(p, v[b0:b0 + 64]))
                m = m2
        return self.mul(o, self.recip(l))


DEVICES = {"coral": Scalar32, "boom": Scalar32, "amdnpu": AieMl, "plena": Plena}


# ---- the tasks -------------------------------------------------------------------------------------------
def _rms_norm(d: Device, x, g, eps):
    n = x.shape[-1]
    ms = d.mul(d.dot(x, x), d.w(np.float64(1.0 / n)))
    r = d.rsqrt(d.add(ms, d.w(np.float64(eps))))
    return d.mul(d.mul(x, r), g)


def _layer_norm(d: Device, x, g, b, eps):
    n = x.shape[-1]
    inv_n = d.w(np.float64(1.0 / n))
    mean = d.mul(d.rsum(x), inv_n)
    dx = d.sub(x, mean)
    var = d.mul(d.dot(dx, dx), inv_n)
    r = d.rsqrt(d.add(var, d.w(np.float64(eps))))
    return d.fma(d.mul(dx, r), g, b)


def _rope(d: Device, x, cos, sin, D):
    s = x.shape[0]
    xh = x.reshape(s, -1, D)
    x1, x2 = xh[..., :D // 2], xh[..., D // 2:]
    c, sn = cos[:, None, :], sin[:, None, :]
    return np.concatenate([d.dot2(x1, c, -x2, sn), d.dot2(x2, c, x1, sn)], axis=-1).reshape(x.shape)


def _attention(d: Device, q, k, v, nh, nkv, D, scale=True, bias=None):
    s = q.shape[0]
    out = np.empty_like(q)
    for h in range(nh):
        g = h // (nh // nkv)
        out[:, h * D:(h + 1) * D] = d.attention(q[:, h * D:(h + 1) * D], k[:, g * D:(g + 1) * D],
                                                v[:, g * D:(g + 1) * D], 1.0 / math.sqrt(D) if scale else 1.0,
                                                None if bias is None else bias[h])
    return out


def _mx_roundtrip(x):
    """An intermediate stored to HBM with H_STORE_V and read back (MXFP8, blocks of 8 along a row)."""
    from kcgen.paths import TASKS, load_module
    L = load_module(TASKS / "layouts" / "plena.py")
    elems, scales = L.mx_encode(x)
    return L.mx_decode(elems, scales).astype(np.float64).reshape(x.shape)


def _hbm_pair(x):
    """PLENA's decoder kernels store k and v as a high MXFP8 part and the MXFP8 of the rest; the
    matrix machine adds both products in fp32, so the operand is their exact sum."""
    hi = _mx_roundtrip(x)
    return hi + _mx_roundtrip(bf16(x - hi))


def _decoder(d: Device, x, g, wqkvo, wffn, NH, D, llama: bool, cs=None, bias=None):
    H = NH * D
    h = _rms_norm(d, x, g[0], 1e-6)
    q, k, v = (d.mm(h, wqkvo[i]) for i in range(3))
    if llama:
        q, k = _rope(d, q, cs[0], cs[1], D), _rope(d, k, cs[0], cs[1], D)
    if isinstance(d, Plena):
        k, v = _hbm_pair(k), _hbm_pair(v)
    att = _attention(d, q, k, v, NH, NH, D, scale=llama, bias=bias)
    x = d.add(x, d.mm(att, wqkvo[3]))
    h = _rms_norm(d, x, g[1], 1e-6)
    wd = wffn[2] if llama else wffn[1]  # [H, F] (nn.Linear's layout of the down projection)
    F = wd.shape[1]
    if isinstance(d, Plena):  # 64 hidden columns at a time (vector SRAM), each block's product added to x
        for f0 in range(0, F, 64):
            a = d.mm(h, wffn[0][:, f0:f0 + 64])
            a = d.mul(d.silu(a), d.mm(h, wffn[1][:, f0:f0 + 64])) if llama else d.relu(a)
            x = d.add(x, d.mm(a, wd[:, f0:f0 + 64].T))
        return x
    a = d.mm(h, wffn[0])
    a = d.mul(d.silu(a), d.mm(h, wffn[1])) if llama else d.relu(a)
    return d.add(x, d.mm(a, wd.T))


def _conv(d: Device, x, w, depthwise: bool):
    """Stride 1, no padding; the sums in the loop order ci, kh, kw."""
    kh, kw = w.shape[-2:]
    win = np.lib.stride_tricks.sliding_window_view(x, (kh, kw), axis=(1, 2))  # C, OH, OW, KH, KW
    if depthwise:  # y[c, h, w] = sum over (i, j) of w[c, i, j] x[c, h + i, w + j]
        p = win * w[:, None, None, :, :]
        return d.w(seqsum(d.products(p.reshape(p.shape[:3] + (-1,))))[..., 0])
    p = win[None] * w[:, :, None, None, :, :]  # CO, CI, OH, OW, KH, KW
    p = np.moveaxis(p, 1, 3).reshape(w.shape[0], win.shape[1], win.shape[2], -1)  # CO, OH, OW, (ci kh kw)
    return d.w(seqsum(d.products(p))[..., 0])


def _conv_block(d: Device, x, w, bn, integer: bool):
    if integer:  # coral: int8 operands, exact int32 sums, then float32
        conv = np.einsum("chwij,ocij->ohw", np.lib.stride_tricks.sliding_window_view(x, (3, 3), axis=(1, 2)), w)
    else:
        conv = _conv(d, x, w, depthwise=False)
    return d.relu(d.fma(conv, bn[0][:, None, None], bn[1][:, None, None]))


@_quiet
def compute(task, target: str, inputs: dict, cfg: dict, seed: int = 0) -> dict:
    """The outputs of `task` on `target` computed in the target's arithmetic, as float64 arrays
    (`seed`: the software functions' perturbations)."""
    d = DEVICES[target](np.random.default_rng([seed, 0x5EED]))
    i = {k: np.asarray(v, dtype=np.float64) for k, v in inputs.items()}
    name = task.name
    if name == "relu":
        return {"y": d.relu(i["x"])}
    if name == "silu":
        return {"y": d.silu(i["x"])}
    if name == "gelu":
        return {"y": d.gelu(i["x"])}
    if name == "softmax":
        return {"y": d.softmax(i["x"])}
    if name == "layer_norm":
        return {"y": _layer_norm(d, i["x"], i["gamma"], i["beta"], 1e-5)}
    if name == "rms_norm":
        return {"y": _rms_norm(d, i["x"], i["gamma"], 1e-6)}
    if name == "gemv":
        mm = d.mm(i["a"], i["x"][:, None], group=10 ** 9) if isinstance(d, Plena) else d.mm(i["a"], i["x"][:, None])
        return {"y": mm[:, 0]}  # PLENA: M_TMV accumulates over every K tile
    if name == "gemm":
        return {"c": d.mm(i["a"], i["b"])}
    if name == "batch_matmul":
        return {"c": d.mm(i["a"], i["b"])}
    if name == "linear":
        return {"y": d.mm(i["x"], i["w"].T, bias=i["bias"])}
    if name == "conv2d":
        return {"y": _conv(d, i["x"], i["w"], depthwise=False)}
    if name == "depthwise_conv":
        return {"y": _conv(d, i["x"], i["w"], depthwise=True)}
    if name == "ffn":
        return {"y": d.mm(d.silu(d.mm(i["x"], i["w1"])), i["w2"])}
    if name == "swiglu":
        g = d.silu(d.mm(i["x"], i["wg"]))
        return {"y": d.mm(d.mul(g, d.mm(i["x"], i["wu"])), i["wd"])}
    if name == "rope":
        return {"y": _rope(d, i["x"], i["cos"], i["sin"], cfg["D"])}
    if name in ("scaled_dot_product", "flash_attention"):
        return {"o": _attention(d, i["q"], i["k"], i["v"], 1, 1, cfg["D"])}
    if name == "mha":
        return {"o": _attention(d, i["q"], i["k"], i["v"], cfg["NH"], cfg["NH"], cfg["D"])}
    if name == "gqa":
        return {"o": _attention(d, i["q"], i["k"], i["v"], cfg["NH"], cfg["NKV"], cfg["D"])}
    if name == "mqa":
        return {"o": _attention(d, i["q"], i["k"], i["v"], cfg["NH"], 1, cfg["D"])}
    if name == "decoder_block_llama":
        return {"y": _decoder(d, i["x"], i["g"], i["wqkvo"], i["wffn"], cfg["NH"], cfg["D"], True, cs=i["cs"])}
    if name == "decoder_block_t5":
        return {"y": _decoder(d, i["x"], i["g"], i["wqkvo"], i["wff"], cfg["NH"], cfg["D"], False, bias=i["bias"])}
    if name == "conv_block":
        return {"y": _conv_block(d, i["x"], i["w"], i["bn"], integer=task.dtype(target, "x").startswith("i"))}
    raise KeyError(f"no device model of task {name!r}")


MODELLED = ("relu", "silu", "gelu", "softmax", "layer_norm", "rms_norm", "gemv", "gemm", "batch_matmul", "linear",
            "conv2d", "depthwise_conv", "ffn", "swiglu", "rope", "scaled_dot_product", "flash_attention", "mha",
            "gqa", "mqa", "decoder_block_llama", "decoder_block_t5", "conv_block")
