"""Measured tolerances: each task's pass rule per target and dtype, derived from the target's arithmetic.

    python -m kcgen.tolerances                 # measure every item, rewrite tasks/tolerances.yaml
    python -m kcgen.tolerances --check         # measure, compare with the table (exit 1 if it differs)
    python -m kcgen.tolerances --markdown      # the table (old vs new), as docs/tasks.md shows it
    python -m kcgen.tolerances --docs          # rewrite that table in docs/tasks.md (a rewrite of the
                                               # table file does this too)
    python -m kcgen.tolerances --kernels plena # the shipped kernels' worst errors against the table

For every task, target and floating-point output dtype, the task's reference is computed in the
target's own arithmetic (tasks/device.py: bf16 steps with fp32 accumulation, MXFP8 inputs as the
layout rounds them, float32 operations each rounded once, software exp/erf within a few ulp, the
order a straightforward kernel uses) and
in float64 (tasks/reference.py, rounded to the output dtype as the evaluator rounds it), on inputs
drawn exactly as the evaluator draws them: every value profile the task uses, at every
configuration C1..C5, over SEEDS fixed seeds. Per output element the error is judged as the
evaluator judges it, against s = max(|want|, rms(want)): the measurement is the worst e / s seen.
The tolerance is then

    rtol = MARGIN x worst (rounded up to two significant digits), at least one unit in the last
           place of the dtype (2^-7 for bf16, 2^-23 for f32);
    atol = the dtype's smallest normal number (or MARGIN x the worst error of an element whose s
           lies below it), so that only a result that underflows may flush to zero.

The split puts everything in rtol because the rule's scale s already carries the absolute part: an
element is never judged against less than the output's rms, so a sum that cancels is held to the
rounding of its terms, while an atol of the old kind (2e-2 in bf16) is larger than a whole softmax
row's values and passes a kernel that writes 1/N everywhere. Integer outputs (requantised int8) and
outputs the reference computes in the device's own arithmetic (dllm_sampling) stay exact. An rtol
above ILL tests nothing (the task is ill-conditioned under some profile): the measurement warns and
tests/tasks/test_tolerances.py fails until the task leaves that profile out.
"""
from __future__ import annotations

import math
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import numpy as np

from .paths import TASKS

TABLE = TASKS / "tolerances.yaml"
SEEDS = 8            # fixed seeds per (configuration, profile): seed = 64 * s + 8 * config + profile
MARGIN = 2.0         # tolerance = MARGIN x the worst error measured
EXACT = ("dllm_sampling",)  # the reference computes the device's own bf16 steps: exact outputs
ILL = 0.5            # an rtol above this is no test (at 1 an all-zero output passes): the task is
                     # ill-conditioned under the profile where the worst was seen
ULP = {"bf16": 2.0 ** -7, "f32": 2.0 ** -23, "fp16": 2.0 ** -10}
TINY = {"bf16": 2.0 ** -126, "f32": 2.0 ** -126, "fp16": 2.0 ** -14}
FLOAT = tuple(ULP)


@dataclass
class Worst:
    """The worst error of one (task, target, dtype): e / max(|want|, rms(want)) and where."""
    rel: float = 0.0
    at: str = ""
    abs_tiny: float = 0.0  # the largest error of an element whose scale is below the dtype's normals
    trials: int = 0
    nonfinite: int = 0     # elements where one side is NaN/inf and the other is not (must be 0)
    by_profile: dict = field(default_factory=dict)  # the worst e / s of each value profile

    def update(self, rel: float, abs_tiny: float, nonfinite: int, where: str, profile: str = "") -> None:
        self.trials += 1
        if rel > self.rel:
            self.rel, self.at = rel, where
        self.by_profile[profile] = max(self.by_profile.get(profile, 0.0), rel)
        self.abs_tiny = max(self.abs_tiny, abs_tiny)
        self.nonfinite += nonfinite


