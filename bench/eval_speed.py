"""Benchmark: evaluating kernels (issue #6 item 10).

    .venv/bin/python bench/eval_speed.py [--repeat 10] [--jobs 2]

1. one Level-1 item on a warm target (simulator built and loaded, assembler ready): the wall time
   of `evaluate` with the default trials (one per value profile: eight), median over --repeat runs, per target for the
   smallest and the largest configuration of a representative task (target <= 50 ms);
2. every Level-1 item's reference kernel (warm; five evaluations each): median, 90th percentile
   and maximum per configuration of each item's median, the items whose median is over 50 ms,
   and the same count for each item's fastest evaluation (as timeit reports the minimum: on a
   shared virtual machine the slower runs measure the neighbours);
3. every Level-1 baseline on every target and configuration, evaluated the way
   `kcgen eval TARGET --all` does (worker processes, --jobs of them, the default trials each), from a
   cold start of the workers (ISA load, simulator load) to the last result (target <= 2 min).
Figures go to docs/performance.md by hand, with the machine they were measured on.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import isadl  # noqa: E402
from kcgen import kernels, taskspec  # noqa: E402
from kcgen.evaluation import Evaluator, evaluate, layout_for  # noqa: E402

TARGETS = ("plena", "amdnpu", "coral", "boom")
PROBES = ("gemm", "softmax")  # a matrix task and a row-wise float task


def one_item(repeat: int) -> None:
    print("one L1 item, warm, default trials (median ms):")
    for target in TARGETS:
        spec = isadl.load(ROOT / "targets" / f"{target}.isa")
        for name in PROBES:
            task = taskspec.find(name)
            for config in ("C1", "C5"):
                lay = layout_for(spec, task, target, config)
                kernel = kernels.find("reference", spec, task, target, config, lay) or \
                    kernels.find("baseline", spec, task, target, config, lay)
                if kernel is None:
                    print(f"  {target:<7}{name:<9}{config}  (no kernel)")
                    continue
                evaluate(kernel.text, spec, task, target, config, layout=lay)  # warm: build, load, assemble once
                times = []
                for k in range(repeat):
                    t0 = time.perf_counter()
                    r = evaluate(kernel.text, spec, task, target, config, layout=lay, seed=k)
                    times.append(time.perf_counter() - t0)
                print(f"  {target:<7}{name:<9}{config}  {1e3 * statistics.median(times):7.1f} ms  "
                      f"({kernel.kind}, {r.cycles} cycles, {'correct' if r.correct else 'INCORRECT'})")


def every_item(runs: int = 5) -> None:
    """Each L1 item's reference kernel (else its baseline) on a warm target, default trials, `runs`
    evaluations each: the spread of the medians, and how many items are within 50 ms."""
    times = {c: [] for c in taskspec.CONFIGS}
    fastest = []
    slow = []
    for target in TARGETS:
        spec = isadl.load(ROOT / "targets" / f"{target}.isa")
        for task in taskspec.all_tasks():
            if task.level != 1 or target not in task.targets:
                continue
            for config in taskspec.CONFIGS:
                lay = layout_for(spec, task, target, config)
                kernel = kernels.find("reference", spec, task, target, config, lay) or \
                    kernels.find("baseline", spec, task, target, config, lay)
                evaluate(kernel.text, spec, task, target, config, layout=lay)  # warm
                walls = []
                for seed in range(1, runs + 1):  # new inputs each time
                    t0 = time.perf_counter()
                    evaluate(kernel.text, spec, task, target, config, layout=lay, seed=seed)
                    walls.append(time.perf_counter() - t0)
                times[config].append(statistics.median(walls))
                fastest.append(min(walls))
                if times[config][-1] > 0.05:
                    slow.append((times[config][-1], min(walls), target, task.name, config, kernel.kind))
    print(f"every L1 item, warm, default trials, {runs} evaluations each: median / 90th percentile / max "
          "of the items' medians (ms) per configuration")
    for config, ts in times.items():
        ts.sort()
        print(f"  {config}: {1e3 * statistics.median(ts):6.1f} / {1e3 * ts[int(0.9 * (len(ts) - 1))]:6.1f} / "
              f"{1e3 * ts[-1]:6.1f}  ({len(ts)} items)")
    every = sorted(t for ts in times.values() for t in ts)
    print(f"  all {len(every)}: median {1e3 * statistics.median(every):.1f} ms, "
          f"{sum(t <= 0.05 for t in every)} within 50 ms; fastest evaluation of each item: "
          f"{sum(t <= 0.05 for t in fastest)} within 50 ms, max {1e3 * max(fastest):.1f} ms")
    for t, best, target, name, config, kind in sorted(slow, reverse=True):
        print(f"  median over 50 ms: {target} {name} {config} ({kind}) {1e3 * t:.0f} ms (fastest {1e3 * best:.0f} ms)")


def all_baselines(jobs: int) -> None:
    t0 = time.perf_counter()
    futures = []
    with Evaluator(workers=jobs) as ev:
        for target in TARGETS:
            isa = ROOT / "targets" / f"{target}.isa"
            for task in taskspec.all_tasks():
                if task.level == 1 and target in task.targets:
                    futures += [(target, task.name, c, ev.submit_own("baseline", isa, task.path, target, c))
                                for c in taskspec.CONFIGS]
        results = [(t, n, c, ev.result(f)) for t, n, c, f in futures]
    wall = time.perf_counter() - t0
    have = [r for *_, r in results if r is not None]
    print(f"every L1 baseline on every target and config: {len(have)} of {len(results)} items have one, "
          f"{sum(r.correct for r in have)} correct; {wall:.1f} s wall with {jobs} workers")
    for t, n, c, r in results:
        if r is not None and not r.correct:
            print(f"  incorrect: {t} {n} {c}: {r.summary()[:120]}")


def machine_speed() -> str:
    """A fixed pure-Python workload, timed: the same figures on a virtual machine whose host is
    busier come out slower, and this says how much."""
    t0 = time.perf_counter()
    sum(range(10_000_000))
    return f"machine check: sum(range(10**7)) took {1e3 * (time.perf_counter() - t0):.0f} ms"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    print(machine_speed())
    one_item(args.repeat)
    every_item()
    all_baselines(args.jobs)
    print(machine_speed())


if __name__ == "__main__":
    main()
