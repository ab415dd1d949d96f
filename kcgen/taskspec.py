"""Benchmark task specs: YAML files under tasks/, validated into `TaskSpec` with located errors.

A spec (docs/tasks.md) names a task, its level and prompt text, its tensors (shapes are integer
expressions over configuration variables), five configurations C1..C5, the numpy reference (a
function of tasks/reference.py), a tolerance per dtype and the targets it applies to, each with
the dtype the target computes in. Every problem is reported as `file:line:col: error: ...`,
all of them in one pass, through the same diagnostics as the ISA language.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import yaml

from isadl.diagnostics import Diagnostic, IsaError, did_you_mean
from isadl.ir import Loc

CONFIGS = ("C1", "C2", "C3", "C4", "C5")
DTYPES = ("f32", "bf16", "fp16", "i8", "i16", "i32", "u8")
TARGETS = ("plena", "amdnpu", "coral", "boom")
ROLES = ("in", "out")
_NAME = re.compile(r"[a-z][a-z0-9_]*$")


class TaskError(IsaError):
    """Errors in task specs (rendered like the ISA language's)."""


@dataclass(frozen=True)
class Tensor:
    name: str
    role: str  # 'in' | 'out'
    shape: tuple[str, ...]  # integer expressions over configuration variables
    doc: str = ""
    scale: str = ""  # inputs: drawn values are multiplied by this (e.g. 1 / sqrt(H): weights as a model has them)


WORK = ("mac", "elem")
# Value profiles of the inputs, one per trial, cycled: the typical (normal, uniform), the scales a
# kernel may get wrong (small, large), and the edge cases per dtype (zeros: exact and signed zeros,
# a whole zero row; extremes: the dtype's range ends for integers, denormals, the smallest normals
# and large magnitudes for floats; repeated: few distinct values, sorted, so reductions meet ties).
PROFILES = ("normal", "uniform", "small", "large", "sparse", "zeros", "extremes", "repeated")


@dataclass(frozen=True)
class Tolerance:
    atol: float
    rtol: float

    def ok(self, got, want):
        """|got - want| <= atol + rtol * max(|want|, rms(want)): relative to the element, but never
        to less than the output's typical magnitude, so that a sum which cancels to nearly zero is
        judged by the rounding its terms carry (as every summation order does), not held to an
        accuracy no floating-point kernel has."""
        import numpy as np
        both_nan = np.isnan(got) & np.isnan(want)
        finite = want[np.isfinite(want)]
        rms = float(np.sqrt(np.mean(finite * finite))) if finite.size else 0.0
        return both_nan | (np.abs(got - want) <= self.atol + self.rtol * np.maximum(np.abs(want), rms))


@dataclass(frozen=True)
class TargetUse:
    dtype: str  # what the kernel computes in / the tensors' element type on the target
    configs: dict[str, dict[str, int]] = field(default_factory=dict)  # per-target overrides of C1..C5
    dtypes: dict[str, str] = field(default_factory=dict)  # per-tensor dtype overrides (e.g. i32 accumulators)
    requant: dict[str, str] = field(default_factory=dict)  # integer output -> right-shift expression (requantise)


@dataclass(frozen=True)
class TaskSpec:
    name: str
    level: int
    description: str
    tensors: tuple[Tensor, ...]
    configs: dict[str, dict[str, int]]
    reference: str  # function name in tasks/reference.py
    tolerance: dict[str, Tolerance]
    targets: dict[str, TargetUse]
    work: dict[str, str] = field(default_factory=dict)  # mac / elem: operation counts over the config variables
    path: str = ""
    profiles: tuple[str, ...] = PROFILES  # a task may leave out profiles it is ill-conditioned under

    def tolerance_for(self, target: str, dtype: str) -> Tolerance:
        """The pass rule for an output of `dtype` on `target`: for the benchmark's own task files
        the tolerance measured for this task, target and dtype (tasks/tolerances.yaml, written by
        `python -m kcgen.tolerances`; docs/tasks.md "Tolerances"), else the task file's tolerance
        for the dtype (a task file of the user's own, or an item the table does not list)."""
        entry = measured_tolerances().get(self.name, {}).get(target, {}).get(dtype) if self._shipped() else None
        if entry is not None:
            return Tolerance(float(entry["atol"]), float(entry["rtol"]))
        return self.tolerance[dtype]

    def _shipped(self) -> bool:
        """Loaded from the benchmark's own tasks/level*/<name>.yaml."""
        return _shipped_path(self.path, self.name)

    def work_counts(self, config: dict[str, int]) -> dict[str, int]:
        """The least work any kernel must do (roofline): multiply-accumulates and elementwise results."""
        return {k: eval_shape(e, config) for k, e in self.work.items()}

    @property
    def inputs(self) -> tuple[Tensor, ...]:
        return tuple(t for t in self.tensors if t.role == "in")

    @property
    def outputs(self) -> tuple[Tensor, ...]:
        return tuple(t for t in self.tensors if t.role == "out")

    def config(self, target: str, name: str) -> dict[str, int]:
        use = self.targets[target]
        return dict(use.configs.get(name) or self.configs[name])

    def shape(self, tensor: Tensor, config: dict[str, int]) -> tuple[int, ...]:
        return tuple(int(eval_shape(e, config)) for e in tensor.shape)

    def dtype(self, target: str, tensor: str) -> str:
        use = self.targets[target]
        return use.dtypes.get(tensor, use.dtype)

    def requant_shift(self, target: str, tensor: str, config: dict[str, int]) -> Optional[int]:
        """The right shift that requantises an integer output on this target, or None: the
        kernel writes round_half_up(acc / 2**shift) saturated to the output's dtype, where acc
        is the exact integer result of the reference."""
        expr = self.targets[target].requant.get(tensor)
        return None if expr is None else eval_shape(expr, config)


def eval_shape(expr: str, env: dict[str, int]) -> int:
    """An integer shape expression: names, integers, + - * // %, parentheses and log2(...) (the
    floor of the base-2 logarithm of a positive integer)."""
    return _eval(ast.parse(str(expr), mode="eval").body, env)


def eval_scale(expr: str, env: dict[str, int]) -> float:
    """A real scale expression: numbers, names, + - * / ** and sqrt(...)."""
    import math

    def ev(node):
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
            return float(node.value)
        if isinstance(node, ast.Name):
            if node.id not in env:
                raise KeyError(node.id)
            return float(env[node.id])
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow)):
            a, b = ev(node.left), ev(node.right)
            if isinstance(node.op, ast.Div) and b == 0:
                raise ZeroDivisionError
            return {ast.Add: a + b, ast.Sub: a - b, ast.Mult: a * b,
                    ast.Div: a / b if b else 0.0, ast.Pow: a ** b}[type(node.op)]
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "sqrt" \
                and len(node.args) == 1 and not node.keywords:
            v = ev(node.args[0])
            if v < 0:
                raise ValueError("sqrt of a negative number")
            return math.sqrt(v)
        raise ValueError("only numbers, names, + - * / **, sqrt(...) and parentheses")
    return ev(ast.parse(str(expr), mode="eval").body)