def errors(got: np.ndarray, want: np.ndarray, dtype: str) -> tuple[float, float, int]:
    """(worst e / s over elements with s >= TINY, worst e over the others, non-finite mismatches),
    with s = max(|want|, rms(want)) as kcgen.taskspec.Tolerance.ok judges."""
    got = np.asarray(got, dtype=np.float64).ravel()
    want = np.asarray(want, dtype=np.float64).ravel()
    finite = np.isfinite(got) & np.isfinite(want)
    same = (got == want) | (np.isnan(got) & np.isnan(want))
    nonfinite = int((~finite & ~same).sum())
    w = want[np.isfinite(want)]
    rms = float(np.sqrt(np.mean(w * w))) if w.size else 0.0
    e = np.where(finite, np.abs(got - want), 0.0)
    s = np.maximum(np.abs(np.where(finite, want, 0.0)), rms)
    big = s >= TINY.get(dtype, 0.0)
    rel = float(np.max(e[big] / s[big])) if big.any() else 0.0
    small = float(np.max(e[~big])) if (~big).any() else 0.0
    return rel, small, nonfinite


def _round_up(x: float, digits: int = 2) -> float:
    """x rounded up to `digits` significant digits (0 stays 0)."""
    if x <= 0 or not math.isfinite(x):
        return x
    e = math.floor(math.log10(x)) - digits + 1
    m = math.ceil(round(x / 10.0 ** e, 9))
    return float(f"{m}e{e}")


def derive(dtype: str, worst: Worst) -> dict:
    """The table entry of a measurement: atol, rtol and what they came from."""
    rtol = _round_up(max(MARGIN * worst.rel, ULP[dtype]))
    atol = max(_round_up(MARGIN * worst.abs_tiny), TINY[dtype])
    return {"atol": float(f"{atol:.3g}"), "rtol": rtol, "worst": float(f"{worst.rel:.3g}"), "at": worst.at or "-"}


# ---- inputs as the evaluator draws them ------------------------------------------------------------------
def draw_inputs(task, target: str, cfg: dict, seed: int, profile: str) -> dict:
    """The inputs of one trial as the kernel sees them (kcgen.evaluation.start_trial's draws; on PLENA
    after the MXFP8 rounding of the layout's write), without a simulator."""
    from . import taskspec
    from .evaluation import DTYPES, draw
    rng = np.random.default_rng(seed)
    out = {}
    for t in task.inputs:
        dt = DTYPES[task.dtype(target, t.name)]
        scale = taskspec.eval_scale(t.scale, cfg) if t.scale else None
        v = draw(rng, profile, task.shape(t, cfg), dt, scale)
        if target == "plena":
            from .paths import load_module
            L = load_module(TASKS / "layouts" / "plena.py")
            elems, scales = L.mx_encode(np.asarray(v).astype(np.float64))
            v = L.mx_decode(elems, scales).reshape(v.shape).astype(dt)
        out[t.name] = v
    return out


def _device():
    from .paths import load_module
    return load_module(TASKS / "device.py")


def measure(task, target: str, seeds: int = SEEDS) -> dict[str, Worst]:
    """The worst errors of the device arithmetic against the golden, per float output dtype."""
    from . import taskspec
    from .evaluation import DTYPES, quantize
    dev = _device()
    ref = taskspec.reference(task)
    worst: dict[str, Worst] = {}
    for ci, c in enumerate(taskspec.CONFIGS):
        cfg = task.config(target, c)
        for pi, profile in enumerate(task.profiles):
            for s in range(seeds):
                seed = 64 * s + 8 * ci + taskspec.PROFILES.index(profile)
                inputs = draw_inputs(task, target, cfg, seed, profile)
                f64 = {n: v.astype(np.float64) for n, v in inputs.items()}
                with np.errstate(over="ignore", under="ignore"):  # as the evaluator: exp of an extreme input
                    golden = ref(**f64, **cfg)
                got = dev.compute(task, target, f64, cfg, seed)
                for t in task.outputs:
                    dt = task.dtype(target, t.name)
                    if dt not in FLOAT:
                        continue
                    want = quantize(golden[t.name], DTYPES[dt]).astype(np.float64)
                    have = quantize(got[t.name], DTYPES[dt]).astype(np.float64)
                    rel, small, bad = errors(have, want, dt)
                    worst.setdefault(dt, Worst()).update(rel, small, bad, f"{c} {profile} seed {seed}", profile)
    return worst


