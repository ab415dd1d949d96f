"""`kcgen sweep`: the architect's design-space view of a target.

For every point of a parameter grid (`-D VLEN=64,128 -D MLEN=64,128`: the cartesian product), the
target is rebuilt (each point its own cache entry) and every selected item's baseline and
reference kernels are evaluated on it — template baselines and layouts read the parameters, so
they follow the point. Per point and item: cycles of both, the reference's speedup over the
baseline and its fraction of the roofline. A point the ISA's constraints reject is reported and
skipped.
"""
from __future__ import annotations

import csv
import itertools
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import isadl


class SweepError(Exception):
    pass


def grid(defines: list[str]) -> list[dict[str, int]]:
    """["VLEN=64,128", "MLEN=64"] -> [{"VLEN": 64, "MLEN": 64}, {"VLEN": 128, "MLEN": 64}]."""
    axes = []
    for d in defines:
        name, sep, values = d.partition("=")
        if not sep or not name.strip().isidentifier() or not values.strip():
            raise SweepError(f"-D {d}: give NAME=V1,V2,...")
        try:
            vals = [int(v, 0) for v in values.split(",") if v.strip()]
        except ValueError:
            raise SweepError(f"-D {d}: the values must be integers") from None
        axes.append([(name.strip(), v) for v in vals])
    return [dict(p) for p in itertools.product(*axes)] if axes else [{}]


@dataclass
class Row:
    point: dict
    task: str
    config: str
    baseline_cycles: Optional[int] = None
    reference_cycles: Optional[int] = None
    roofline_cycles: Optional[int] = None
    error: Optional[str] = None

    @property
    def speedup(self) -> Optional[float]:
        if self.baseline_cycles and self.reference_cycles:
            return self.baseline_cycles / self.reference_cycles
        return None

    @property
    def roofline_fraction(self) -> Optional[float]:
        best = min((c for c in (self.baseline_cycles, self.reference_cycles) if c), default=None)
        return self.roofline_cycles / best if best and self.roofline_cycles else None


def run(target: str, points: list[dict], tasks: list, configs: list[str], workers: int = 1) -> list[Row]:
    """Evaluate the items' own kernels at every point (worker processes, `workers` of them)."""
    from .evaluation import Evaluator
    from .target import build_target
    path = isadl.find_target(target)
    rows: list[Row] = []
    with Evaluator(workers=workers) as ev:
        jobs = []
        for point in points:
            try:
                build_target(isadl.load(path, point))
            except isadl.IsaError as exc:
                first = exc.diagnostics[0].message if exc.diagnostics else str(exc)
                rows.append(Row(point, "*", "*", error=f"not a valid point: {first}"))
                continue
            for t in tasks:
                for c in configs:
                    futures = {k: ev.submit_own(k, path, t.path, target, c, defines=point, trials=1, seed=0)
                               for k in ("baseline", "reference")}
                    jobs.append((Row(point, t.name, c), futures))
        for row, futures in jobs:
            results = {k: ev.result(f) for k, f in futures.items()}
            for kind, r in results.items():
                if r is None:
                    continue
                if r.correct:
                    setattr(row, f"{kind}_cycles", r.cycles)
                else:
                    row.error = f"{kind}: {(r.error or r.trap or r.summary()).splitlines()[0][:160]}"
                row.roofline_cycles = r.roofline_cycles or row.roofline_cycles
            rows.append(row)
    return rows


def table(rows: list[Row]) -> str:
    names = sorted({k for r in rows for k in r.point})
    head = names + ["task", "cfg", "baseline", "reference", "speedup", "roofline", "of roofline"]
    lines = [head]
    for r in rows:
        lines.append([str(r.point.get(n, "")) for n in names] + [
            r.task, r.config, str(r.baseline_cycles or "-"), str(r.reference_cycles or "-"),
            f"{r.speedup:.2f}x" if r.speedup else "-", str(r.roofline_cycles or "-"),
            f"{100 * r.roofline_fraction:.0f}%" if r.roofline_fraction else "-"] + ([r.error] if r.error else []))
    widths = [max(len(line[i]) for line in lines if i < len(line)) for i in range(len(head))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(line, widths)) + ("  " + line[-1] if len(line) > len(head)
                                                                             else "") for line in lines)


def write(rows: list[Row], out: Path) -> list[Path]:
    """results.csv and sweep.png (reference cycles per point, one line per item) into `out`."""
    out.mkdir(parents=True, exist_ok=True)
    names = sorted({k for r in rows for k in r.point})
    with open(out / "sweep.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(names + ["task", "config", "baseline_cycles", "reference_cycles", "speedup", "roofline_cycles",
                            "roofline_fraction", "error"])
        for r in rows:
            w.writerow([r.point.get(n) for n in names] + [r.task, r.config, r.baseline_cycles, r.reference_cycles,
                                                          r.speedup, r.roofline_cycles, r.roofline_fraction, r.error])
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(8, 4))
    labels = [", ".join(f"{k}={v}" for k, v in p.items()) or "default" for p in _points(rows)]
    for task, config in sorted({(r.task, r.config) for r in rows if r.task != "*"}):
        ys = []
        for p in _points(rows):
            hit = [r for r in rows if r.point == p and r.task == task and r.config == config]
            ys.append((hit[0].reference_cycles or hit[0].baseline_cycles) if hit else None)
        ax.plot(range(len(labels)), [y if y else float("nan") for y in ys], marker="o", label=f"{task} {config}")
    ax.set_xticks(range(len(labels)), labels, rotation=20, fontsize=7)
    ax.set_ylabel("cycles (reference, else baseline)")
    ax.set_yscale("log")
    ax.legend(fontsize=6)
    ax.set_title("Parameter sweep")
    fig.tight_layout()
    fig.savefig(out / "sweep.png", dpi=110)
    plt.close(fig)
    return [out / "sweep.csv", out / "sweep.png"]


def _points(rows: list[Row]) -> list[dict]:
    seen = []
    for r in rows:
        if r.point not in seen:
            seen.append(r.point)
    return seen
