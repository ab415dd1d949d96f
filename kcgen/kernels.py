"""The benchmark's own kernels for an item: its baseline and its reference.

    tasks/kernels/<kind>/<target>/<task>.s     one kernel for every configuration (it reads the
                                               sizes from its argument registers), or
    tasks/kernels/<kind>/<target>/<task>.py    a generator for one task, or
    tasks/kernels/<kind>/<target>.py           one for the target's tasks: generate(task, cfg,
                                               layout, spec) -> assembly text, or None
    (kind: baseline or reference; the first that exists and answers wins)

The baseline is what the field would get without an expert: compiler output (clang-19 -O2 for
coral and boom) or a template kernel generator (plena, amdnpu). The reference is a hand-written
kernel that proves the item solvable and that the offline scripted agent plays. An item's baseline
cycles (its speedup denominator) and reference cycles (what flags a suspiciously fast kernel) are
measured once per (ISA, kernel, task, config) and cached.
"""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from .paths import TASKS, load_module

KINDS = ("baseline", "reference")
ROOT = TASKS / "kernels"


@dataclass(frozen=True)
class Kernel:
    kind: str  # baseline | reference
    text: str
    origin: Path  # the .s file, or the generator module


def find(kind: str, spec, task, target: str, config: str, layout=None) -> Optional[Kernel]:
    """The item's `kind` kernel, or None when it has none."""
    assert kind in KINDS, kind
    if not _shipped(task):
        return None  # a task file of the user's own: the benchmark's kernels are not for it
    fixed = ROOT / kind / target / f"{task.name}.s"
    if fixed.exists():
        return Kernel(kind, fixed.read_text(encoding="utf-8"), fixed)
    for gen in (ROOT / kind / target / f"{task.name}.py", ROOT / kind / f"{target}.py"):
        if not gen.exists():
            continue
        if layout is None:
            from .evaluation import layout_for
            layout = layout_for(spec, task, target, config)
        text = load_module(gen).generate(task, task.config(target, config), layout, spec)
        if text is not None:
            return Kernel(kind, text, gen)
    return None


def _shipped(task) -> bool:
    try:
        return Path(task.path).resolve().is_relative_to(TASKS.resolve()) and Path(task.path).stem == task.name
    except (OSError, ValueError):
        return False


_CYCLES: dict[tuple[str, str], Optional[int]] = {}


def baseline_cycles(spec, task, target: str, config: str, layout=None) -> Optional[int]:
    """Cycles of the item's baseline on a fixed input (None: no baseline, or it fails). Cached on
    disk under $KCGEN_CACHE/baselines by the simulator's build key (ISA content hash + generator),
    the kernel and the task spec."""
    return _cycles("baseline", spec, task, target, config, layout)


def reference_cycles(spec, task, target: str, config: str, layout=None) -> Optional[int]:
    """Cycles of the item's reference kernel on the same fixed input (None: no reference, or it
    fails): what a verified kernel is compared with to flag suspicious speedups. Cached on disk
    under $KCGEN_CACHE/references, keyed as baseline_cycles."""
    return _cycles("reference", spec, task, target, config, layout)


def _cycles(kind: str, spec, task, target: str, config: str, layout=None) -> Optional[int]:
    from .evaluation import evaluate
    from .sim.build import cache_root
    kernel = find(kind, spec, task, target, config, layout)
    if kernel is None:
        return None
    digest = hashlib.sha256()
    from .sim.build import cache_key  # the ISA and the simulator generator: a timing change re-measures
    for part in (cache_key(spec), kernel.text, Path(task.path).read_text(encoding="utf-8"), target, config):
        digest.update(str(part).encode() + b"\0")
    key = digest.hexdigest()[:32]
    if (kind, key) in _CYCLES:
        return _CYCLES[(kind, key)]
    path = cache_root() / f"{kind}s" / f"{key}.json"
    try:
        cycles = json.loads(path.read_text())["cycles"]
    except (OSError, ValueError, KeyError):
        result = evaluate(kernel.text, spec, task, target, config, trials=1, seed=0, layout=layout,
                          path=str(kernel.origin))
        cycles = result.cycles if result.correct else None
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"cycles": cycles, "task": task.name, "target": target, "config": config}))
        os.replace(tmp, path)
    _CYCLES[(kind, key)] = cycles
    return cycles