def items(tasks=None, targets=None) -> list[tuple]:
    """(task, target) pairs with a float output to measure."""
    from . import taskspec
    out = []
    for task in taskspec.all_tasks():
        if tasks and task.name not in tasks:
            continue
        for target in task.targets:
            if targets and target not in targets:
                continue
            if task.name in EXACT or not any(task.dtype(target, t.name) in FLOAT for t in task.outputs):
                continue
            out.append((task, target))
    return out


def _measure_item(args) -> tuple[str, str, dict, float]:
    name, target, seeds = args
    from threadpoolctl import threadpool_limits
    from . import taskspec
    task = taskspec.find(name)
    t0 = time.perf_counter()
    with threadpool_limits(limits=1, user_api="blas"):  # small float64 products: threads only contend
        worst = measure(task, target, seeds)
    return name, target, worst, time.perf_counter() - t0


def build(tasks=None, targets=None, seeds: int = SEEDS, jobs: int = 1, progress=None) -> dict:
    """{task: {target: {dtype: entry}}} for the selected items (all by default)."""
    work = [(t.name, tg, seeds) for t, tg in items(tasks, targets)]
    results = []
    if jobs > 1:
        import multiprocessing
        with multiprocessing.get_context("spawn").Pool(jobs) as pool:
            for r in pool.imap_unordered(_measure_item, work):
                results.append(r)
                if progress:
                    progress(r)
    else:
        for w in work:
            results.append(_measure_item(w))
            if progress:
                progress(results[-1])
    table: dict = {}
    for name, target, worst, _ in results:
        for dt, wst in worst.items():
            if wst.nonfinite:
                raise RuntimeError(f"{name} on {target}: the device model and the reference disagree on "
                                   f"{wst.nonfinite} non-finite values (a device-model bug)")
            entry = table.setdefault(name, {}).setdefault(target, {})[dt] = derive(dt, wst)
            if entry["rtol"] > ILL:
                print(f"warning: {name} on {target}: the target's own arithmetic is off by {wst.rel:.3g} x the "
                      f"output's scale ({wst.at}); the task is ill-conditioned under that profile, whose "
                      f"tolerance rtol {entry['rtol']:.2g} tests nothing: leave the profile out of the task's "
                      "`profiles`", file=sys.stderr)
    return {k: dict(sorted(v.items())) for k, v in sorted(table.items())}


# ---- the table file ------------------------------------------------------------------------------------
HEADER = f"""\
# Measured tolerances (docs/tasks.md, "Tolerances"). GENERATED: do not edit; regenerate with
#     .venv/bin/python -m kcgen.tolerances
# (tests/tasks/test_tolerances.py regenerates it and checks it equals this file).
# Per task, target and output dtype: the pass rule |kernel - reference| <= atol + rtol * max(|reference|,
# rms(reference)). rtol = {MARGIN:g} x worst (rounded up to two digits, at least one unit in the last place of
# the dtype); worst = the largest error / max(|reference|, rms) of the target's arithmetic (tasks/device.py)
# against the float64 reference over {{seeds}} seeds x every value profile x C1..C5, at = where it was seen;
# atol = the dtype's smallest normal number. Tasks not listed here use the tolerance of their YAML file.
"""


def _num(x: float, digits: int) -> str:
    """x to `digits` significant digits as YAML reads a float back (1.0e-05: YAML 1.1 needs the dot)."""
    text = f"{x:.{digits}g}"
    mant, _, exp = text.partition("e")
    mant = mant if "." in mant else mant + ".0"
    return f"{mant}e{exp}" if exp else mant


def render(table: dict, seeds: int = SEEDS) -> str:
    lines = [HEADER.format(seeds=seeds).rstrip("\n")]
    for name, targets in table.items():
        lines.append(f"{name}:")
        for target, dts in targets.items():
            lines.append(f"  {target}:")
            for dt, e in dts.items():
                lines.append(f"    {dt}: {{atol: {_num(e['atol'], 3)}, rtol: {_num(e['rtol'], 2)}, "
                             f"worst: {_num(e['worst'], 3)}, at: {e['at'] or '-'}}}")
    return "\n".join(lines) + "\n"


def load(path: Path = TABLE) -> dict:
    import yaml
    if not Path(path).exists():
        return {}
    return yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}


DOCS = TASKS.parent / "docs" / "tasks.md"
BEGIN, END = "<!-- tolerances table: generated by python -m kcgen.tolerances -->", "<!-- end of the tolerances table -->"


