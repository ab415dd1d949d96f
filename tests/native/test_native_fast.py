"""The specialised float32 encoders give exactly kc_encode's bits (and so ml_dtypes')."""
from __future__ import annotations

import numpy as np
import pytest

from .common import ML, ml_bits, same_code

FAST = [(0, "bf16"), (1, "fp16"), (2, "e4m3"), (3, "e5m2")]


@pytest.mark.parametrize("which,name,sat", [(w, n, 0) for w, n in FAST] + [(2, "e4m3", 1), (3, "e5m2", 1)])
def test_fast_encoder_equals_generic_on_a_sweep_of_all_floats(lib, ffi, which, name, sat):
    bad = ffi.new("uint32_t *")
    # every 127th float32 bit pattern (34M values, all exponents, varied low bits), two phases
    for start in (0, 64):
        wrong = lib.t_fast_vs_generic(which, start, 127, (2**32 - start) // 127, sat, bad)
        assert wrong == 0, hex(bad[0])
    # every pattern in a band of exponents around the format's range, all 2^22 consecutive patterns
    lo = {0: 0x00000000, 1: 0x30000000, 2: 0x3A000000, 3: 0x33000000}[which]
    wrong = lib.t_fast_vs_generic(which, lo, 1, 1 << 22, sat, bad)
    assert wrong == 0, hex(bad[0])


@pytest.mark.parametrize("which,name", FAST)
def test_fast_encoder_vs_ml_dtypes(lib, ffi, which, name):
    f, dtype = ML[name]
    rng = np.random.default_rng(which)
    x = rng.integers(0, 2**32, 300000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    x = np.concatenate([x, (rng.standard_normal(300000) * 2.0 ** rng.integers(-30, 20, 300000)).astype(np.float32)])
    out = np.empty(x.shape, np.uint32)
    lib.t_fast_encode_n(which, ffi.from_buffer("float[]", x), ffi.from_buffer("uint32_t[]", out), x.size, 0)
    assert same_code(f, out.astype(np.uint64), ml_bits(x, dtype)).all()


def test_fast_nan_is_canonical(lib):
    nan = np.frombuffer(np.array([0xFFC12345], np.uint32).tobytes(), np.float32)[0]
    assert lib.kc_f32_to_bf16(float(nan)) == 0x7FC0
    assert lib.kc_f32_to_fp16(float(nan)) == 0x7E00
    assert lib.kc_f32_to_e4m3(float(nan), 0) == lib.kc_f32_to_e4m3(float(nan), 1) == 0x7F
    assert lib.kc_f32_to_e5m2(float(nan), 1) == 0x7E


def test_fast_saturation_and_overflow(lib):
    assert lib.kc_f32_to_e4m3(464.0, 0) == 0x7E       # tie with the (virtual) 480: even -> 448
    assert lib.kc_f32_to_e4m3(464.01, 0) == 0x7F      # overflow -> NaN (no infinity)
    assert lib.kc_f32_to_e4m3(-1e30, 1) == 0xFE
    assert lib.kc_f32_to_e4m3(float("inf"), 1) == 0x7E
    assert lib.kc_f32_to_e5m2(61440.0, 0) == 0x7C     # tie with 65536: odd max -> overflow -> inf
    assert lib.kc_f32_to_e5m2(61439.0, 0) == 0x7B
    assert lib.kc_f32_to_e5m2(-float("inf"), 1) == 0xFB
    assert lib.kc_f32_to_bf16(3.4e38) == 0x7F80
    assert lib.kc_f32_to_fp16(65520.0) == 0x7C00
    assert lib.kc_f32_to_fp16(-0.0) == 0x8000
