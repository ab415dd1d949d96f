"""Evaluate a kernel on a benchmark item: assemble, run on fresh inputs, compare with numpy.

    result = evaluate(kernel_text, spec, task, "boom", "C1")

Each trial draws new inputs (value profiles: normal, uniform, small, large, sparse; the seed of
every trial is recorded), starts from a clean machine whose output regions hold poison (NaN
patterns / 0x5A bytes, so memory left from anything earlier cannot pass), runs with a step
budget, and compares every output element with the numpy reference rounded to the output's
dtype. Success means every element of every trial is within tolerance.

Where tensors live comes from a layout: `tasks/layouts/<target>.py` when the target has one
(`layout(spec, task, target, config) -> Layout`), else the generic layout built from the ISA's
kernel ABI (`abi_layout`): inputs packed into the `in` regions, outputs into the `out` regions,
and the `args` registers receiving the tensors' addresses in order, then the configuration
variables. The prompt text describing the layout is generated from the same object.
"""
from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass, field
from typing import Callable, Optional

import ml_dtypes
import numpy as np

import isadl
from isadl.check import Spec

from . import integrity, taskspec
from .taskspec import PROFILES, TaskSpec  # noqa: F401  (PROFILES: the value profiles, re-exported)

DTYPES = {"f32": np.dtype(np.float32), "bf16": np.dtype(ml_dtypes.bfloat16), "fp16": np.dtype(np.float16),
          "i8": np.dtype(np.int8), "i16": np.dtype(np.int16), "i32": np.dtype(np.int32), "u8": np.dtype(np.uint8)}
ALIGN = 64  # bytes between packed tensors
WALL_SECONDS = 120.0  # an evaluation's wall-clock limit (all trials), besides the step budget
EXTREME = 1.0e4  # the largest float magnitude the extremes profile draws (times the input's scale)


class LayoutError(Exception):
    """The task does not fit the target's memories or ABI."""


@dataclass(frozen=True)
class Placement:
    tensor: str
    memory: str
    index: int  # first element of the memory
    shape: tuple[int, ...]
    dtype: str
    address: int  # as the kernel sees it (memory base + index * element bytes)
    form: str = "row-major"  # how the elements are arranged, in the prompt's words


@dataclass(frozen=True)
class Preload:
    memory: str
    index: int
    values: np.ndarray  # in the memory's element type
    what: str  # for the prompt


@dataclass
class Layout:
    """Where the kernel finds its inputs and leaves its outputs, and its start state.

    The evaluator goes through `write`, `read` and `poison`, so a target whose tensors are stored
    in a format of their own (PLENA's MXFP8 HBM images, its VLEN-chunked vector SRAM) subclasses
    Layout in tasks/layouts/<target>.py and overrides them; `prompt()` describes the same object."""
    placements: dict[str, Placement]
    args: list[tuple[str, int, str]]  # (register, value, what it is)
    notes: list[str] = field(default_factory=list)
    preloads: list[Preload] = field(default_factory=list)
    scratch: list = field(default_factory=list)  # integrity.Span: free memory the kernel may use besides the ABI's

    def extent(self, spec: Spec, tensor: str):
        """The elements of its memory a tensor's storage occupies (integrity.Span): its bytes in a
        byte memory, one element per value in a memory of its own element type (as `write` stores)."""
        p = self.placements[tensor]
        n = int(np.prod(p.shape))
        if spec.types[p.memory].bits == 8:
            n *= DTYPES[p.dtype].itemsize
        return integrity.Span(p.memory, p.index, p.index + n, f"tensor {tensor}")

    def write(self, sim, tensor: str, values: np.ndarray) -> np.ndarray:
        """Store an input; return its values as the kernel will see them (after any format's rounding)."""
        _write(sim, self.placements[tensor], values)
        return values

    def read(self, sim, tensor: str) -> np.ndarray:
        """The output as the kernel left it, in the tensor's dtype and shape."""
        return _read(sim, self.placements[tensor])

    def poison(self, sim, tensor: str) -> None:
        """Fill an output's storage with values no correct kernel leaves there."""
        _poison(sim, self.placements[tensor])

    def preload(self, sim) -> None:
        for pre in self.preloads:
            view = sim.view(pre.memory)
            view[pre.index:pre.index + pre.values.size] = pre.values.astype(view.dtype)

    def prompt(self) -> str:
        """The kernel's interface in words (the agent's prompt uses exactly this)."""
        lines = ["Data layout:"]
        for p in self.placements.values():
            lines.append(f"- {p.tensor}: {p.dtype}[{', '.join(map(str, p.shape))}], {p.form}, in {p.memory} "
                         f"at address {p.address:#x}")
        if self.preloads:
            lines.append("Preloaded constants:")
            lines += [f"- {pre.memory}[{pre.index}..{pre.index + pre.values.size - 1}]: {pre.what}"
                      for pre in self.preloads]
        if self.args:
            lines.append("Registers on entry:")
            lines += [f"- {reg} = {value:#x} ({what})" if what.startswith("address") else f"- {reg} = {value} ({what})"
                      for reg, value, what in self.args]
        return "\n".join(lines + self.notes)