def _eval(node, env):
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.Name):
        if node.id not in env:
            raise KeyError(node.id)
        return env[node.id]
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod)):
        a, b = _eval(node.left, env), _eval(node.right, env)
        if isinstance(node.op, (ast.FloorDiv, ast.Mod)) and b == 0:
            raise ZeroDivisionError
        return {ast.Add: a + b, ast.Sub: a - b, ast.Mult: a * b}.get(type(node.op)) if not isinstance(
            node.op, (ast.FloorDiv, ast.Mod)) else (a // b if isinstance(node.op, ast.FloorDiv) else a % b)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "log2" \
            and len(node.args) == 1 and not node.keywords:
        x = _eval(node.args[0], env)
        if x < 1:
            raise ValueError(f"log2 of {x}: the argument must be a positive integer")
        return x.bit_length() - 1
    raise ValueError("only integers, names, + - * // %, log2(...) and parentheses")


class _Checker:
    def __init__(self, path: str, text: str):
        self.path = path
        self.text = text
        self.diags: list[Diagnostic] = []

    def error(self, node, message: str) -> None:
        mark = node.start_mark if node is not None else None
        loc = Loc(self.path, mark.line + 1, mark.column + 1) if mark is not None else Loc(self.path, 1, 1)
        self.diags.append(Diagnostic(loc, message))

    # -- node helpers
    def mapping(self, node, what: str) -> Optional[dict]:
        if not isinstance(node, yaml.MappingNode):
            self.error(node, f"{what} must be a mapping (key: value lines)")
            return None
        out = {}
        for k, v in node.value:
            if not isinstance(k, yaml.ScalarNode):
                self.error(k, f"{what}: keys must be plain names")
                continue
            if k.value in out:
                self.error(k, f"{what}: '{k.value}' is given twice")
                continue
            out[k.value] = (k, v)
        return out

    def keys(self, m: dict, node, what: str, required: tuple, optional: tuple = ()) -> None:
        suggested = set()
        for key, (knode, _) in m.items():
            if key not in required and key not in optional:
                hint = did_you_mean(key, required + optional)
                self.error(knode, f"{what}: unknown key '{key}'{hint}")
                suggested.add(hint.split("'")[1] if hint else None)
        for key in required:
            if key not in m and key not in suggested:  # a misspelling of it is already reported
                self.error(node, f"{what}: missing '{key}'")

    def scalar(self, node, what: str) -> Optional[str]:
        if not isinstance(node, yaml.ScalarNode):
            self.error(node, f"{what} must be a single value")
            return None
        return node.value

    def integer(self, node, what: str, lo: int = None) -> Optional[int]:
        v = self.scalar(node, what)
        if v is None:
            return None
        try:
            i = int(v, 0)
        except ValueError:
            self.error(node, f"{what} must be an integer, got '{v}'")
            return None
        if lo is not None and i < lo:
            self.error(node, f"{what} must be at least {lo}, got {i}")
            return None
        return i

    def number(self, node, what: str) -> Optional[float]:
        v = self.scalar(node, what)
        if v is None:
            return None
        try:
            f = float(v)
        except ValueError:
            self.error(node, f"{what} must be a number, got '{v}'")
            return None
        if not f >= 0:
            self.error(node, f"{what} must be a non-negative number, got '{v}'")
            return None
        return f

    # -- the spec
    def run(self, root, references: set[str]) -> Optional[TaskSpec]:
        if root is None:
            self.diags.append(Diagnostic(Loc(self.path, 1, 1), "empty task spec"))
            return None
        top = self.mapping(root, "task spec")
        if top is None:
            return None
        self.keys(top, root, "task spec", ("name", "level", "description", "tensors", "configs", "reference",
                                          "tolerance", "targets"), ("work", "profiles"))
        name = self.scalar(top["name"][1], "name") if "name" in top else None
        if name is not None and not _NAME.match(name):
            self.error(top["name"][1], f"name '{name}' must be lower case letters, digits and _")
        stem = Path(self.path).stem
        if name is not None and _NAME.match(name) and stem != name and not self.path.startswith("<"):
            self.error(top["name"][1], f"name '{name}' must match the file name '{stem}.yaml'")
        level = self.integer(top["level"][1], "level", 1) if "level" in top else None
        if level is not None and level > 3:
            self.error(top["level"][1], f"level must be 1, 2 or 3, got {level}")
        description = self.scalar(top["description"][1], "description") if "description" in top else ""
        if description is not None and "description" in top and not description.strip():
            self.error(top["description"][1], "description is empty: it is the task's prompt text")
        configs = self.configs(top["configs"]) if "configs" in top else {}
        tensors = self.tensors(top["tensors"], configs) if "tensors" in top else ()
        reference = None
        if "reference" in top:
            reference = self.scalar(top["reference"][1], "reference")
            if reference is not None and reference not in references:
                self.error(top["reference"][1], f"reference '{reference}' is not a function of tasks/reference.py"
                                                f"{did_you_mean(reference, references)}")
        tolerance = self.tolerance(top["tolerance"]) if "tolerance" in top else {}
        targets = self.targets(top["targets"], tolerance, tensors, configs) if "targets" in top else {}
        work = self.work(top["work"], configs, targets) if "work" in top else {}
        profiles = self.profiles(top["profiles"]) if "profiles" in top else PROFILES
        if self.diags:
            return None
        return TaskSpec(name, level, description.strip(), tuple(tensors), configs, reference, tolerance, targets,
                        work, self.path, profiles)

    def profiles(self, item) -> tuple[str, ...]:
        knode, node = item
        if not isinstance(node, yaml.SequenceNode) or not node.value:
            self.error(node, f"profiles: give a list of value profiles ({', '.join(PROFILES)})")
            return PROFILES
        out = []
        for n in node.value:
            v = self.scalar(n, "profiles")
            if v is not None and v not in PROFILES:
                self.error(n, f"profiles: unknown profile '{v}'{did_you_mean(v, PROFILES)} (one of {', '.join(PROFILES)})")
            elif v is not None:
                out.append(v)
        return tuple(out) or PROFILES

    def work(self, item, configs, targets) -> dict[str, str]:
        knode, node = item
        m = self.mapping(node, "work")
        if m is None:
            return {}
        if not m:
            self.error(node, "work: give at least one of 'mac' (multiply-accumulates) and 'elem' (elementwise results)")
        out = {}
        for key, (kn, vn) in m.items():
            if key not in WORK:
                self.error(kn, f"work: unknown kind '{key}'{did_you_mean(key, WORK)} (one of {', '.join(WORK)})")
                continue
            e = self.scalar(vn, f"work {key}")
            if e is None:
                continue
            envs = list(configs.items()) + [(c, env) for use in targets.values() for c, env in use.configs.items()]
            if self.holds_everywhere(vn, f"work {key}: '{e}'", e, envs, eval_shape):
                out[key] = e
        return out

    def holds_everywhere(self, node, head: str, expr: str, envs, evaluate,
                         ok=lambda v: v > 0, must: str = "positive") -> bool:
        """`expr` evaluates to a value that is `ok` (by default positive) in every (config name,
        variables) of `envs`; else the first problem is reported at `node`, as `head` + what is wrong."""
        for c, env in envs:
            try:
                v = evaluate(expr, env)
            except KeyError as exc:
                self.error(node, f"{head} uses '{exc.args[0]}', which is not a configuration variable"
                                 f"{did_you_mean(exc.args[0], env)}")
                return False
            except (ValueError, SyntaxError, ZeroDivisionError) as exc:
                self.error(node, f"{head}: {exc or 'division by zero'}")
                return False
            if not ok(v):
                self.error(node, f"{head} is {v if isinstance(v, int) else format(v, 'g')} in {c}; it must be {must}")
                return False
        return True

    def configs(self, item, shared: Optional[dict] = None) -> dict[str, dict[str, int]]:
        """The five configurations, or (given the task's `shared` ones) a target's overrides of some."""
        knode, node = item
        m = self.mapping(node, "configs")
        if m is None:
            return {}
        out = {}
        broken: set[str] = set()
        for c in CONFIGS:
            if c not in m and shared is None:
                self.error(node, f"configs: missing {c} (five configurations C1..C5, smallest first)")
        for c, (ck, cv) in m.items():
            if c not in CONFIGS:
                self.error(ck, f"configs: '{c}' is not one of C1..C5")
                continue
            vm = self.mapping(cv, f"configs {c}")
            if vm is None:
                continue
            values = {}
            for var, (vk, vv) in vm.items():
                if not _NAME.match(var.lower()) or not var.isidentifier():
                    self.error(vk, f"configs {c}: '{var}' is not a variable name")
                    broken.add(c)
                    continue
                i = self.integer(vv, f"configs {c}: {var}", 1)
                if i is None:
                    broken.add(c)  # reported; shapes are not checked against it
                else:
                    values[var] = i
            out[c] = values
        names = {c: set(v) for c, v in out.items() if c not in broken}
        if names and len({frozenset(v) for v in names.values()}) > 1:
            # the variable set most configurations share is the task's; the others are wrong
            common = max(({frozenset(v) for v in names.values()}), key=lambda fs: sum(v == fs for v in names.values()))
            for c, v in names.items():
                if v != common:
                    self.error(m[c][1], f"configs {c} has variables {sorted(v)}, but the others have {sorted(common)}")
                    broken.add(c)
        if shared:
            want = set(next(iter(shared.values())))
            for c, v in out.items():
                if c not in broken and set(v) != want:
                    self.error(m[c][1], f"configs {c} has variables {sorted(v)}, but the task's have {sorted(want)}")
                    broken.add(c)
        return {c: v for c, v in out.items() if c not in broken}

    def tensors(self, item, configs) -> list[Tensor]:
        knode, node = item
        m = self.mapping(node, "tensors")
        if m is None:
            return []
        out = []
        for tname, (tk, tv) in m.items():
            if not _NAME.match(tname):
                self.error(tk, f"tensor name '{tname}' must be lower case letters, digits and _")
                continue
            tm = self.mapping(tv, f"tensor {tname}")
            if tm is None:
                continue
            self.keys(tm, tv, f"tensor {tname}", ("role", "shape"), ("doc", "scale"))
            role = self.scalar(tm["role"][1], f"tensor {tname}: role") if "role" in tm else None
            if role is not None and role not in ROLES:
                self.error(tm["role"][1], f"tensor {tname}: role must be 'in' or 'out', got '{role}'")
                role = None
            shape = []
            if "shape" in tm:
                sn = tm["shape"][1]
                if not isinstance(sn, yaml.SequenceNode) or not sn.value:
                    self.error(sn, f"tensor {tname}: shape must be a list of dimensions, e.g. [M, K]")
                else:
                    for dn in sn.value:
                        d = self.scalar(dn, f"tensor {tname}: dimension")
                        if d is None:
                            continue
                        self.holds_everywhere(dn, f"tensor {tname}: dimension '{d}'", d, configs.items(), eval_shape)
                        shape.append(d)
            doc = self.scalar(tm["doc"][1], f"tensor {tname}: doc") if "doc" in tm else ""
            scale = ""
            if "scale" in tm:
                sn = tm["scale"][1]
                scale = self.scalar(sn, f"tensor {tname}: scale") or ""
                if role == "out":
                    self.error(sn, f"tensor {tname}: only inputs have a scale (it multiplies their drawn values)")
                self.holds_everywhere(sn, f"tensor {tname}: scale '{scale}'", scale, configs.items(), eval_scale)
            if role is not None:
                out.append(Tensor(tname, role, tuple(shape), doc or "", scale))
        if out and not any(t.role == "out" for t in out):
            self.error(node, "tensors: a task needs at least one output tensor (role: out)")
        return out

    def tolerance(self, item) -> dict[str, Tolerance]:
        knode, node = item
        m = self.mapping(node, "tolerance")
        if m is None:
            return {}
        out = {}
        self.tolerance_named = set(m)  # named, even if its values are wrong (reported there)
        for dt, (dk, dv) in m.items():
            if dt not in DTYPES:
                self.error(dk, f"tolerance: unknown dtype '{dt}'{did_you_mean(dt, DTYPES)}")
                continue
            tm = self.mapping(dv, f"tolerance {dt}")
            if tm is None:
                continue
            self.keys(tm, dv, f"tolerance {dt}", ("atol", "rtol"))
            a = self.number(tm["atol"][1], f"tolerance {dt}: atol") if "atol" in tm else None
            r = self.number(tm["rtol"][1], f"tolerance {dt}: rtol") if "rtol" in tm else None
            if a is not None and r is not None:
                out[dt] = Tolerance(a, r)
        return out

    def targets(self, item, tolerance, tensors, shared) -> dict[str, TargetUse]:
        knode, node = item
        m = self.mapping(node, "targets")
        if m is None:
            return {}
        out = {}
        names = {t.name for t in tensors}
        for tg, (tk, tv) in m.items():
            if tg not in TARGETS:
                self.error(tk, f"targets: unknown target '{tg}'{did_you_mean(tg, TARGETS)}")
                continue
            um = self.mapping(tv, f"target {tg}")
            if um is None:
                continue
            self.keys(um, tv, f"target {tg}", ("dtype",), ("configs", "dtypes", "requant"))
            dtype = self.scalar(um["dtype"][1], f"target {tg}: dtype") if "dtype" in um else None
            used = set()
            if dtype is not None:
                if dtype not in DTYPES:
                    self.error(um["dtype"][1], f"target {tg}: unknown dtype '{dtype}'{did_you_mean(dtype, DTYPES)}")
                    dtype = None
                else:
                    used.add((dtype, um["dtype"][1]))
            dtypes = {}
            if "dtypes" in um:
                dm = self.mapping(um["dtypes"][1], f"target {tg}: dtypes")
                for tn, (tnk, tnv) in (dm or {}).items():
                    if tn not in names:
                        self.error(tnk, f"target {tg}: dtypes: unknown tensor '{tn}'{did_you_mean(tn, names)}")
                        continue
                    d = self.scalar(tnv, f"target {tg}: dtype of {tn}")
                    if d is not None and d not in DTYPES:
                        self.error(tnv, f"target {tg}: unknown dtype '{d}'{did_you_mean(d, DTYPES)}")
                    elif d is not None:
                        dtypes[tn] = d
                        used.add((d, tnv))
            for d, where in used:
                if d not in tolerance and d not in getattr(self, "tolerance_named", ()):
                    self.error(where, f"target {tg}: no tolerance for dtype '{d}'; add it under 'tolerance'")
            configs = self.configs(um["configs"], shared) if "configs" in um else {}
            for c, env in configs.items():  # an override must still give every tensor a real shape
                for t in tensors:
                    try:
                        dims = [eval_shape(d, env) for d in t.shape]
                    except (KeyError, ValueError, SyntaxError, ZeroDivisionError):
                        continue  # reported with the tensor
                    if min(dims) < 1:
                        self.error(um["configs"][1], f"target {tg}: configs {c} gives tensor {t.name} the "
                                                     f"shape {dims}; every dimension must be positive")
            requant = self.requant(um["requant"], tg, tensors, dtype, dtypes, configs, shared) \
                if "requant" in um else {}
            if dtype is not None:
                out[tg] = TargetUse(dtype, configs, dtypes, requant)
        if not m:
            self.error(node, "targets: a task applies to at least one target")
        return out

    def requant(self, item, tg, tensors, dtype, dtypes, configs, shared) -> dict[str, str]:
        """`requant: {tensor: shift}`: an integer output requantised by a right shift with
        rounding, the shift an integer expression of the configuration in 0..31."""
        m = self.mapping(item[1], f"target {tg}: requant")
        out = {}
        byname = {t.name: t for t in tensors}
        for tn, (tnk, tnv) in (m or {}).items():
            t = byname.get(tn)
            if t is None:
                self.error(tnk, f"target {tg}: requant: unknown tensor '{tn}'{did_you_mean(tn, byname)}")
                continue
            if t.role != "out":
                self.error(tnk, f"target {tg}: requant: '{tn}' is an input; only outputs are requantised")
                continue
            d = dtypes.get(tn, dtype)
            if d is not None and not d.startswith(("i", "u")):
                self.error(tnk, f"target {tg}: requant: '{tn}' is {d} on this target; only integer outputs "
                                f"are requantised")
                continue
            expr = self.scalar(tnv, f"target {tg}: requant shift of {tn}")
            if expr is None:
                continue
            envs = [(c, configs.get(c) or (shared or {})[c]) for c in CONFIGS if c in configs or c in (shared or {})]
            if self.holds_everywhere(tnv, f"target {tg}: requant shift of {tn} '{expr}'", expr, envs, eval_shape,
                                     ok=lambda v: 0 <= v <= 31, must="in 0..31"):
                out[tn] = str(expr)
        return out


def _references() -> dict:
    from kcgen.paths import load_module, TASKS
    mod = load_module(TASKS / "reference.py")
    return {n: getattr(mod, n) for n in dir(mod) if not n.startswith("_") and callable(getattr(mod, n))}


def load_text(text: str, path: str = "<task>") -> TaskSpec:
    c = _Checker(path, text)
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        loc = Loc(path, mark.line + 1, mark.column + 1) if mark is not None else Loc(path, 1, 1)
        raise TaskError([Diagnostic(loc, f"not valid YAML: {getattr(exc, 'problem', None) or exc}")],
                        {path: text}) from None
    spec = c.run(root, set(_references()))
    if c.diags:
        raise TaskError(c.diags, {path: text})
    return spec


def load(path) -> TaskSpec:
    p = Path(path)
    return load_text(p.read_text(encoding="utf-8"), str(p))


def all_tasks() -> list[TaskSpec]:
    """Every task under tasks/, by level then name."""
    from kcgen.paths import TASKS
    specs = [load(p) for p in sorted(TASKS.glob("level*/*.yaml"))]
    return sorted(specs, key=lambda s: (s.level, s.name))


def find(name: str) -> TaskSpec:
    from kcgen.paths import TASKS
    hits = sorted(TASKS.glob(f"level*/{name}.yaml"))
    if not hits:
        known = [p.stem for p in TASKS.glob("level*/*.yaml")]
        raise KeyError(f"unknown task '{name}'{did_you_mean(name, known)}")
    return load(hits[0])


def reference(spec: TaskSpec):
    return _references()[spec.reference]


_MEASURED: dict = {}


def _shipped_path(path: str, name: str) -> bool:
    """`path` is the benchmark's own tasks/level*/<name>.yaml (cached: the evaluator asks per output)."""
    key = (path, name)
    if key not in _MEASURED:
        from kcgen.paths import TASKS
        try:
            p = Path(path).resolve()
            _MEASURED[key] = p.stem == name and p.parent.parent == TASKS.resolve() and p.parent.name.startswith("level")
        except (OSError, ValueError):
            _MEASURED[key] = False
    return _MEASURED[key]


def measured_tolerances() -> dict:
    """tasks/tolerances.yaml as {task: {target: {dtype: {atol, rtol, ...}}}}, read once per process."""
    if "table" not in _MEASURED:
        from kcgen.paths import TASKS
        path = TASKS / "tolerances.yaml"
        _MEASURED["table"] = (yaml.safe_load(path.read_text(encoding="utf-8")) or {}) if path.exists() else {}
    return _MEASURED["table"]
