"""llvm-mca as an oracle for the `ooo` timing model: steady-state cycles per iteration of hot loops.

boom.isa is configured (parameter overrides only) with the widths, ports and latencies of a core
llvm-mca-19 knows, SiFive's P450 (`-mcpu=sifive-p450`, LLVM's SiFiveP400 scheduling model): the
values below are what `llvm-mca-19 -mtriple=riscv64 -mcpu=sifive-p450 -all-views` prints for it
(dispatch width, ROB entries, per-instruction latency, throughput and resource use).

For each kernel, the hot loops are found by running it once on a task's inputs: a loop is a header
and the backward jumps to it whose iterations mostly stay between the header and the jump (the
last such jump closes the loop); the innermost ones with at least MIN_SHARE of the cycles are hot.
Each loop is measured twice:
  * llvm-mca: the loop body as straight-line code (the instructions between header and closing
    jump that run on at least half of the iterations, in address order, branches kept as
    instructions) for N and 2N iterations; cycles per iteration = (cycles(2N) - cycles(N)) / N.
    It assumes L1 hits and perfect prediction.
  * ours: in place, on the C simulator: the kernel runs to the loop's first entry that iterates;
    one full pass of the loop warms the caches and trains the predictor; then registers and memory
    are restored to the entry state and the loop runs again without a reset (caches, predictor and
    pipeline state kept); cycles per iteration = (cycles after 2N iterations - cycles after N) / N,
    with N = trip // 2 inside one pass (no exit in the window), or, for loops of fewer than IN_PASS
    iterations, over whole passes (each restarted from the entry state; their exits, which gshare
    predicts at such trip counts, included).

Mechanisms llvm-mca's P400 model has that boom's parameters cannot express (so not configured):
a separate store pipe (boom's mem ports take loads and stores alike: see MEM_PORTS below), integer
loads 1 cycle faster than FP loads (one LOAD_LAT), branches on one integer pipe only and
multiplies/int-to-FP moves sharing an integer pipe (boom: all ALUs branch; mul is its own unit;
int-to-FP moves use the FP pipe), a fixed-latency divider (boom's stops early on small operands),
and fsqrt.s one cycle shorter than fdiv.s (one FDIV_S_CYCLES). Neither models issue-queue sizes
(llvm-mca reports no scheduler buffers for this model): the ROB is the only window in both.
"""
from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass
from typing import Optional

import numpy as np

MCA = shutil.which("llvm-mca-19") or shutil.which("llvm-mca")
MCPU = "sifive-p450"
# boom.isa parameter -> the SiFiveP400 model's value, as llvm-mca-19 -mcpu=sifive-p450 reports it
P450 = {
    "WIDTH": 3,          # "Dispatch Width: 3"
    "INT_ALUS": 3,       # IEXQ0, IEXQ1, IEXQ2 (add/slli RThroughput 0.33)
    "MEM_PORTS": 2,      # a Load pipe and a Store pipe (flw and fsw RThroughput 1.00 each, on different
                         # resources); boom's mem ports take either, so 2 loads may issue together here
    "FP_PIPES": 1,       # FEXQ0 (fmadd.s/fadd.s/fmul.d RThroughput 1.00)
    "ROB": 56,           # "Total ROB Entries: 56"
    "MUL_LAT": 3,        # mul/mulw latency 3, RThroughput 1.00
    "FMA_LAT": 4,        # fadd/fsub/fmul/fmadd/fnmsub .s/.d latency 4
    "LOAD_LAT": 5,       # flw/fld latency 5 (lw/ld/lb: 4; boom.isa has one load latency)
    "FMISC_LAT": 2,      # fsgnj/fmin/fmax/fcvt.s.d latency 2
    "I2F_LAT": 2,        # fmv.w.x/fmv.d.x/fcvt.s.w/fcvt.d.l latency 2
    "F2I_LAT": 2,        # fmv.x.w/fcvt.w.s/flt/feq/fclass latency 2
    "FDIV_S_CYCLES": 19,  # fdiv.s latency 19 (FloatDiv busy 18); fsqrt.s 18 / 17
    "FDIV_D_CYCLES": 33,  # fdiv.d/fsqrt.d latency 33 (FloatDiv busy 32)
}
# The loops outside TOLERANCE, each with the mechanism that differs (tests/targets/test_boom_mca.py checks
# that every outlier is here). At C2 there are none; the mechanisms behind the largest deviations are:
#  - MEM_PORTS: with 2 ports boom may issue 2 loads in a cycle where P400 has one Load pipe (load-heavy
#    reference gelu/silu: 0.86); with 1 port a store takes the port P400 keeps for stores (store-heavy
#    loops: up to 1.85, e.g. reference/softmax:291-316, 8 loads + 8 stores).
#  - data-dependent branches (gelu/silu/ffn/swiglu's range checks, softmax's running maximum): boom's gshare
#    mispredicts, llvm-mca assumes perfect prediction (up to 1.10).
OUTLIERS: dict[str, str] = {}
MIN_SHARE = 0.05  # a loop is hot with at least this share of the kernel's cycles
STEADY = 32  # N: iterations per measured window, at least (whole passes when the loop is shorter)
IN_PASS = 16  # loops of at least this many iterations are measured inside one pass (N = trip // 2): the
              # exit of a longer loop is beyond what boom's 12-bit global history predicts
