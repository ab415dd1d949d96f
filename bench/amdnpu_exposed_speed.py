"""Benchmark: what amdnpu's exposed pipeline (results in flight, issue #19 item 6) costs an evaluation, side by
side with the interlocked variant of the same ISA (-D EXPOSED=0) in one run.

    .venv/bin/python bench/amdnpu_exposed_speed.py

The reference kernel of gemm and softmax at C5, `evaluate` with the default trials, median and minimum of 7.
Figures go to docs/performance.md by hand.
"""
import statistics, time, isadl
from kcgen import kernels, taskspec
from kcgen.evaluation import evaluate
for exposed in (1, 0):
    spec = isadl.load("amdnpu", defines={"EXPOSED": exposed})
    for name in ("gemm", "softmax"):
        t = taskspec.find(name)
        k = kernels.find("reference", isadl.load("amdnpu"), t, "amdnpu", "C5").text
        evaluate(k, spec, t, "amdnpu", "C5")
        ts = []
        for _ in range(7):
            a = time.perf_counter(); r = evaluate(k, spec, t, "amdnpu", "C5"); ts.append(time.perf_counter() - a)
        print(f"EXPOSED={exposed} {name} C5: median {statistics.median(ts)*1e3:.1f} ms, min {min(ts)*1e3:.1f} ms, correct={r.correct}, cycles={r.cycles}")