def docs_with_table(text: str, table: dict) -> str:
    """docs/tasks.md's text with the table between its markers replaced by markdown(table)."""
    head, sep, rest = text.partition(BEGIN + "\n")
    _, sep2, tail = rest.partition(END)
    if not sep or not sep2:
        return text
    return head + BEGIN + "\n" + markdown(table) + END + tail


def markdown(table: dict) -> str:
    """Old (the YAML's flat tolerance) against new, per task, dtype and target."""
    from . import taskspec
    specs = {t.name: t for t in taskspec.all_tasks()}
    rows = ["| task | target | dtype | old atol / rtol | worst measured | new rtol | new atol |",
            "|---|---|---|---|---|---|---|"]
    for name, targets in table.items():
        for target, dts in targets.items():
            for dt, e in dts.items():
                old = specs[name].tolerance.get(dt)
                rows.append(f"| {name} | {target} | {dt} | {old.atol:g} / {old.rtol:g} | {e['worst']:.3g} "
                            f"({e['at']}) | {e['rtol']:.2g} | {e['atol']:.3g} |")
    return "\n".join(rows) + "\n"


# ---- the shipped kernels against the table -------------------------------------------------------------
def _ratio(got: np.ndarray, want: np.ndarray, tol) -> float:
    """max |got - want| / (atol + rtol * max(|want|, rms(want))): above 1 exactly where tol.ok fails."""
    fin = np.isfinite(want)
    rms = float(np.sqrt(np.mean(want[fin] ** 2))) if fin.any() else 0.0
    with np.errstate(invalid="ignore", divide="ignore"):
        err = np.abs(got - want)
        r = err / (tol.atol + tol.rtol * np.maximum(np.abs(want), rms))
    r = np.where(np.isnan(r), np.where(err == 0, 0.0, np.inf), r)  # 0/0; NaN against a number, inf - inf
    r = np.where(np.isnan(got) & np.isnan(want), 0.0, r)
    return float(np.max(r)) if r.size else 0.0


def kernel_errors(target: str, tasks=None, kinds=("baseline", "reference"), configs=None, seeds=(1000,),
                  progress=None) -> list[dict]:
    """Run every shipped kernel of `target` (untimed) over the task's profiles on the given seeds
    and report its worst error e / s against the tolerance the evaluator applies."""
    import isadl
    from . import taskspec
    from .evaluation import DTYPES, LayoutError, _assembler, _simulator, layout_for, quantize, requantize, start_trial
    from .kernels import find
    spec = isadl.load(isadl.find_target(target))
    sim = _simulator(spec)
    rows = []
    for task in taskspec.all_tasks():
        if target not in task.targets or (tasks and task.name not in tasks):
            continue
        ref = taskspec.reference(task)
        for c in configs or taskspec.CONFIGS:
            cfg = task.config(target, c)
            try:
                lay = layout_for(spec, task, target, c)
            except LayoutError:
                continue
            for kind in kinds:
                k = find(kind, spec, task, target, c, lay)
                if k is None:
                    continue
                program = _assembler(spec).assemble(k.text, str(k.origin))
                row = {"task": task.name, "config": c, "kind": kind, "ratio": 0.0, "rel": 0.0, "at": "",
                       "status": "halted"}
                for s in seeds:
                    for pi, profile in enumerate(task.profiles):
                        seed = s + pi
                        inputs = start_trial(sim, program, task, lay, seed, profile, cfg)
                        run = sim.run(50_000_000, timed=False)
                        if run.status != "halted":
                            row["status"] = run.status
                            continue
                        with np.errstate(over="ignore", under="ignore"):
                            golden = ref(**{n: v.astype(np.float64) for n, v in inputs.items()}, **cfg)
                        for t in task.outputs:
                            p = lay.placements[t.name]
                            dt = DTYPES[p.dtype]
                            shift = task.requant_shift(target, t.name, cfg)
                            want = (quantize(golden[t.name], dt) if shift is None else
                                    requantize(golden[t.name], shift, dt)).astype(np.float64)
                            got = lay.read(sim, t.name).astype(np.float64)
                            tol = task.tolerance_for(target, p.dtype)
                            rel, small, bad = errors(got, want, p.dtype)
                            r = _ratio(got, want, tol)
                            if r > row["ratio"]:
                                row.update(ratio=r, at=f"{profile} seed {seed}")
                            row["rel"] = max(row["rel"], rel)
                rows.append(row)
                if progress:
                    progress(row)
    return rows


