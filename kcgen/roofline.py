"""Roofline: the least cycles a benchmark item's work can take on its target.

The peak rates live in tasks/roofline.yaml as expressions over each ISA's parameters; the work
(multiply-accumulates, elementwise results) in each task's `work` field; the bytes come from the
layout's tensors. See tasks/roofline.yaml for the formula.
"""
from __future__ import annotations

import ast
import math
from fractions import Fraction
from functools import lru_cache
from typing import Optional

import yaml

from .paths import TASKS

_BYTES = {"f32": 4, "bf16": 2, "fp16": 2, "i8": 1, "i16": 2, "i32": 4, "u8": 1}


class RooflineError(Exception):
    pass


@lru_cache(maxsize=None)
def _table() -> dict:
    return yaml.safe_load((TASKS / "roofline.yaml").read_text(encoding="utf-8"))


def _rate(expr, params: dict[str, int]) -> Fraction:
    """A peak rate: a number or an arithmetic expression over the ISA's parameters."""
    def ev(node):
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
            return Fraction(node.value)
        if isinstance(node, ast.Name):
            if node.id not in params:
                raise RooflineError(f"tasks/roofline.yaml: '{node.id}' is not a parameter of the target")
            return Fraction(params[node.id])
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.Div)):
            a, b = ev(node.left), ev(node.right)
            return {ast.Add: a + b, ast.Sub: a - b, ast.Mult: a * b, ast.Div: a / b}[type(node.op)]
        raise RooflineError(f"tasks/roofline.yaml: cannot evaluate '{ast.unparse(node)}'")
    return ev(ast.parse(str(expr), mode="eval"))


def roofline_cycles(spec, task, target: str, config: str, layout) -> Optional[int]:
    """Lower bound on the item's cycles, or None when the task states no work or the target no rates."""
    peaks = _table().get(target)
    if peaks is None or not task.work:
        return None
    params = dict(spec.params)
    dtype = task.targets[target].dtype
    bounds = []
    for kind, count in task.work_counts(task.config(target, config)).items():
        rates = peaks.get(kind) or {}
        if dtype not in rates:
            raise RooflineError(f"tasks/roofline.yaml: {target} gives no '{kind}' rate for {dtype}")
        bounds.append(Fraction(count) / _rate(rates[dtype], params))
    element_bytes = {d: _rate(v, params) for d, v in (peaks.get("element_bytes") or {}).items()}
    inputs = {t.name for t in task.inputs}
    moved = sum(Fraction(math.prod(p.shape)) * element_bytes.get(p.dtype, _BYTES[p.dtype])
                for p in layout.placements.values()
                if peaks.get("traffic", "all") == "all" or p.tensor in inputs)
    bounds.append(moved / _rate(peaks["bytes_per_cycle"], params))
    latency = _rate(peaks.get("latency", 0), params)
    return math.ceil(latency + max(bounds))
