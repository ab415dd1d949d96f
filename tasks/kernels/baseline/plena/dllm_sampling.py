"""PLENA baseline for dllm_sampling (tasks/level2/dllm_sampling.yaml): a template kernel in the style
of tasks/kernels/baseline/plena.py: every tensor prefetched just before the compute that uses it, no
double buffering. Each position's row of logits is prefetched whole into one row buffer, then
computed (the prefetch latency is exposed on every row); the row and group loops are hardware loops.

The arithmetic is the reference kernel's (tasks/kernels/reference/plena/dllm_sampling.py explains
it): per position V_RED_MAX, then per group of 256 logits d = x - m, the token score
d * 2^72 * 2^72 + (256 - i) reduced with V_RED_MAX (the first group holding m gives t // 256 and
t % 256), e = exp(d) summed with V_RED_SUM; c = 1 / S; masked = [mask > 0] through exp /
reciprocal steps; K extract-max rounds over the confidences.
"""
from __future__ import annotations

from kcgen.paths import TASKS, load_module

_ref = load_module(TASKS / "kernels" / "reference" / "plena" / "dllm_sampling.py")


def generate(task, cfg, layout, spec):
    if task.name != "dllm_sampling":
        return None
    return _ref.generate(task, cfg, layout, spec, overlap=False)