def abi_layout(spec: Spec, task: TaskSpec, target: str, config: str) -> Layout:
    """Tensors packed into the ABI's regions; their addresses, then the config, in the arg registers."""
    abi = spec.isa.abi
    if abi is None or not abi.regions:
        raise LayoutError(f"{spec.isa.name} has no kernel ABI regions to place tensors in")
    cfg = task.config(target, config)
    regions = {role: [r for r in abi.regions if r.role in (role, "inout")] for role in ("in", "out")}
    cursor = {id(r): spec.params_eval(r.lo) for r in abi.regions}
    placements = {}
    for t in task.tensors:
        dt = DTYPES[task.dtype(target, t.name)]
        shape = task.shape(t, cfg)
        nbytes = int(np.prod(shape)) * dt.itemsize
        for region in regions[t.role]:
            mem = spec.isa.memory(region.memory) if hasattr(spec.isa, "memory") else None
            elem_bytes = spec.types[region.memory].bits // 8
            start = cursor[id(region)]
            start += -start % max(ALIGN // max(elem_bytes, 1), 1)
            count = -(-nbytes // elem_bytes)
            if start + count <= spec.params_eval(region.hi):
                cursor[id(region)] = start + count
                base = next(m for m in spec.isa.memories if m.name == region.memory).base
                base = spec.params_eval(base) if base is not None else 0
                placements[t.name] = Placement(t.name, region.memory, start, shape, task.dtype(target, t.name),
                                               base + start * elem_bytes)
                break
        else:
            raise LayoutError(f"{task.name} {config}: tensor {t.name} ({nbytes} bytes) does not fit the "
                              f"{'/'.join(r.name for r in regions[t.role]) or 'missing'} region(s) of {spec.isa.name}")
    addresses = [(p.address, f"address of {p.tensor}") for p in placements.values()]
    sizes = [(v, k) for k, v in cfg.items()]
    # Where the ABI's argument registers span two files (AIE: pointers in p, integers in r), the
    # addresses take the first file's registers and the sizes the others'; else all go in order.
    files = [spec.regnames[r][0] for r in abi.args]
    pointer_regs = [r for r, f in zip(abi.args, files) if f == files[0]]
    if len(pointer_regs) < len(abi.args):
        int_regs = [r for r in abi.args if r not in pointer_regs]
        if len(addresses) > len(pointer_regs) or len(sizes) > len(int_regs):
            raise LayoutError(f"{task.name}: {len(addresses)} tensors and {len(sizes)} sizes, but the ABI of "
                              f"{spec.isa.name} passes {len(pointer_regs)} pointers and {len(int_regs)} integers")
        args = list(zip(pointer_regs, *zip(*addresses))) + list(zip(int_regs, *zip(*sizes)))
    else:
        if len(addresses) + len(sizes) > len(abi.args):
            raise LayoutError(f"{task.name}: {len(addresses) + len(sizes)} arguments, but the ABI of "
                              f"{spec.isa.name} passes {len(abi.args)}")
        args = [(reg, v, what) for reg, (v, what) in zip(abi.args, addresses + sizes)]
    return Layout(placements, args)


def statement(task: TaskSpec, target: str, config: str, layout: Layout, spec: Spec) -> str:
    """The item as the agent's prompt states it: the task, its sizes, the layout, the pass rule."""
    cfg = task.config(target, config)
    tols = sorted({p.dtype for n, p in layout.placements.items() if n in {t.name for t in task.outputs}})
    rule = "; ".join(f"{d}: atol {task.tolerance_for(target, d).atol:g}, rtol {task.tolerance_for(target, d).rtol:g}"
                     for d in tols)
    return "\n".join([
        f"Task {task.name} (level {task.level}), configuration {config} on {target}: "
        + ", ".join(f"{k} = {v}" for k, v in cfg.items()) + ".",
        task.description.strip(),
        f"Inputs: {', '.join(t.name for t in task.inputs)}. Outputs (the kernel writes them): "
        f"{', '.join(t.name for t in task.outputs)}.",
        layout.prompt(),
        *requant_rule(task, target, cfg),
        *integrity.statement_lines(spec, layout),
        profile_rule(task, target),
        *roofline_rule(task, target, config, layout, spec),
        "Correct means: on every trial (fresh random inputs each time; the outputs start filled with poison), "
        "every output element satisfies |kernel - reference| <= atol + rtol * max(|reference|, rms(reference)) "
        f"({rule}), and memory and registers are intact as above.",
    ])


def roofline_rule(task: TaskSpec, target: str, config: str, layout: Layout, spec: Spec) -> list[str]:
    """The statement's line saying how the item's roofline_cycles (reported by every evaluation) is computed."""
    from .roofline import RooflineError, explain
    try:
        text = explain(spec, task, target, config, layout)
    except RooflineError:
        return []
    return [text] if text else []


PROFILE_TEXT = {
    "normal": "standard normal", "uniform": "uniform in [-1, 1]", "small": "normal times 1e-3",
    "large": "normal times 30", "sparse": "80 % exact zeros, the rest normal times 1e-2",
    "zeros": "half the elements +0.0 or -0.0, the rest normal; the first row all zeros",
    "extremes": f"a quarter each: denormals, the smallest normals, magnitudes up to {EXTREME:g}, ordinary values",
    "repeated": "few distinct values (multiples of 0.5 in [-2, 2]), each row sorted ascending",
}
INT_PROFILE_TEXT = {"small": "in [-4, 4]", "sparse": "80 % zeros", "zeros": "50 % zeros, the first row all zeros",
                    "extremes": "the dtype's range ends (min, min + 1, max - 1, max), 0 and +-1",
                    "repeated": "integers in [-3, 3], each row sorted ascending"}


def profile_rule(task: TaskSpec, target: str) -> str:
    """What inputs the kernel must handle: every value profile with its values (seeds are not told)."""
    kinds = {DTYPES[task.dtype(target, t.name)].kind for t in task.inputs}
    text = ("Inputs the kernel must handle: one trial per value profile, each with fresh random values ("
            + ", ".join(task.profiles) + ").")
    if kinds - set("iu"):
        text += (" Float inputs (times the tensor's scale, where it has one): "
                 + "; ".join(f"{p}: {PROFILE_TEXT[p]}" for p in task.profiles) + ".")
    if kinds & set("iu"):
        text += (" Integer inputs span int8 (or [-32768, 32767] when wider), except "
                 + "; ".join(f"{p}: {INT_PROFILE_TEXT[p]}" for p in task.profiles if p in INT_PROFILE_TEXT) + ".")
    return text


def requant_rule(task: TaskSpec, target: str, cfg: dict[str, int]) -> list[str]:
    """The statement's lines for requantised integer outputs (exact shift and rounding)."""
    lines = []
    for t in task.outputs:
        shift = task.requant_shift(target, t.name, cfg)
        if shift is None:
            continue
        d = task.dtype(target, t.name)
        info = np.iinfo(DTYPES[d])
        half = f"(acc + {1 << shift >> 1}) >> {shift}" if shift else "acc"
        lines.append(f"{t.name} is requantised to {d}: with acc the exact integer result (accumulate in 32 bits), "
                     f"{t.name} = clamp({half}, {info.min}, {info.max}): an arithmetic right shift by {shift} "
                     f"rounding half up, then saturation.")
    return lines


def layout_for(spec: Spec, task: TaskSpec, target: str, config: str) -> Layout:
    from .paths import TASKS, load_module
    custom = TASKS / "layouts" / f"{target}.py"
    if custom.exists():
        return load_module(custom).layout(spec, task, target, config)
    return abi_layout(spec, task, target, config)


# ---- inputs ------------------------------------------------------------------------------------------
def draw(rng: np.random.Generator, profile: str, shape, dtype: np.dtype, scale: Optional[float] = None) -> np.ndarray:
    """Fresh values under a profile; `scale` multiplies float values before they are rounded to
    `dtype` (integer tensors are not scaled: int8 ones span [-128, 127], wider ones [-32768, 32767],
    and [-4, 4] under the small profile)."""
    n = int(np.prod(shape))
    shape = tuple(shape)
    if dtype.kind in "iu":
        # int8 data over its whole range; wider integers (an int32 bias beside int8 dot products)
        # over the 16-bit range, the scale of the sums they join
        info = np.iinfo(dtype)
        wide = 32767 if dtype.itemsize > 1 else 127
        lo, hi = max(info.min, -wide - 1), min(info.max, wide)
        if profile == "small":
            lo, hi = max(lo, -4), min(hi, 4)
        if profile == "extremes":  # the range's ends (saturation, the asymmetric minimum), 0 and +-1
            v = rng.choice(np.array([lo, lo + 1, hi - 1, hi, 0, 1, max(lo, -1)]), n, p=[.25, .1, .1, .25, .1, .1, .1])
        elif profile == "repeated":
            v = rng.integers(-3, 4, n)
        else:
            v = rng.integers(lo, hi + 1, n)
        if profile in ("sparse", "zeros"):
            v[rng.random(n) < (0.8 if profile == "sparse" else 0.5)] = 0
        return _edge_rows(v, shape, profile).astype(dtype).reshape(shape)
    if profile == "normal":
        v = rng.standard_normal(n)
    elif profile == "uniform":
        v = rng.uniform(-1.0, 1.0, n)
    elif profile == "small":
        v = rng.standard_normal(n) * 1e-3
    elif profile == "large":
        v = rng.standard_normal(n) * 30.0
    elif profile == "sparse":  # and near zero
        v = rng.standard_normal(n) * 1e-2
        v[rng.random(n) < 0.8] = 0.0
    elif profile == "zeros":  # half the elements +0 or -0, the rest normal
        v = rng.standard_normal(n)
        zero = rng.random(n) < 0.5
        v[zero] = np.copysign(0.0, rng.standard_normal(int(zero.sum())))
    elif profile == "extremes":
        v = _float_extremes(rng, n, dtype)
    elif profile == "repeated":  # a few distinct values (halves in [-2, 2]): ties for max, equal rows
        v = rng.integers(-4, 5, n) * 0.5
    else:
        raise ValueError(f"unknown value profile {profile!r}")
    if scale is not None:
        v = v * scale
    return _edge_rows(v, shape, profile).astype(dtype).reshape(shape)


def _float_extremes(rng: np.random.Generator, n: int, dtype: np.dtype) -> np.ndarray:
    """A quarter each: denormals of the dtype, its smallest normals, large magnitudes (up to
    EXTREME) and ordinary values, with random signs."""
    info = ml_dtypes.finfo(dtype) if dtype not in (np.float32, np.float64, np.float16) else np.finfo(dtype)
    tiny = float(info.smallest_normal)
    denormal = float(info.smallest_subnormal)
    kind = rng.integers(0, 4, n)
    mag = np.select([kind == 0, kind == 1, kind == 2],
                    [rng.uniform(denormal, tiny, n), tiny * rng.uniform(1.0, 4.0, n), EXTREME * rng.uniform(0.25, 1.0, n)],
                    np.abs(rng.standard_normal(n)))
    return np.where(rng.random(n) < 0.5, -mag, mag)


def _edge_rows(v: np.ndarray, shape: tuple, profile: str) -> np.ndarray:
    """Profiles for edge cases also give reductions their edge rows: under zeros the first row (last
    axis) is all zeros; under repeated each row is sorted ascending (runs of ties)."""
    if len(shape) == 0 or v.size == 0:
        return v
    rows = v.reshape(-1, shape[-1])
    if profile == "zeros":
        rows[0] = 0.0
    elif profile == "repeated":
        rows.sort(axis=1)
    return rows.reshape(-1)


def requantize(acc: np.ndarray, shift: int, dtype: np.dtype) -> np.ndarray:
    """An exact integer result narrowed the way integer kernels do it: an arithmetic right shift
    by `shift` rounding half up (add 2**(shift-1) first; RVV vnclip with vxrm = rnu, AIE SRS
    with rounding mode positive_inf), then saturation to `dtype`."""
    a = np.asarray(acc, dtype=np.float64)
    if not np.all(np.isfinite(a)) or np.any(a != np.rint(a)) or np.any(np.abs(a) >= 2.0 ** 62):
        raise ValueError("requantize: the reference result is not an exact integer")
    q = np.right_shift(a.astype(np.int64) + ((1 << shift) >> 1), shift)
    info = np.iinfo(dtype)
    return np.clip(q, info.min, info.max).astype(dtype)


def quantize(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return np.clip(np.rint(x), info.min, info.max).astype(dtype)
    return np.asarray(x, dtype=np.float64).astype(dtype)


# ---- results -------------------------------------------------------------------------------------------
@dataclass
class OutputCheck:
    tensor: str
    kernel: np.ndarray  # float64 view of what the kernel wrote
    reference: np.ndarray
    ok: np.ndarray  # bool per element

    def rows(self, start: int = 0, count: int = 8) -> list[dict]:
        """Row-wise kernel vs reference values with the row's worst error (for view_output)."""
        k = self.kernel.reshape(self.kernel.shape[0], -1) if self.kernel.ndim > 1 else self.kernel.reshape(1, -1)
        r = self.reference.reshape(k.shape)
        out = []
        for i in range(max(start, 0), min(start + count, k.shape[0])):
            err = np.abs(k[i] - r[i])
            err = np.where(np.isnan(err) & ~(np.isnan(k[i]) & np.isnan(r[i])), np.inf, err)  # NaN vs a number: wrong
            out.append({"row": i, "kernel": k[i].tolist(), "reference": r[i].tolist(),
                        "max_abs_err": float(np.nanmax(err)) if err.size and not np.isnan(err).all() else 0.0,
                        "mismatches": int((~self.ok.reshape(k.shape)[i]).sum())})
        return out


@dataclass
class EvalResult:
    correct: bool
    match_rate: float = 0.0
    max_abs_err: float = math.inf
    max_rel_err: float = math.inf
    cycles: Optional[int] = None
    instret: Optional[int] = None
    baseline_cycles: Optional[int] = None
    roofline_cycles: Optional[int] = None
    trap: Optional[str] = None
    error: Optional[str] = None  # assembly errors, layout problems, a crashed evaluation
    seeds: list[int] = field(default_factory=list)
    profiles: list[str] = field(default_factory=list)
    outputs: dict[str, OutputCheck] = field(default_factory=dict)  # the first failing trial's, else the last
    suspicious: list[str] = field(default_factory=list)  # why a human should look at this result (never hidden)
    violation: Optional[str] = None  # the first trial's breach of memory or ABI integrity (kcgen.integrity)

    @property
    def speedup(self) -> Optional[float]:
        """Baseline cycles over the kernel's; only for a correct kernel."""
        if self.correct and self.cycles and self.baseline_cycles:
            return self.baseline_cycles / self.cycles
        return None

    @property
    def roofline_fraction(self) -> Optional[float]:
        if self.cycles and self.roofline_cycles:
            return self.roofline_cycles / self.cycles
        return None

    def summary(self, flags: bool = True) -> str:
        """One line for a person; `flags=False` leaves out the suspicious flags (the agent's tools:
        they quote the reference kernel's cycles)."""
        if self.error:
            return self.error if ": error: " in self.error else f"error: {self.error}"  # already located
        head = ("correct" if self.correct else "incorrect" if self.match_rate == 1.0
                else f"incorrect: {100 * (1 - self.match_rate):.1f}% of elements do not match")
        parts = [head]
        if self.trap:
            parts.append(f"trap: {self.trap}")
        if self.violation:
            parts.append(self.violation)
        if self.cycles is not None:
            parts.append(f"{self.cycles} cycles, {self.instret} instructions")
        if self.baseline_cycles:  # a speedup only means something for a correct kernel
            parts.append(f"baseline {self.baseline_cycles} cycles" +
                         (f", speedup {self.speedup:.2f}x" if self.speedup else ""))
        if self.roofline_cycles:
            parts.append(f"roofline {self.roofline_cycles} cycles")
        if not self.correct and math.isfinite(self.max_abs_err):
            parts.append(f"max abs err {self.max_abs_err:.3g}, max rel err {self.max_rel_err:.3g}")
        if flags and self.suspicious:
            parts.append("suspicious (a human should look): " + "; ".join(self.suspicious))
        return "; ".join(parts)

    def as_json(self) -> dict:
        return {"correct": self.correct, "match_rate": self.match_rate,
                "max_abs_err": _finite(self.max_abs_err), "max_rel_err": _finite(self.max_rel_err),
                "cycles": self.cycles, "instret": self.instret, "baseline_cycles": self.baseline_cycles,
                "speedup": self.speedup, "roofline_cycles": self.roofline_cycles,
                "roofline_fraction": self.roofline_fraction, "trap": self.trap, "error": self.error,
                "violation": self.violation, "seeds": self.seeds, "profiles": self.profiles, "suspicious": self.suspicious}


def _finite(x):
    return x if x is None or math.isfinite(x) else None


# ---- the evaluation ------------------------------------------------------------------------------------
_SIMS: dict = {}  # per ISA: its simulator and its assembler, built once


def _assembler(spec: Spec):
    """One assembler per ISA (building one generates its matchers: tens of milliseconds)."""
    from kcgen.asm import Assembler
    hit = _SIMS.get(("asm", id(spec)))
    if hit is None or hit.spec is not spec:
        hit = _SIMS[("asm", id(spec))] = Assembler(spec)
    return hit


def _simulator(spec: Spec):
    from kcgen.sim.simulator import Simulator
    sim = _SIMS.get(id(spec))
    if sim is None or sim.spec is not spec:
        sim = _SIMS[id(spec)] = Simulator(spec)
    return sim


_THREADS = max(1, min(4, os.cpu_count() or 1))  # trials evaluated side by side


def _simulators(spec: Spec, n: int) -> list:
    """`n` simulators of `spec` (the first is `_simulator`'s), kept for the next evaluation."""
    from kcgen.sim.simulator import Simulator
    first = _simulator(spec)
    extra = _SIMS.get(("extra", id(spec)))
    if extra is None or (extra and extra[0].spec is not spec):
        extra = _SIMS[("extra", id(spec))] = []
    while len(extra) < n - 1:
        extra.append(Simulator(spec, first.built))
    return [first] + extra[:n - 1]


def _clean(sim) -> None:
    """Every register, state item and memory back to its declared start value (zero unless the ISA
    declares one, e.g. PLENA's BMM_SCALE = 1.0)."""
    inits = _SIMS.get(("init", id(sim)))
    if inits is None or inits[0] is not sim:
        inits = _SIMS[("init", id(sim))] = (sim, {n: st.allocate() for n, st in sim.layout.stores.items() if st.init})
    for name, arr in sim.arrays.items():
        if arr.nbytes >= 1 << 20:  # a large memory: find its nonzero blocks (a read) and zero only those
            rows = integrity.blocks(arr)
            rows[integrity.nonzero(rows)] = 0
        else:
            arr[...] = 0
    for name, start in inits[1].items():
        sim.arrays[name][...] = start


def _write(sim, p: Placement, values: np.ndarray) -> None:
    mem = sim.arrays[p.memory]
    dt = DTYPES[p.dtype]
    flat = np.ascontiguousarray(values.astype(dt).reshape(-1))
    if mem.dtype == np.uint8:
        raw = flat.view(np.uint8)
        mem[p.index:p.index + raw.size] = raw
    else:  # a memory of the tensor's own element type (e.g. bf16 vector SRAM)
        view = sim.view(p.memory)
        view[p.index:p.index + flat.size] = flat.astype(view.dtype)


def _read(sim, p: Placement) -> np.ndarray:
    dt = DTYPES[p.dtype]
    n = int(np.prod(p.shape))
    mem = sim.arrays[p.memory]
    if mem.dtype == np.uint8:
        out = mem[p.index:p.index + n * dt.itemsize].copy().view(dt)
    else:
        out = sim.view(p.memory)[p.index:p.index + n].astype(dt)
    return out.reshape(p.shape)


def _poison(sim, p: Placement) -> None:
    dt = DTYPES[p.dtype]
    n = int(np.prod(p.shape))
    is_float = dt.kind == "f" or dt == DTYPES["bf16"]  # ml_dtypes' bfloat16 has kind 'V'
    fill = np.full(n, np.nan, dtype=dt) if is_float else np.full(n * dt.itemsize, 0x5A, np.uint8).view(dt)
    _write(sim, p, fill.reshape(p.shape))


def _set_register(spec: Spec, sim, name: str, value: int) -> None:
    file, index = spec.regnames[name]
    arr = sim.arrays[file]
    bits = arr.dtype.itemsize * 8
    arr[index] = np.array(value & ((1 << bits) - 1), dtype=f"u{arr.dtype.itemsize}").view(arr.dtype)


def _image_overlap(spec: Spec, program, lay: Layout) -> Optional[str]:
    """The program's sections must not overlap a tensor or a region the ABI gives to tensors (in a
    memory sections are loaded into): inputs written after loading would silently overwrite code,
    and a section moved into the tensors' regions would be writable memory the statement never
    lists."""
    loaded = {m.name: spec.params_eval(m.base) for m in spec.isa.memories if m.base is not None}
    elem = {m: spec.types[m].bits // 8 for m in loaded}
    for sec in program.sections.values():
        if not sec.data:
            continue
        for p in lay.placements.values():
            if p.memory not in loaded:
                continue
            end = p.address + int(np.prod(p.shape)) * DTYPES[p.dtype].itemsize
            if p.address < sec.end and sec.base < end:
                return (f"the program's {sec.name} section ({sec.base:#x}..{sec.end:#x}) overlaps tensor {p.tensor} "
                        f"({p.address:#x}..{end:#x}): the program image is larger than the ABI leaves for it")
        for r in (r for role in ("in", "out", "inout") for r in integrity.regions(spec, role)
                  if r.memory in loaded):
            lo, hi = loaded[r.memory] + r.lo * elem[r.memory], loaded[r.memory] + r.hi * elem[r.memory]
            if lo < sec.end and sec.base < hi:
                return (f"the program's {sec.name} section ({sec.base:#x}..{sec.end:#x}) lies in the ABI's region "
                        f"{r.what.split(':')[0]} ({lo:#x}..{hi:#x}), which holds the task's tensors: keep the "
                        "program image where the ABI puts it")
    return None


def start_trial(sim, program, task: TaskSpec, lay: Layout, seed: int, profile: str,
                cfg: dict[str, int]) -> dict[str, np.ndarray]:
    """A clean machine with the program loaded, the layout's constants, fresh inputs drawn with
    `seed` under value `profile` (times each input's scale at configuration `cfg`), poisoned outputs
    and the argument registers set; returns the inputs as the kernel sees them. Raises LoadError
    when the program does not fit."""
    rng = np.random.default_rng(seed)
    _clean(sim)  # nothing survives from an earlier run
    sim.load(program)
    lay.preload(sim)
    inputs = {}
    for t in task.inputs:
        p = lay.placements[t.name]
        scale = taskspec.eval_scale(t.scale, cfg) if t.scale else None
        inputs[t.name] = lay.write(sim, t.name, draw(rng, profile, p.shape, DTYPES[p.dtype], scale))
    for t in task.outputs:
        lay.poison(sim, t.name)
    for reg, value, _ in lay.args:
        _set_register(sim.spec, sim, reg, value)
    _scramble_preserved(sim, rng)
    return inputs


def _scramble_preserved(sim, rng: np.random.Generator) -> None:
    """The callee-saved registers the ABI does not give a value (all but the stack pointer) start
    random, so a kernel that uses them and clears them before returning does not look as if it
    had preserved them. Integer registers get values in [1, 2^16), which every register can hold
    (amdnpu's p registers keep 20 bits), float registers random bits."""
    abi = sim.spec.isa.abi
    if abi is None:
        return
    stack = sim.spec.regnames[abi.stack[0]] if abi.stack else None
    for _, file, index in sim.spec.preserved_registers():
        if (file, index) != stack:
            arr = sim.arrays[file]
            if arr.dtype.kind in "iu":
                arr[index] = rng.integers(1, 1 << 16)
            else:
                arr[index:index + 1] = rng.integers(0, 256, arr.dtype.itemsize, dtype=np.uint8).view(arr.dtype)


_TRIAL_POOL = None  # (lanes, ThreadPoolExecutor)
_BLAS = None


def _lane_plan(trials: int, lanes: int, timed_cost: int = 1) -> list[list[int]]:
    """Which trials each lane runs, in order: each trial goes to the lane with the least work so
    far, trial 0 (the timed one) counting `timed_cost` untimed trials."""
    if lanes <= 1 or trials <= 1:
        return [list(range(trials))]
    plan, load = [[] for _ in range(min(lanes, trials))], [0] * min(lanes, trials)
    for k in range(trials):
        i = load.index(min(load))
        plan[i].append(k)
        load[i] += timed_cost if k == 0 else 1
    return plan


def _run_trials(trial: Callable, trials: int, lanes: int, timed_cost: int = 1) -> list:
    """Run trial(k, lane) for k in 0..trials-1, each lane's trials in order on one long-lived
    thread with a simulator of its own (a pool kept for the process: starting threads per
    evaluation costs milliseconds). With one lane, a trial that does not halt ends the evaluation."""
    global _TRIAL_POOL
    plan = _lane_plan(trials, lanes, timed_cost)
    if len(plan) == 1:
        outcomes = []
        for k in plan[0]:
            outcomes.append(trial(k, 0))
            if outcomes[-1][0].status != "halted":
                break  # a kernel that does not halt is not run again
        return outcomes
    if _TRIAL_POOL is None or _TRIAL_POOL[0] < len(plan):
        from concurrent.futures import ThreadPoolExecutor
        _TRIAL_POOL = (len(plan), ThreadPoolExecutor(len(plan), thread_name_prefix="kcgen-trial"))

    def lane(i: int) -> list:
        return [(k, trial(k, i)) for k in plan[i]]
    done = [f.result() for f in [_TRIAL_POOL[1].submit(lane, i) for i in range(len(plan))]]
    return [o for _, o in sorted((pair for d in done for pair in d), key=lambda p: p[0])]


def _timed_cost(spec: Spec) -> int:
    """A timed trial's time in untimed trials: the out-of-order model costs more than the
    semantics (boom gemm C5: 34 ms against 14.5 ms of CPU), the other models little."""
    return 2 if spec.isa.timing is not None and spec.isa.timing.model == "ooo" else 1


def _one_blas_thread():
    """Limit BLAS to one thread while trials run side by side (the references' matmuls)."""
    global _BLAS
    if _BLAS is None:
        from threadpoolctl import ThreadpoolController
        _BLAS = ThreadpoolController()
    return _BLAS.limit(limits=1, user_api="blas")


def evaluate(kernel: str, spec: Spec, task: TaskSpec, target: str, config: str = "C1", trials: Optional[int] = None,
             seed: Optional[int] = None, max_steps: int = 50_000_000, baseline_cycles: Optional[int] = None,
             roofline_cycles: Optional[int] = None, layout: Optional[Layout] = None,
             path: str = "kernel.s", seconds: float = WALL_SECONDS) -> EvalResult:
    """Evaluate `kernel` (assembly text) for `task` at `config` on the ISA `spec`, whose dtypes are
    the task's `target` entry. `trials` defaults to one per value profile of the task (trial k
    draws under profile k mod the profiles, with seed `seed` + k; `seed` defaults to fresh OS
    entropy). Besides the step budget, the evaluation has a wall-clock limit of `seconds` in all (a
    trial still running then stops with a timeout). Runs in this process; `Evaluator` isolates it in a
    worker."""
    trials = len(task.profiles) if trials is None else trials
    try:
        program = _assembler(spec).assemble(kernel, path)
    except isadl.IsaError as exc:
        return EvalResult(False, error=str(exc), baseline_cycles=baseline_cycles, roofline_cycles=roofline_cycles)
    try:
        lay = layout or layout_for(spec, task, target, config)
    except LayoutError as exc:
        return EvalResult(False, error=str(exc))
    if roofline_cycles is None:
        from .roofline import roofline_cycles as roofline
        roofline_cycles = roofline(spec, task, target, config, lay)
    clash = _image_overlap(spec, program, lay)
    if clash:
        return EvalResult(False, error=clash, baseline_cycles=baseline_cycles, roofline_cycles=roofline_cycles)
    cfg = task.config(target, config)
    ref_fn = taskspec.reference(task)
    seed = int(np.random.SeedSequence().entropy % (1 << 31)) if seed is None else seed
    result = EvalResult(True, baseline_cycles=baseline_cycles, roofline_cycles=roofline_cycles)
    plan = [(seed + k, task.profiles[k % len(task.profiles)]) for k in range(trials)]
    sims = _simulators(spec, min(trials, _THREADS))

    allowed, locked = integrity.writable(spec, task, lay, program), integrity.protected(spec, program)
    deadline = time.monotonic() + seconds
    watched, kept = integrity.memories(spec), integrity.preserved(spec)

    def trial(k: int, lane: int):
        """One trial on its lane's simulator (the simulator's C code runs without the GIL, so trials
        run side by side on the machine's cores). The cycles reported are trial 0's; the other
        trials check correctness only and run with the timing model off. After the run, the memories
        and the preserved registers are checked against their start (kcgen.integrity)."""
        sim = sims[lane]
        inputs = start_trial(sim, program, task, lay, *plan[k], cfg)
        before = integrity.Snapshot(sim, watched, kept)
        run = sim.run(max_steps, timed=k == 0, seconds=max(deadline - time.monotonic(), 1e-3))
        violation = integrity.check(spec, sim, before, allowed, task, lay, locked) if run.status == "halted" else None
        with np.errstate(over="ignore", under="ignore"):  # exp of an extreme input: inf, then a finite result
            golden = ref_fn(**{n: v.astype(np.float64) for n, v in inputs.items()}, **cfg)
        got = {t.name: lay.read(sim, t.name).astype(np.float64) for t in task.outputs}
        return run, golden, got, violation

    try:
        with _one_blas_thread():  # the trials are the parallelism; BLAS threads on top only contend
            outcomes = _run_trials(trial, trials, len(sims), _timed_cost(spec))
    except Exception as exc:  # LoadError: the program's sections do not fit the machine
        return EvalResult(False, error=str(exc))
    shifts = {t.name: task.requant_shift(target, t.name, cfg) for t in task.outputs}
    total = good = 0
    max_abs = max_rel = 0.0
    for k, (run, golden, got_all, violation) in enumerate(outcomes):
        result.seeds.append(plan[k][0])
        result.profiles.append(plan[k][1])
        if k == 0:
            result.cycles, result.instret = run.cycles, run.instret
        if run.status != "halted":
            result.correct = False
            result.trap = (str(run.trap) if run.trap else f"did not halt within {max_steps} steps")
            if run.status == "timeout":
                result.trap += f" (the evaluation's wall-clock limit: {seconds:g} s over all trials)"
        if violation:
            result.correct = False
            result.violation = result.violation or f"trial {k} ({plan[k][1]}): {violation}"
        checks = {}
        for t in task.outputs:
            p = lay.placements[t.name]
            dt = DTYPES[p.dtype]
            want = (quantize(golden[t.name], dt) if shifts[t.name] is None else
                    requantize(golden[t.name], shifts[t.name], dt)).astype(np.float64)
            got = got_all[t.name]
            tol = task.tolerance_for(target, p.dtype)
            ok = tol.ok(got, want)
            checks[t.name] = OutputCheck(t.name, got, want, ok)
            total += ok.size
            good += int(ok.sum())
            with np.errstate(invalid="ignore", divide="ignore"):
                err = np.abs(got - want)
                rel = err / np.maximum(np.abs(want), 1e-30)
            if err.size:
                max_abs = max(max_abs, float(np.nanmax(np.where(np.isnan(err), np.inf, err))))
                max_rel = max(max_rel, float(np.nanmax(np.where(np.isnan(rel), np.inf, rel))))
            if not ok.all():
                result.correct = False
        if not result.outputs or not all(c.ok.all() for c in checks.values()) and \
                all(c.ok.all() for c in result.outputs.values()):
            result.outputs = checks
        if run.status != "halted":
            break
    result.match_rate = good / total if total else 0.0
    result.max_abs_err, result.max_rel_err = max_abs, max_rel
    return result


def evaluate_item(kernel: str, spec: Spec, task: TaskSpec, target: str, config: str = "C1", **kwargs) -> EvalResult:
    """`evaluate`, with the item's baseline cycles (measured once, cached) for the speedup, and a
    correct result flagged `suspicious` (kcgen.verify.flags) when it beats the item's reference
    kernel by more than kcgen.verify.SUSPICIOUS_SPEEDUP or comes near its roofline bound."""
    from . import kernels, verify
    try:
        lay = kwargs.get("layout") or layout_for(spec, task, target, config)
    except LayoutError as exc:
        return EvalResult(False, error=str(exc))
    kwargs["layout"] = lay
    if kwargs.get("baseline_cycles") is None:
        kwargs["baseline_cycles"] = kernels.baseline_cycles(spec, task, target, config, lay)
    result = evaluate(kernel, spec, task, target, config, **kwargs)
    if result.correct and result.cycles:
        try:  # the reference itself is its own comparison (not measured a second time)
            ref = kernels.find("reference", spec, task, target, config, lay)
            ref_cycles = (None if ref is None else result.cycles if ref.text == kernel else
                          kernels.reference_cycles(spec, task, target, config, lay))
        except Exception:  # a reference generator that cannot make this item: nothing to compare with
            ref_cycles = None
        result.suspicious += verify.flags(result.cycles, ref_cycles, result.roofline_cycles)
    return result


# ---- isolation ------------------------------------------------------------------------------------------
_SPECS: dict[tuple, Spec] = {}


def _spec(isa_path: str, defines: tuple) -> Spec:
    """The worker's checked ISA, loaded once per (file, overrides)."""
    key = (isa_path, defines)
    if key not in _SPECS:
        _SPECS[key] = isadl.load(isa_path, dict(defines))
    return _SPECS[key]


def _worker_evaluate(isa_path: str, defines: tuple, task_path: str, target: str, config: str, kernel: str,
                     kwargs: dict) -> EvalResult:
    spec = _spec(isa_path, defines)
    task = taskspec.load(task_path)
    return evaluate_item(kernel, spec, task, target, config, **kwargs)


def _worker_own(isa_path: str, defines: tuple, task_path: str, target: str, config: str, kind: str,
                kwargs: dict) -> Optional[EvalResult]:
    from .kernels import find
    spec = _spec(isa_path, defines)
    task = taskspec.load(task_path)
    try:
        lay = layout_for(spec, task, target, config)
    except LayoutError as exc:
        return EvalResult(False, error=str(exc))
    try:
        kernel = find(kind, spec, task, target, config, lay)
    except Exception as exc:  # a generator that cannot make this item (e.g. at a swept parameter point)
        return EvalResult(False, error=f"the {kind} kernel generator failed: {type(exc).__name__}: {exc}")
    if kernel is None:
        return None
    return evaluate_item(kernel.text, spec, task, target, config, layout=lay, path=str(kernel.origin), **kwargs)


def _worker_profile(isa_path: str, defines: tuple, task_path: str, target: str, config: str, kernel: str,
                    max_steps: int) -> str:
    from .profile import profile, render
    spec = _spec(isa_path, defines)
    task = taskspec.load(task_path)
    try:
        report = profile(spec, kernel, task, target, config, layout_for(spec, task, target, config), max_steps)
    except isadl.IsaError as exc:
        return f"the kernel does not assemble:\n{exc}"
    except Exception as exc:  # LoadError and the like: the kernel's problem, reported
        return f"cannot profile: {exc}"
    return render(report)


class Evaluator:
    """Runs evaluations in a long-lived worker process, so nothing a kernel does can take the caller
    down (a crashed worker gives an error result and is replaced). The worker keeps ISAs and
    simulators loaded between evaluations."""

    def __init__(self, workers: int = 1):
        self._pool = None
        self.workers = workers

    def _executor(self):
        if self._pool is None:
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor
            from .runlock import die_with_parent
            # the worker ends with its caller: a kill -9 of `kcgen agent` or a bench worker leaves no orphan
            self._pool = ProcessPoolExecutor(max_workers=self.workers, mp_context=multiprocessing.get_context("spawn"),
                                             initializer=die_with_parent, initargs=(os.getpid(),))
        return self._pool

    def evaluate(self, kernel: str, isa_path: str, task_path: str, target: str, config: str = "C1",
                 defines: Optional[dict] = None, timeout: Optional[float] = None, **kwargs) -> EvalResult:
        """Evaluate `kernel` (assembly text) for the item, with its baseline cycles and roofline."""
        future = self._executor().submit(_worker_evaluate, str(isa_path), tuple(sorted((defines or {}).items())),
                                         str(task_path), target, config, kernel, kwargs)
        return self.result(future, timeout)

    def submit_own(self, kind: str, isa_path: str, task_path: str, target: str, config: str = "C1",
                   defines: Optional[dict] = None, **kwargs):
        """Evaluate the item's own baseline or reference kernel; the future's result is None when it has none."""
        return self._executor().submit(_worker_own, str(isa_path), tuple(sorted((defines or {}).items())),
                                       str(task_path), target, config, kind, kwargs)

    def profile(self, kernel: str, isa_path: str, task_path: str, target: str, config: str = "C1",
                defines: Optional[dict] = None, max_steps: int = 200_000, timeout: Optional[float] = 120) -> str:
        """kcgen.profile's report for the kernel, computed in the worker process."""
        future = self._executor().submit(_worker_profile, str(isa_path), tuple(sorted((defines or {}).items())),
                                         str(task_path), target, config, kernel, max_steps)
        out = self.result(future, timeout)
        return out.error if isinstance(out, EvalResult) else out

    def result(self, future, timeout: Optional[float] = None) -> Optional[EvalResult]:
        from concurrent.futures import TimeoutError as FutureTimeout
        from concurrent.futures.process import BrokenProcessPool
        try:
            return future.result(timeout=timeout)
        except BrokenProcessPool:
            self._pool = None
            return EvalResult(False, error="the evaluation process died (a kcgen bug: please report it)")
        except (TimeoutError, FutureTimeout):
            self.close(kill=True)
            return EvalResult(False, error=f"the evaluation took longer than {timeout} s")

    def close(self, kill: bool = False) -> None:
        if self._pool is not None:
            if kill:
                for p in list(getattr(self._pool, "_processes", {}).values()):
                    p.kill()
            self._pool.shutdown(wait=not kill, cancel_futures=True)
            self._pool = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
