"""vshuffle on amdnpu: every mode of AIE-ML's shuffle table against a permutation derived from the mode's name.

The mode numbers and names are AIE-ML's (llvm-aie clang/lib/Headers/aiev2_enums.h, commit f0c1900f: T8_64x2_lo = 0
... T8_4x8 = 47; facts). The rule that turns a name into a permutation is AMD's (AI Engine-ML intrinsics guide,
"Shuffle modes"): T<bits>_<R>x<C> reads the input as R x C matrices of <bits>-bit elements in row-major order and
writes their transposes; a mode whose matrix is 1024 bits reads the pair xt:xs (xs low) and _lo/_hi pick the low
or high 512 bits of the result; a smaller matrix reads xs only, one matrix per block of its size (the blocking of
256- and 128-bit modes is inferred, deviation in the ISA); _flip reverses each row instead of transposing.
The expected bytes here come from numpy's reshape/transpose, not from the ISA's index arithmetic.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

from kcgen.sim.pyref import RefMachine
from tests.targets.test_amdnpu import asm, simulator, spec

MODES = [
    "T8_64x2_lo", "T8_64x2_hi", "T16_32x2_lo", "T16_32x2_hi", "T32_16x2_lo", "T32_16x2_hi", "T64_8x2_lo",
    "T64_8x2_hi", "T128_4x2_lo", "T128_4x2_hi", "T256_2x2_lo", "T256_2x2_hi", "T128_2x4_lo", "T128_2x4_hi",
    "T64_2x8_lo", "T64_2x8_hi", "T32_2x16_lo", "T32_2x16_hi", "T16_2x32_lo", "T16_2x32_hi", "T8_2x64_lo",
    "T8_2x64_hi", "T512_1x2_lo", "T512_1x2_hi", "T16_16x4_lo", "T16_16x4_hi", "T16_4x16_lo", "T16_4x16_hi",
    "T16_8x4", "T16_4x8", "T32_8x4_lo", "T32_8x4_hi", "T32_4x8_lo", "T32_4x8_hi", "T32_4x4", "T8_8x8", "T8_16x4",
    "T8_4x16", "T16_1x2_flip", "T16_4x4", "T16_4x2", "T16_2x4", "T16_8x2", "T16_2x8", "T16_16x2", "T16_2x16",
    "T8_8x4", "T8_4x8",
]


def expected(name: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    bits, rows, cols, tail = re.fullmatch(r"T(\d+)_(\d+)x(\d+)(?:_(lo|hi|flip))?", name).groups()
    eb, rows, cols = int(bits) // 8, int(rows), int(cols)
    block = eb * rows * cols
    src = np.concatenate([a, b]) if block == 128 else a
    assert (block == 128) == (tail in ("lo", "hi")), name  # the table pairs lo/hi exactly with 1024-bit matrices
    m = src.reshape(-1, rows, cols, eb)
    out = (m[:, :, ::-1, :] if tail == "flip" else m.transpose(0, 2, 1, 3)).reshape(-1)
    return out[64:] if tail == "hi" else out[:64]


def run_shuffle(machine, text: str, mode: int, a: np.ndarray, b: np.ndarray, dest: str = "x"):
    machine.load(asm().assemble(text + "\n", "t.s"))
    machine.arrays["wl"][5], machine.arrays["wh"][5] = a[:32], a[32:]
    machine.arrays["wl"][6], machine.arrays["wh"][6] = b[:32], b[32:]
    machine.arrays["r"][17] = mode
    res = machine.run(10)
    assert res.status == "halted", res
    if dest == "x":
        return np.concatenate([machine.arrays["wl"][4], machine.arrays["wh"][4]])
    lo, hi = ("amll", "amlh") if dest == "bml" else ("amhl", "amhh")
    return np.concatenate([machine.arrays[lo][4], machine.arrays[hi][4]]).view(np.uint8)


def test_the_table_has_48_modes():
    assert len(MODES) == 48 and len(set(MODES)) == 48


@pytest.mark.parametrize("machine", ["c", "ref"])
@pytest.mark.parametrize("mode", range(48), ids=MODES)
def test_every_shuffle_mode_is_its_documented_permutation(mode, machine):
    rng = np.random.default_rng(mode)
    a = rng.integers(0, 256, 64, dtype=np.uint8)
    b = rng.integers(0, 256, 64, dtype=np.uint8)
    m = simulator() if machine == "c" else RefMachine(spec())
    got = run_shuffle(m, "vshuffle x4, x5, x6, r17", mode, a, b)
    np.testing.assert_array_equal(got, expected(MODES[mode], a, b), err_msg=MODES[mode])


@pytest.mark.parametrize("dest", ["bml", "bmh"])
def test_shuffle_into_an_accumulator_half(dest):
    """vshuffle bml/bmh: the same 512 bits, written to an accumulator register [C: vshuffle.mir forms]."""
    rng = np.random.default_rng(7)
    a = rng.integers(0, 256, 64, dtype=np.uint8)
    b = rng.integers(0, 256, 64, dtype=np.uint8)
    got = run_shuffle(simulator(), f"vshuffle {dest}4, x5, x6, r17", 35, a, b, dest)
    np.testing.assert_array_equal(got, expected("T8_8x8", a, b))


def test_undefined_modes_trap():
    m = simulator()
    m.load(asm().assemble("vshuffle x4, x5, x6, r17\n", "t.s"))
    m.arrays["r"][17] = 48
    res = m.run(10)
    assert res.status == "trap" and "mode" in str(res.trap)


def test_one_mode_retiles_what_took_a_chain():
    """An 8x8 int8 tile in row-major order becomes column-major with one T8_8x8 (mode 35)."""
    tile = np.arange(64, dtype=np.uint8)
    got = run_shuffle(simulator(), "vshuffle x4, x5, x6, r17", 35, tile, np.zeros(64, np.uint8))
    np.testing.assert_array_equal(got, tile.reshape(8, 8).T.reshape(-1))