MAX_STEPS = 400_000
TOLERANCE = 0.15  # issue #19: within 15 % on at least 80 % of the loops


@dataclass
class Loop:
    kernel: str  # "baseline/gemv"
    first: int  # source lines of the header and of the closing branch
    last: int
    header: int  # addresses
    latch: int  # the last backward jump to the header
    body: list[str]  # one iteration's instructions (source text), straight-line, address order
    trip: int  # iterations per entry to the loop, on average over the run
    share: float  # of the kernel's cycles

    @property
    def name(self) -> str:
        return f"{self.kernel}:{self.first}-{self.last}"


@dataclass
class Row:
    loop: Loop
    mca: Optional[float]
    ours: Optional[float]
    rthroughput: Optional[float] = None
    note: str = ""
    misses: int = 0  # L1 data cache misses in our measured window (llvm-mca assumes none)
    mispredicts: int = 0  # and branch mispredictions (llvm-mca assumes none)

    @property
    def ratio(self) -> Optional[float]:
        return self.ours / self.mca if self.mca and self.ours is not None else None


def p450_spec():
    import isadl
    return isadl.load(isadl.find_target("boom"), P450)


def _trial(sim, spec, program, task, config: str, seed: int = 0):
    from .evaluation import layout_for, start_trial
    start_trial(sim, program, task, layout_for(spec, task, "boom", config), seed, task.profiles[0],
                task.config("boom", config))


def hot_loops(spec, kernel: str, code: str, task, config: str = "C1", min_share: float = MIN_SHARE) -> list[Loop]:
    """The innermost loops (backward jumps) with at least `min_share` of the kernel's cycles."""
    from collections import Counter
    from .evaluation import _assembler, _simulator
    program = _assembler(spec).assemble(code, "kernel.s")
    sim = _simulator(spec)
    _trial(sim, spec, program, task, config)
    runs, cycles, jumps, trace = Counter(), Counter(), Counter(), []
    while len(trace) < MAX_STEPS:
        pc, before = sim.pc, int(sim.s.cycles)
        res = sim.run(1)
        trace.append(pc)
        runs[pc] += 1
        cycles[pc] += int(sim.s.cycles) - before
        if res.status != "budget":
            break
        if sim.pc <= pc:
            jumps[(sim.pc, pc)] += 1
    total = max(sum(cycles.values()), 1)
    pcs_run = np.array(trace, dtype=np.int64)
    # a loop is a backward jump whose iterations mostly stay between its target and itself; in clang's
    # rotated nests an inner loop's exit can jump back to its parent's latch block, a cycle through the nest
    latches: dict[int, int] = {}
    for h, l in jumps:
        if _in_place(pcs_run, h, l) * 2 >= jumps[(h, l)]:
            latches[h] = max(latches.get(h, l), l)  # several backward jumps to one header: one loop
    spans = list(latches.items())
    inner = [(h, l) for h, l in spans if not any((h2, l2) != (h, l) and h <= h2 and l2 <= l for h2, l2 in spans)]
    lines = code.splitlines()
    out = []
    for h, l in inner:
        pcs = sorted(p for p in runs if h <= p <= l)
        share = sum(cycles[p] for p in pcs) / total
        if share < min_share:
            continue
        iters = runs[h]  # every iteration passes its header
        body, seen = [], set()
        for p in pcs:
            if runs[p] * 2 < iters:
                continue  # a path taken on fewer than half of the iterations
            ln = program.source_line(p)
            if ln not in seen:  # a pseudo-instruction's expansion is one source line
                seen.add(ln)
                body.append(lines[ln - 1].split("#")[0].strip())
        entries = max(runs[h] - sum(n for (h2, l2), n in jumps.items() if h2 == h and l2 <= l), 1)
        out.append(Loop(kernel, program.source_line(h), program.source_line(l), h, l, body,
                        round(iters / entries), share))
    return sorted(out, key=lambda lp: -lp.share)


