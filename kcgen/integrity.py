"""What a kernel may change, and the check that it changed nothing else.

After every trial, every byte of every memory of the target must hold what it held when the kernel
started, except in

- the task's output tensors (their storage, as the layout places them),
- the ABI's scratch regions (stack, free buffers) and the layout's own scratch (free SRAM rows,
  PLENA's HBM after the inputs),
- the program's own writable sections (.data, .bss; not .text or .rodata),

and every register the ABI declares preserved (callee-saved) must hold its start value. A kernel that
writes past its output, clobbers an input, rewrites its own code or returns with s0 changed fails
the trial with a diagnosis naming the place.

The memory check is two passes over each memory per trial (before and after the run): which blocks
hold anything, a copy of those, and after the run the blocks that changed; only changed blocks that
are not wholly writable are looked at byte by byte.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from isadl import ir

BLOCK = 4096  # bytes per block of the before/after comparison


@dataclass(frozen=True)
class Span:
    """Elements lo..hi-1 of a memory, and what they are (for the statement and the diagnosis)."""
    memory: str
    lo: int
    hi: int
    what: str


def regions(spec, role: str) -> list[Span]:
    """The ABI's regions with `role` (in | out | inout | scratch), as spans."""
    abi = spec.isa.abi
    if abi is None:
        return []
    return [Span(r.memory, spec.params_eval(r.lo), spec.params_eval(r.hi), f"{r.name}: {r.doc}" if r.doc else r.name)
            for r in abi.regions if r.role == role]


def scratch(spec, lay) -> list[Span]:
    """Where a kernel may write besides its outputs and its own sections: the ABI's scratch regions
    and the layout's scratch."""
    return regions(spec, "scratch") + list(lay.scratch)


def writable(spec, task, lay, program) -> list[Span]:
    """Every span the kernel may change: outputs, scratch, its program's writable sections."""
    out = [lay.extent(spec, t.name) for t in task.outputs] + scratch(spec, lay)
    return out + [s for s in _sections(spec, program) if not _read_only(s.what.split()[-2])]


def protected(spec, program) -> list[Span]:
    """The program's code and read-only data: never writable, even inside a scratch region (an
    image region that also holds .data), so self-modifying code is caught."""
    return [s for s in _sections(spec, program) if _read_only(s.what.split()[-2])]


def _sections(spec, program) -> list[Span]:
    out = []
    for sec in (program.sections.values() if program is not None else ()):
        hit = _memory_at(spec, sec.base, len(sec.data)) if sec.data else None
        if hit:
            out.append(Span(hit[0], hit[1], hit[1] + len(sec.data), f"the program's {sec.name} section"))
    return out


def _read_only(section: str) -> bool:
    return section.startswith((".text", ".rodata", ".srodata"))


def _memory_at(spec, address: int, size: int) -> Optional[tuple[str, int]]:
    """(memory, element index) of a byte address in a byte memory with a base, else None."""
    for m in spec.isa.memories:
        if m.base is None or spec.types[m.name].bits != 8:
            continue
        base, n = spec.params_eval(m.base), spec.params_eval(m.size)
        if base <= address and address + size <= base + n:
            return m.name, address - base
    return None


def statement_lines(spec, lay) -> list[str]:
    """The statement's rule on memory, naming every scratch region."""
    spans = scratch(spec, lay)
    where = "; ".join(f"{s.memory}[{_addr(spec, s.memory, s.lo)}..{_addr(spec, s.memory, s.hi)}) {s.what}"
                      for s in spans) or "none"
    kept = ir.name_ranges(spec.isa.abi.preserve) if spec.isa.abi is not None else ""
    return ["Memory integrity: after the kernel ends, every byte of every memory outside the outputs, the "
            "scratch regions below and the program's own .data/.bss must hold what it held at the start (inputs "
            "included; code is never written); a kernel that writes anywhere else fails"
            + (f", and so does one that ends with a register the ABI preserves changed ({kept})" if kept else "")
            + ". Scratch: " + where + "."]