def main(argv=None) -> int:
    import argparse
    ap = argparse.ArgumentParser(prog="python -m kcgen.tolerances", description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="compare with tasks/tolerances.yaml instead of writing it")
    ap.add_argument("--markdown", action="store_true", help="print the table (old vs new) as markdown and exit")
    ap.add_argument("--docs", action="store_true", help="write that table into docs/tasks.md (between its markers)")
    ap.add_argument("--kernels", metavar="TARGET", help="run the shipped kernels of TARGET against the table")
    ap.add_argument("--task", action="append", help="only this task (repeatable; not with a rewrite of the table)")
    ap.add_argument("--target", action="append", help="only this target (repeatable)")
    ap.add_argument("--config", action="append", help="--kernels: only this configuration (repeatable)")
    ap.add_argument("--seeds", type=int, default=None, help=f"seeds per configuration and profile (default {SEEDS}; "
                                                            "--kernels: 1)")
    ap.add_argument("--jobs", type=int, default=1, help="measurement processes (default 1)")
    ap.add_argument("--out", type=Path, default=None, help="write the table here instead of tasks/tolerances.yaml")
    args = ap.parse_args(argv)

    if args.markdown:
        sys.stdout.write(markdown(load()))
        return 0
    if args.docs:
        doc = DOCS.read_text(encoding="utf-8")
        new = docs_with_table(doc, load())
        if new != doc:
            DOCS.write_text(new, encoding="utf-8")
        print(f"{DOCS}: {'updated' if new != doc else 'up to date'}")
        return 0
    if args.kernels:
        seeds = tuple(1000 + 100 * i for i in range(args.seeds or 1))
        worst = 0.0

        def show(r):
            nonlocal worst
            worst = max(worst, r["ratio"])
            flag = "FAIL" if r["ratio"] > 1 or r["status"] != "halted" else "ok"
            print(f"{r['task']:<22}{r['config']:<4}{r['kind']:<10}{flag:<5} error/tolerance {r['ratio']:8.3g}  "
                  f"e/s {r['rel']:.3g}  {r['at']}" + ("" if r["status"] == "halted" else f"  {r['status']}"),
                  flush=True)
        t0 = time.perf_counter()
        rows = kernel_errors(args.kernels, args.task, configs=args.config, seeds=seeds, progress=show)
        bad = [r for r in rows if r["ratio"] > 1 or r["status"] != "halted"]
        print(f"{len(rows) - len(bad)}/{len(rows)} kernels within the tolerance; {time.perf_counter() - t0:.0f} s")
        return 1 if bad else 0

    seeds = args.seeds or SEEDS
    t0 = time.perf_counter()

    def show(r):
        name, target, worst, dt = r
        print(f"{name:<22}{target:<8}" + "  ".join(
            f"{k}: worst {w.rel:.3g} ({w.at}; " + ", ".join(f"{p} {v:.2g}" for p, v in w.by_profile.items()) + ")"
            for k, w in worst.items()) + f"  [{dt:.1f} s]", file=sys.stderr, flush=True)
    partial = bool(args.task or args.target)
    table = build(args.task, args.target, seeds, args.jobs, progress=show)
    if partial:
        old = load(args.out or TABLE)
        for name, tg in table.items():
            old.setdefault(name, {}).update(tg)
        table = {k: dict(sorted(v.items())) for k, v in sorted(old.items())}
    text = render(table, seeds)
    print(f"measured in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    path = args.out or TABLE
    if args.check:
        same = path.exists() and path.read_text(encoding="utf-8") == text
        print(f"{path}: {'up to date' if same else 'DIFFERS from the measurement'}")
        return 0 if same else 1
    path.write_text(text, encoding="utf-8")
    print(f"wrote {path}")
    if path == TABLE and DOCS.exists():
        doc = DOCS.read_text(encoding="utf-8")
        new = docs_with_table(doc, load())
        if new != doc:
            DOCS.write_text(new, encoding="utf-8")
            print(f"updated the table in {DOCS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
