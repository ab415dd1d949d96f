"""Benchmark: the generated C simulator (issue #4 item 8).

    .venv/bin/python bench/sim_speed.py [--repeat 5]

1. scalar: an integer loop on the mini RV32I fixture with the timing model on, in simulated
   instructions per second (target >= 250 M/s);
2. vector: PLENA V_ADD_VV (64 bf16 lanes per instruction) in a hardware loop, against numpy adding
   bf16 arrays (ml_dtypes) of the same total length; and M_MM (a 4x64 by 64x4 bf16 product with
   fp32 accumulation) against numpy's float32 matmul (BLAS) doing the same multiply-adds, and against
   numpy accumulating step by step with an f32 rounding per step, as the semantics define (target:
   within 3x of numpy);
3. the simulator against the Python reference interpreter on the scalar loop (target >= 300x);
4. cold build (empty cache) and warm build (cache hit) of a fixture (targets <= 5 s and <= 0.1 s).
Figures go to docs/performance.md by hand, with the machine they were measured on.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import ml_dtypes
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import isadl  # noqa: E402
from kcgen.asm import Assembler  # noqa: E402
from kcgen.sim.build import build  # noqa: E402
from kcgen.sim.simulator import Simulator  # noqa: E402

FIX = ROOT / "tests" / "isadl" / "fixtures"

SCALAR = """
    li t0, {n}
loop:
    addi a0, a0, 1
    xor a1, a1, a0
    slli a2, a1, 3
    add a3, a3, a2
    addi t0, t0, -1
    bne t0, zero, loop
    ebreak
"""


def median_time(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def scalar(repeat: int) -> None:
    spec = isadl.load(FIX / "rv32i_mini.isa")
    sim = Simulator(spec)
    n = 20_000_000
    program = Assembler(spec).assemble(SCALAR.format(n=n))
    result = None

    def go():
        nonlocal result
        sim.load(program)
        result = sim.run(10**10)
    t = median_time(go, repeat)
    print(f"scalar loop (rv32i_mini, timing on): {result.instret / t / 1e6:.0f} M instructions/s "
          f"({result.instret} instructions, {result.cycles} cycles, median of {repeat})")
    try:
        from kcgen.sim.pyref import RefMachine
    except ImportError:
        print("reference interpreter: not available")
        return
    ref = RefMachine(spec)
    small = Assembler(spec).assemble(SCALAR.format(n=2000))
    ref.load(small)
    t0 = time.perf_counter()
    r = ref.run(10**7)
    tref = time.perf_counter() - t0
    ref_rate = r.steps / tref
    print(f"reference interpreter: {ref_rate / 1e3:.1f} k instructions/s; the C simulator is "
          f"{result.instret / t / ref_rate:.0f}x faster")


def vector(repeat: int) -> None:
    spec = isadl.load(FIX / "plena_mini.isa")
    sim = Simulator(spec)
    asm = Assembler(spec)
    iters = 200_000
    add = asm.assemble(f"S_ADDI_INT gp2, gp0, 64\nS_ADDI_INT gp3, gp0, 128\nS_ADDI_INT gp1, gp0, 192\n"
                       f"C_LOOP_START gp4, {iters}\nV_ADD_VV gp1, gp2, gp3\nC_LOOP_END gp4\n")
    rng = np.random.default_rng(0)
    sim.mem("vsram")[:256] = rng.standard_normal(256).astype(ml_dtypes.bfloat16)
    result = None

    def go():
        nonlocal result
        sim.load(add)
        result = sim.run(10**9)
    t = median_time(go, repeat)
    elems = iters * 64
    a = rng.standard_normal(elems).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal(elems).astype(ml_dtypes.bfloat16)
    tn = median_time(lambda: np.add(a, b), repeat)
    print(f"V_ADD_VV: {elems / t / 1e6:.0f} M bf16 adds/s simulated; numpy bf16 add {elems / tn / 1e6:.0f} M/s "
          f"-> {t / tn:.1f}x numpy ({result.status}, {result.cycles} cycles)")

    mm_iters = 20_000
    mm = asm.assemble(f"C_LOOP_START gp4, {mm_iters}\nM_MM 0, gp0, gp0\nC_LOOP_END gp4\n")
    sim.mem("msram")[:64 * 64] = rng.standard_normal(64 * 64).astype(ml_dtypes.bfloat16)

    def go_mm():
        nonlocal result
        sim.load(mm)
        result = sim.run(10**9)
    t = median_time(go_mm, repeat)
    macs = mm_iters * 4 * 4 * 64
    x = rng.standard_normal((mm_iters * 4, 64)).astype(np.float32)
    w = rng.standard_normal((64, 4)).astype(np.float32)
    tn = median_time(lambda: x @ w, repeat)

    def sequential():  # the same rounding as the semantics: one f32 rounding per accumulation step
        acc = np.zeros((mm_iters * 4, 4), np.float32)
        for k in range(64):
            acc += x[:, k:k + 1] * w[k]
        return acc
    ts = median_time(sequential, repeat)
    # the same element work from the same data: bf16 operands (as the V_ADD_VV comparison uses),
    # products summed in f32 -- numpy's way is to widen to f32 and call BLAS
    xb, wb = x.astype(ml_dtypes.bfloat16), w.astype(ml_dtypes.bfloat16)
    tb = median_time(lambda: xb.astype(np.float32) @ wb.astype(np.float32), repeat)
    print(f"M_MM: {macs / t / 1e6:.0f} M MACs/s simulated; numpy float32 matmul (BLAS) on float32 data "
          f"{macs / tn / 1e6:.0f} M MACs/s -> {t / tn:.1f}x; numpy on the same bf16 data (widen to f32, BLAS) "
          f"{macs / tb / 1e6:.0f} M MACs/s -> {t / tb:.1f}x; numpy accumulating step by step in f32 as the "
          f"semantics do {macs / ts / 1e6:.0f} M MACs/s -> {t / ts:.1f}x ({result.status})")


def builds(repeat: int) -> None:
    spec = isadl.load(FIX / "rv32i_mini.isa")
    with tempfile.TemporaryDirectory() as d:
        os.environ["KCGEN_CACHE"] = d
        cold = build(spec)
        warm = median_time(lambda: build(spec), repeat)
        del os.environ["KCGEN_CACHE"]
    print(f"build rv32i_mini: cold {cold.seconds:.2f} s, warm (cache hit) {warm * 1000:.1f} ms")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    scalar(args.repeat)
    vector(args.repeat)
    builds(args.repeat)


if __name__ == "__main__":
    main()