def _addr(spec, memory: str, index: int) -> str:
    """How the kernel addresses element `index` of `memory` (its base plus the byte offset)."""
    m = next(m for m in spec.isa.memories if m.name == memory)
    if m.base is None:
        return str(index)
    return hex(spec.params_eval(m.base) + index * spec.types[m.name].bits // 8)


# ---- the check ------------------------------------------------------------------------------------
class Snapshot:
    """The memories (and preserved registers) as a trial starts."""

    def __init__(self, sim, memories: list[str], preserved: list[tuple[str, str, int]]):
        self.blocks: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        for name in memories:
            rows = blocks(sim.arrays[name])
            held = np.flatnonzero(nonzero(rows))
            self.blocks[name] = (held, rows[held].copy())
        self.registers = {reg: _reg_bits(sim, file, index) for reg, file, index in preserved}


def blocks(arr: np.ndarray) -> np.ndarray:
    """A memory's bytes as rows of BLOCK (or one row when it is not a multiple of BLOCK)."""
    b = arr.reshape(-1).view(np.uint8)
    return b.reshape(-1, BLOCK) if b.size % BLOCK == 0 else b.reshape(1, -1)


def nonzero(rows: np.ndarray) -> np.ndarray:
    """Which rows hold a nonzero byte (OR-reduced as 64-bit words where they divide evenly: faster)."""
    if rows.shape[1] % 8 == 0:
        return np.bitwise_or.reduce(rows.view(np.uint64), axis=1) != 0
    return rows.any(axis=1)


def _reg_bits(sim, file: str, index: int) -> bytes:
    return sim.arrays[file][index:index + 1].tobytes()


def memories(spec) -> list[str]:
    return [m.name for m in spec.isa.memories]


def preserved(spec) -> list[tuple[str, str, int]]:
    """(name, register file, index) of every register the ABI says a kernel must preserve."""
    return spec.preserved_registers()


def check(spec, sim, snap: Snapshot, allowed: list[Span], task, lay, locked: list[Span] = ()) -> Optional[str]:
    """None when the kernel changed only what it may (`allowed`, less the `locked` spans: its own code);
    else the diagnosis of the first violation."""
    for reg, file, index in preserved(spec):
        if _reg_bits(sim, file, index) != snap.registers[reg]:
            return (f"the kernel returned with {reg} changed: the ABI says a kernel preserves it (callee-saved; "
                    "save and restore it, e.g. on the stack)")
    for name, (held, copy) in snap.blocks.items():
        arr = sim.arrays[name]
        rows = blocks(arr)
        changed = nonzero(rows)
        changed[held] = nonzero(rows[held] ^ copy)
        idx = np.flatnonzero(changed)
        if not idx.size:
            continue
        item, width = arr.dtype.itemsize, rows.shape[1]
        free = [(s.lo * item, s.hi * item) for s in allowed if s.memory == name]
        code = [(s.lo * item, s.hi * item) for s in locked if s.memory == name]
        bad = []
        for i in idx:
            lo, hi = int(i) * width, (int(i) + 1) * width
            if any(a <= lo and hi <= b for a, b in free) and not any(a < hi and lo < b for a, b in code):
                continue  # a block wholly inside one writable span
            k = np.searchsorted(held, i)
            diff = rows[i] != (copy[k] if k < held.size and held[k] == i else 0)
            keep = diff.copy()
            for a, b in free:
                keep[max(a - lo, 0):max(min(b - lo, width), 0)] = False
            for a, b in code:
                span = slice(max(a - lo, 0), max(min(b - lo, width), 0))
                keep[span] = diff[span]
            bad.append(np.flatnonzero(keep) + lo)
        bad = np.concatenate(bad) if bad else np.zeros(0, np.int64)
        if bad.size:
            return _diagnosis(spec, name, bad, item, task, lay, locked)
    return None


def _diagnosis(spec, memory: str, bad: np.ndarray, item: int, task, lay, locked) -> str:
    first = int(bad[0]) // item
    count = len(np.unique(bad // item))
    unit = "bytes" if item == 1 else "elements"
    where = next((s.what for s in locked if s.memory == memory and s.lo <= first < s.hi), None) or \
        _where(spec, task, lay, memory, first)
    return (f"memory integrity: the kernel changed {count} {unit if count != 1 else unit[:-1]} of {memory} it may not, "
            f"from {_addr(spec, memory, first)} ({where}); it may write only its outputs, the scratch regions and "
            "its own .data/.bss")


def _where(spec, task, lay, memory: str, index: int) -> str:
    """The first violation's place in the statement's words."""
    for t in task.inputs:
        s = lay.extent(spec, t.name)
        if s.memory == memory and s.lo <= index < s.hi:
            return f"input {t.name}"
    region = next((s for role in ("in", "out", "inout", "scratch") for s in regions(spec, role)
                   if s.memory == memory and s.lo <= index < s.hi), None)
    ends = [(s.hi, t.name) for t in task.outputs for s in [lay.extent(spec, t.name)]
            if s.memory == memory and s.hi <= index and (region is None or region.lo <= s.lo < region.hi)]
    if ends:
        hi, t = max(ends)
        return f"{(index - hi) * spec.types[memory].bits // 8} bytes past the end of output {t}"
    if region is not None:
        return f"the ABI's region {region.what.split(':')[0]}"
    return "outside every region the ABI declares"
