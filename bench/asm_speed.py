"""Benchmark: assemble a generated 50k-line RV32I program with the mini RV32I fixture (target ≥ 100k lines/s).

    .venv/bin/python bench/asm_speed.py [--lines 50000] [--repeat 5] [--seed 1] [--generic]

The program looks like hand-written or compiler-emitted kernel code: a label every 50 lines,
ALU ops with random registers and immediates (mostly distinct lines), loads and stores with
random offsets, branches to labels, `li` with small and large constants, comments and blank lines.
A fresh assembler is built for each run (no statement memo carried over) and assembles new text.
`--generic` turns the line lanes off (every line through the generic path), for comparison.
"""
from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import isadl  # noqa: E402
from kcgen.asm import Assembler  # noqa: E402

REGS = ["zero", "ra", "sp", "gp", "tp", "t0", "t1", "t2", "s0", "s1"] + [f"a{i}" for i in range(8)] + \
       [f"s{i}" for i in range(2, 12)] + [f"t{i}" for i in range(3, 7)]


def generate(n: int, seed: int) -> str:
    rnd = random.Random(seed)
    r = lambda: rnd.choice(REGS)  # noqa: E731
    lines = ["    .text", "    .globl kernel", "kernel:"]
    labels = 0
    while len(lines) < n:
        if len(lines) % 50 == 0:
            lines.append(f".L{labels}:")
            labels += 1
            continue
        k = rnd.random()
        if k < 0.22:
            lines.append(f"    addi {r()}, {r()}, {rnd.randint(-2048, 2047)}")
        elif k < 0.40:
            op = rnd.choice(["add", "sub", "and", "or", "xor", "sll", "srl", "sra", "slt", "sltu"])
            lines.append(f"    {op} {r()}, {r()}, {r()}")
        elif k < 0.55:
            lines.append(f"    lw {r()}, {4 * rnd.randint(-512, 511)}({r()})")
        elif k < 0.65:
            lines.append(f"    sw {r()}, {4 * rnd.randint(-512, 511)}({r()})")
        elif k < 0.73:
            op = rnd.choice(["beq", "bne", "blt", "bge", "bltu", "bgeu"])
            lines.append(f"    {op} {r()}, {r()}, .L{max(labels - 1, 0)}")
        elif k < 0.78:
            lines.append(f"    li {r()}, {rnd.choice([rnd.randint(-2048, 2047), rnd.randint(-2**31, 2**31 - 1)])}")
        elif k < 0.83:
            lines.append(f"    slli {r()}, {r()}, {rnd.randint(0, 31)}")
        elif k < 0.90:
            lines.append(f"    # step {len(lines)}: accumulate the partial sums")
        elif k < 0.95:
            lines.append("")
        else:
            lines.append(f"    mv {r()}, {r()}")
    lines.append("    ebreak")
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, default=50_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--generic", action="store_true", help="line lanes off: every line through the generic path")
    args = ap.parse_args()
    spec = isadl.load(ROOT / "tests" / "isadl" / "fixtures" / "rv32i_mini.isa")
    times = []
    for i in range(args.repeat):
        asm = Assembler(spec)  # fresh: no statement memo carried between runs
        asm._fast_lane = not args.generic
        text = generate(args.lines, args.seed + i)
        t0 = time.perf_counter()
        program = asm.assemble(text, "bench.s")
        times.append(time.perf_counter() - t0)
    n = len(text.splitlines())
    best, med = min(times), statistics.median(times)
    print(f"{n} lines, {len(program.placed)} instructions, {len(program.image())} bytes")
    print(f"assemble: median {med * 1000:.0f} ms = {n / med / 1000:.0f}k lines/s "
          f"(best {best * 1000:.0f} ms = {n / best / 1000:.0f}k lines/s, {args.repeat} runs"
          f"{', generic path only' if args.generic else ''})")


if __name__ == "__main__":
    main()