def _in_place(trace, header: int, latch: int) -> int:
    """How many times the run went from `header` to `latch` without leaving [header, latch]."""
    outside = np.concatenate(([0], np.cumsum((trace < header) | (trace > latch))))
    starts = np.flatnonzero(trace == header)
    ends = np.flatnonzero(trace == latch)
    if not len(starts) or not len(ends):
        return 0
    k = np.searchsorted(starts, ends, side="right") - 1  # the last arrival at the header before each latch
    ok = k >= 0
    return int(np.count_nonzero(outside[ends[ok] + 1] == outside[starts[k[ok]]]))


def ours(spec, code: str, task, loop: Loop, config: str = "C1", steady: int = STEADY) -> tuple[float, int, int]:
    """Steady-state cycles per iteration of `loop`, in place, warm (see the module's doc); and the L1 data
    cache misses and branch mispredictions inside the measured window."""
    from .evaluation import _assembler, _simulator
    program = _assembler(spec).assemble(code, "kernel.s")
    sim = _simulator(spec)
    _trial(sim, spec, program, task, config)

    saved: dict = {}

    def restore() -> None:
        for k, a in saved.items():
            sim.arrays[k][...] = a
        sim.pc = loop.header

    def one_pass(stop: int, marks: dict) -> int:
        """Run iterations until the loop is left or `stop` iterations in all; record cycles per iteration."""
        n = marks["n"]
        while n < stop:
            if sim.run(1).status != "budget":
                raise RuntimeError(f"{loop.name}: the kernel ended inside the measurement")
            inside = loop.header <= sim.pc <= loop.latch
            if sim.pc == loop.header or not inside:  # back at the header, or the exit: an iteration done
                n += 1
                marks[n] = int(sim.s.cycles)
                if n == stop // 2 or n == stop:
                    st = sim.structure_stats()
                    marks[("events", n)] = (st["caches"]["l1d"]["misses"], st["predictor"]["mispredicts"])
            if not inside:
                break
        marks["n"] = n
        return n

    steps, trip, warm = 0, 0, {"n": 0}
    while trip == 0:  # the first entry that iterates (a loop tested at its top may be skipped)
        while sim.pc != loop.header:
            if sim.run(1).status != "budget" or steps > MAX_STEPS:
                raise RuntimeError(f"{loop.name}: the loop's header is never reached")
            steps += 1
        saved = {k: a.copy() for k, a in sim.arrays.items()}
        trip = one_pass(10 ** 9, warm)  # warm-up: caches filled, predictor trained
    n = trip * -(-steady // trip) if trip < IN_PASS else min((trip - 1) // 2, 4 * steady)  # no exit in the window
    marks = {"n": 0}
    while marks["n"] < 2 * n:
        restore()
        one_pass(2 * n, marks)
    (m1, p1), (m2, p2) = marks[("events", n)], marks[("events", 2 * n)]
    return (marks[2 * n] - marks[n]) / n, m2 - m1, p2 - p1


_BRANCH = re.compile(r"^(b[a-z]*|j|jal)\s")


def mca_text(body: list[str]) -> str:
    """The body as llvm-mca input: branch targets pointed at a label of its own."""
    out = [".Lmca_top:"]
    for insn in body:
        if _BRANCH.match(insn):
            head, _, _ = insn.rpartition(",") if "," in insn else (insn.split()[0], "", "")
            insn = f"{head}, .Lmca_top" if "," in insn else f"{head} .Lmca_top"
        out.append("\t" + insn)
    return "\n".join(out) + "\n"


def _run_mca(text: str, iterations: int) -> tuple[int, float]:
    proc = subprocess.run([MCA, "-mtriple=riscv64", f"-mcpu={MCPU}", "-mattr=+m,+f,+d",
                           f"-iterations={iterations}", "-instruction-info=false", "-resource-pressure=false"],
                          input=text, capture_output=True, text=True, timeout=60)
    if proc.returncode:
        raise RuntimeError(f"llvm-mca failed: {proc.stderr.strip()[:400]}")
    cycles = int(re.search(r"Total Cycles:\s+(\d+)", proc.stdout).group(1))
    rthr = float(re.search(r"Block RThroughput:\s+([\d.]+)", proc.stdout).group(1))
    return cycles, rthr


def mca(body: list[str], steady: int = 100) -> tuple[float, float]:
    """llvm-mca's steady-state cycles per iteration, and its Block RThroughput."""
    text = mca_text(body)
    c1, rthr = _run_mca(text, steady)
    c2, _ = _run_mca(text, 2 * steady)
    return (c2 - c1) / steady, rthr


def kernels() -> list[tuple[str, str]]:
    """(kind/task, path) of every boom baseline and reference kernel."""
    from .paths import TASKS
    return [(f"{kind}/{p.stem}", str(p)) for kind in ("baseline", "reference")
            for p in sorted((TASKS / "kernels" / kind / "boom").glob("*.s"))]


def compare(spec, kernel: str, path: str, config: str = "C1") -> list[Row]:
    from pathlib import Path
    from . import taskspec
    code = Path(path).read_text(encoding="utf-8")
    task = taskspec.find(kernel.split("/")[1])
    rows = []
    for loop in hot_loops(spec, kernel, code, task, config):
        m, rthr = mca(loop.body)
        try:
            cyc, misses, mispredicts = ours(spec, code, task, loop, config)
            rows.append(Row(loop, m, cyc, rthr, misses=misses, mispredicts=mispredicts))
        except RuntimeError as exc:
            rows.append(Row(loop, m, None, rthr, note=f"not measured: {exc}"))
    return rows


def agreement(rows: list[Row], tolerance: float = TOLERANCE) -> tuple[float, list[Row]]:
    """The fraction of loops whose ratio is within `tolerance`, and the others (the outliers)."""
    out = [r for r in rows if r.ratio is None or abs(r.ratio - 1) > tolerance]
    return (1 - len(out) / len(rows) if rows else 0.0), out


def table(rows: list[Row], notes: Optional[dict[str, str]] = None) -> str:
    notes = OUTLIERS if notes is None else notes
    head = ("| loop | insns | trip | share | llvm-mca RThroughput | llvm-mca cycles/iter | ours cycles/iter | ratio | "
            "L1D misses, mispredicts (ours, window) | note |")
    lines = [head, "|" + "---|" * 10]
    for r in rows:
        lp = r.loop
        ratio = f"{r.ratio:.2f}" if r.ratio is not None else "-"
        got = f"{r.ours:.2f}" if r.ours is not None else "-"
        note = notes.get(lp.name, r.note) if r.ratio is None or abs(r.ratio - 1) > TOLERANCE else r.note
        lines.append(f"| {lp.name} | {len(lp.body)} | {lp.trip} | {lp.share:.0%} | {r.rthroughput:.2f} | "
                     f"{r.mca:.2f} | {got} | {ratio} | {r.misses}, {r.mispredicts} | {note} |")
    return "\n".join(lines)
