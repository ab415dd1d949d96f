"""Benchmark (issue #21): the C simulator on floating-point-heavy code, boom (RV64 F+D) and coral
(RV32 F), in simulated instructions per second, with the timing model on.

    KCGEN_CACHE=/tmp/kc .venv/bin/python bench/fp_speed.py [--reps 200000] [--repeat 3] [--frm 0]

The loop runs eight independent FP operations per iteration (fmadd.d/.s, fmul, fadd, fsub, fdiv
on operands that round: every one is inexact) plus its counter and branch: 10 instructions. --frm
sets the dynamic rounding mode the operations use (0 RNE ... 4 RMM): RNE and RTZ/RDN/RUP run on
the host's IEEE arithmetic, RMM on the exact path.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import isadl  # noqa: E402
from kcgen.asm import Assembler  # noqa: E402
from kcgen.sim.simulator import Simulator  # noqa: E402

LOOP = {
    "boom": ("d", "fcvt.d.w", "fdiv.d"),
    "coral": ("s", "fcvt.s.w", "fdiv.s"),
}


def kernel(target: str, frm: int) -> str:
    p, cvt, div = LOOP[target]
    setup = [f"csrwi frm, {frm}" if target == "boom" else f"csrwi 0x002, {frm}"]
    setup += [f"li t1, {v}\n{cvt} f{r}, t1" for r, v in ((1, 3), (2, 7), (3, 11), (4, 13), (5, 17))]
    setup += [f"{div} f{r}, f{r}, f{r + 1}" for r in (1, 2, 3, 4)]  # thirds, sevenths, ...: never exact
    body = [f"fmadd.{p} f10, f1, f2, f10", f"fmadd.{p} f11, f2, f3, f11", f"fmul.{p} f12, f1, f3",
            f"fmul.{p} f13, f2, f4", f"fadd.{p} f14, f14, f1", f"fsub.{p} f15, f15, f2", f"fadd.{p} f16, f12, f13",
            f"fmadd.{p} f17, f3, f4, f17"]
    return "\n".join(setup + ["1:"] + body + ["addi t0, t0, -1", "bnez t0, 1b", "ret"]) + "\n"


def measure(target: str, reps: int, repeat: int, frm: int) -> tuple[float, int]:
    spec = isadl.load(ROOT / "targets" / f"{target}.isa")
    sim = Simulator(spec)
    program = Assembler(spec).assemble(kernel(target, frm), "fp.s")
    best = None
    for _ in range(repeat):
        sim.load(program)
        sim.view("x")[5] = reps
        t = time.perf_counter()
        res = sim.run(10 ** 12)
        dt = time.perf_counter() - t
        assert res.status == "halted", res
        best = dt if best is None else min(best, dt)
    return best, res.instret


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=200_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--frm", type=int, default=0)
    args = ap.parse_args()
    for target in ("boom", "coral"):
        seconds, instret = measure(target, args.reps, args.repeat, args.frm)
        print(f"{target}: {instret / 1e6:.1f} M instructions (frm {args.frm}) in {seconds:.3f} s: "
              f"{instret / seconds / 1e6:.1f} M instructions/s")


if __name__ == "__main__":
    main()
