"""Shared helpers: formats under test, C array calls, NaN-aware comparisons."""
from __future__ import annotations

import ml_dtypes
import numpy as np

from kcgen import numeric as N

# formats ml_dtypes (or numpy) implements, with their dtypes
ML = {
    "bf16": (N.BF16, ml_dtypes.bfloat16),
    "fp16": (N.FP16, np.float16),
    "e4m3": (N.E4M3, ml_dtypes.float8_e4m3fn),
    "e5m2": (N.E5M2, ml_dtypes.float8_e5m2),
    "e8m0": (N.E8M0, ml_dtypes.float8_e8m0fnu),
    "e4m3_ieee": (N.Format(4, 3), ml_dtypes.float8_e4m3),
    "e3m4": (N.Format(3, 4), ml_dtypes.float8_e3m4),
    "e3m2": (N.E3M2, ml_dtypes.float6_e3m2fn),
    "e2m3": (N.E2M3, ml_dtypes.float6_e2m3fn),
    "e2m1": (N.E2M1, ml_dtypes.float4_e2m1fn),
}

CUSTOM = {
    "e3m2_ieee": N.Format(3, 2),
    "e5m3_b11_finite": N.Format(5, 3, bias=11, finite=True),
    "u_e4m4": N.Format(4, 4, unsigned=True),
    "u_e4m4_finite": N.Format(4, 4, unsigned=True, finite=True),
    "u_e5m3_finite_nonan": N.Format(5, 3, unsigned=True, finite=True, nonan=True),
    "e3m0": N.Format(3, 0),
    "e5m0_finite": N.Format(5, 0, finite=True),
    "u_e4m0_nonan": N.Format(4, 0, unsigned=True, finite=True, nonan=True),
    "e2m5_nonan": N.Format(2, 5, nonan=True),
    "e1m3": N.Format(1, 3),
    "e1m2_finite": N.Format(1, 2, finite=True),
    "e6m9_b20": N.Format(6, 9, bias=20),
    "e4m3_b_neg3": N.Format(4, 3, bias=-3, finite=True),
    "e7m8_b200": N.Format(7, 8, bias=200),
}

# formats wider than 16 bits (checked on random patterns)
WIDE = {
    "f32": N.F32,
    "f64": N.F64,
    "e15m48": N.Format(15, 48),
    "e10m53": N.Format(10, 53),
    "u_e1m63": N.Format(1, 63, unsigned=True),
    "e9m22_finite": N.Format(9, 22, finite=True),
    "e12m30_b3000": N.Format(12, 30, bias=3000),
}


def cfmt(ffi, f):
    return ffi.new("kc_fmt *", [f.exp, f.man, f.bias, int(f.finite), int(f.unsigned), int(f.nonan)])


def c_decode(lib, ffi, f, bits):
    bits = np.ascontiguousarray(bits, dtype=np.uint64)
    out = np.empty(bits.shape, np.float64)
    lib.t_decode_n(cfmt(ffi, f), ffi.from_buffer("uint64_t[]", bits), ffi.from_buffer("double[]", out), bits.size)
    return out


def c_encode(lib, ffi, f, x, sat=False):
    x = np.ascontiguousarray(x, dtype=np.float64)
    out = np.empty(x.shape, np.uint64)
    lib.t_encode_n(cfmt(ffi, f), ffi.from_buffer("double[]", x), ffi.from_buffer("uint64_t[]", out), x.size,
                   int(sat))
    return out


def ml_bits(x, dtype):
    """ml_dtypes encodings of x as uint64 (sub-byte types occupy one byte)."""
    a = np.asarray(x).astype(dtype)
    return a.view(f"u{a.itemsize}").astype(np.uint64)


def ml_from_bits(bits, dtype):
    item = np.dtype(dtype).itemsize
    return np.asarray(bits).astype(f"u{item}").view(dtype)


def same_float(a, b):
    """Element-wise: both NaN, or identical bits (so +0 != -0)."""
    a = np.asarray(a, np.float64)
    b = np.asarray(b, np.float64)
    return (np.isnan(a) & np.isnan(b)) | (a.view(np.uint64) == b.view(np.uint64))


def same_code(f, a, b):
    """Element-wise: equal encodings, or both NaN encodings of f."""
    a = np.asarray(a, np.uint64)
    b = np.asarray(b, np.uint64)
    return (a == b) | (np.isnan(N.decode_array(f, a)) & np.isnan(N.decode_array(f, b)))


def all_midpoints(f):
    """Finite non-negative values of f (float64, sorted) and the midpoints between neighbours."""
    codes = np.arange(1 << (f.exp + f.man), dtype=np.uint64)
    v = N.decode_array(f, codes)
    v = np.unique(v[np.isfinite(v)])
    return v, (v[:-1] + v[1:]) / 2
