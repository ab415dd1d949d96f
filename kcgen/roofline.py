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


def _terms(spec, task, target: str, config: str, layout):
    """(latency, [(kind, amount, rate, rate as written)]) of the item, or None: each bound is amount / rate
    cycles."""
    peaks = _table().get(target)
    if peaks is None or not task.work:
        return None
    params = dict(spec.params)
    dtype = task.targets[target].dtype
    terms = []
    for kind, count in task.work_counts(task.config(target, config)).items():
        rates = peaks.get(kind) or {}
        if dtype not in rates:
            raise RooflineError(f"tasks/roofline.yaml: {target} gives no '{kind}' rate for {dtype}")
        terms.append((kind, Fraction(count), _rate(rates[dtype], params), str(rates[dtype])))
    element_bytes = {d: _rate(v, params) for d, v in (peaks.get("element_bytes") or {}).items()}
    inputs = {t.name for t in task.inputs}
    moved = sum(Fraction(math.prod(p.shape)) * element_bytes.get(p.dtype, _BYTES[p.dtype])
                for p in layout.placements.values()
                if peaks.get("traffic", "all") == "all" or p.tensor in inputs)
    terms.append(("bytes", moved, _rate(peaks["bytes_per_cycle"], params), str(peaks["bytes_per_cycle"])))
    return _rate(peaks.get("latency", 0), params), terms


def roofline_cycles(spec, task, target: str, config: str, layout) -> Optional[int]:
    """Lower bound on the item's cycles, or None when the task states no work or the target no rates."""
    got = _terms(spec, task, target, config, layout)
    if got is None:
        return None
    latency, terms = got
    return math.ceil(latency + max(amount / rate for _, amount, rate, _ in terms))


_WHAT = {"mac": "multiply-accumulates", "elem": "elementwise results",
         "bytes": "bytes moved through the memory bandwidth"}


def _num(x: Fraction) -> str:
    return str(x.numerator) if x.denominator == 1 else f"{float(x):.4g}"


def explain(spec, task, target: str, config: str, layout) -> Optional[str]:
    """How the item's roofline is computed, with its numbers, for the agent's task statement."""
    got = _terms(spec, task, target, config, layout)
    if got is None:
        return None
    latency, terms = got
    parts = []
    for kind, amount, rate, written in terms:
        formula = "" if written == _num(rate) else f" (= {written})"
        parts.append(f"{_WHAT.get(kind, kind)} {_num(amount)} / {_num(rate)}{formula} per cycle = {_num(amount / rate)}")
    total = roofline_cycles(spec, task, target, config, layout)
    bounds = ", ".join(_num(amount / rate) for _, amount, rate, _ in terms)
    head = f"{_num(latency)} (memory latency) + " if latency else ""
    return (f"Roofline: every evaluation reports roofline_cycles, the least cycles this item's work can take at "
            f"{target}'s peak rates; no correct kernel takes fewer. Here roofline_cycles = ceil({head}"
            f"max({bounds})) = {total}, the max over: " + "; ".join(parts) + ".")
