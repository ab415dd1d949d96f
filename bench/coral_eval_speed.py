"""Benchmark (issue #19): one evaluation trial of coral's conv2d and gemm C3 reference kernels, best
of 3 (what the vector-hazard tracking costs per vector element access, against the evaluation's own
cost). Run it with PYTHONPATH pointing at another checkout to measure that generator side by side.

    .venv/bin/python bench/coral_eval_speed.py
"""
from __future__ import annotations

import time

import isadl
from kcgen import kernels, taskspec
from kcgen.evaluation import evaluate, layout_for


def main() -> None:
    spec = isadl.load("targets/coral.isa")
    for name, cfg in (("conv2d", "C3"), ("gemm", "C3")):
        task = taskspec.find(name)
        lay = layout_for(spec, task, "coral", cfg)
        k = kernels.find("reference", spec, task, "coral", cfg, lay)
        evaluate(k.text, spec, task, "coral", cfg, layout=lay, trials=1)  # build and warm up
        best, r = float("inf"), None
        for _ in range(3):
            t = time.perf_counter()
            r = evaluate(k.text, spec, task, "coral", cfg, layout=lay, trials=1)
            best = min(best, time.perf_counter() - t)
        print(f"{name} {cfg}: {r.cycles} cycles, {r.instret} instructions, {best * 1000:.0f} ms, "
              f"{r.instret / best / 1e6:.1f} M instructions/s")


if __name__ == "__main__":
    main()
