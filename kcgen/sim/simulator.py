"""The Python face of a compiled simulator: load a program, run it, look at the machine.

    sim = Simulator(spec)            # builds (or reuses) the C simulator of the ISA
    sim.load(program)                # a kcgen.asm Program
    sim.mem("vsram")[:64] = x        # numpy views, zero-copy (bf16 as ml_dtypes.bfloat16)
    result = sim.run(max_steps=10**7, seconds=5.0)   # step budget, and a wall-clock limit
    result.status, result.cycles, result.trap

All storage is numpy arrays (kcgen.sim.layout) that the C code reads and writes through
pointers; `arrays` holds them in their storage dtypes, the same dict the reference interpreter
and the example runner use.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Optional

import cffi
import numpy as np

from isadl.check import Spec

from . import abi
from .build import Built, build
from .cgen import BLOCK_SHIFT, STATUS
from .layout import Layout, layout

_STATUS_NAMES = {v: k for k, v in STATUS.items()}
_TRAP_NAMES = {0: "none", 1: "require", 2: "illegal", 3: "memory", 4: "misaligned", 5: "budget", 6: "user",
               7: "arith", 8: "pc", 9: "timeout"}
_MAX_WALL_NS = 1 << 62
_LIBS: dict[str, tuple] = {}  # library path -> (ffi, lib): dlopen once per process


class LoadError(Exception):
    """A program that cannot be placed in this machine's memories."""


@dataclass
class Trap:
    pc: int
    kind: str
    message: str
    line: Optional[int] = None  # source line of the instruction, when the program has a source map
    text: str = ""  # the instruction, disassembled

    def __str__(self) -> str:
        where = f"line {self.line}: " if self.line else ""
        insn = f" ({self.text})" if self.text else ""
        return f"{where}pc {self.pc:#x}{insn}: {self.message}"


@dataclass
class TraceEntry:
    pc: int
    text: str  # the instruction, disassembled
    line: Optional[int]  # its source line
    writes: list[tuple[str, tuple, object]]  # (register/state/memory, index, new value) it changed

    def __str__(self) -> str:
        shown = " ".join(f"{n}{list(i) if i else ''}={v}" for n, i, v in self.writes)
        return f"{self.pc:#010x}  {self.text:<32} line {self.line or '?':<5} {shown}".rstrip()


@dataclass
class RunResult:
    status: str  # 'halted' | 'trap' | 'budget' | 'timeout' (the wall-clock limit passed; trap says so)
    cycles: Optional[int]  # None when the run, or an earlier one since the reset, was untimed
    instret: int
    trap: Optional[Trap] = None
    counts: dict[str, int] = field(default_factory=dict)  # retired operations per instruction name
    unit_busy: dict[str, int] = field(default_factory=dict)  # cycles each unit was occupied
    trace: list[TraceEntry] = field(default_factory=list)  # with run(trace=True)


def _open(built: Built):
    key = str(built.library)
    if key not in _LIBS:
        ffi = cffi.FFI()
        ffi.cdef(built.cdef)
        _LIBS[key] = (ffi, ffi.dlopen(key))
    return _LIBS[key]


class Simulator:
    def __init__(self, spec: Spec, built: Optional[Built] = None):
        self.spec = spec
        self.layout: Layout = layout(spec)
        self.built = built or build(spec)
        self.meta = self.built.meta
        self.ffi, self.lib = _open(self.built)
        P = self.meta["prefix"]
        self._run = getattr(self.lib, f"{P}_run")
        self._predecode = getattr(self.lib, f"{P}_predecode")
        if self.ffi.sizeof(f"{P}_state") != getattr(self.lib, f"{P}_layout_size")():
            raise RuntimeError(f"{self.built.library}: the state struct does not match its cdef (a kcgen bug)")
        self.s = self.ffi.new(f"{P}_state *")
        self.arrays: dict[str, np.ndarray] = self.layout.allocate()
        self._keep = []  # buffers the C side points into
        self._timing = []  # ready times and counters: cleared by reset()
        self._timed_since_reset = True  # cycles mean something only if every run since reset() was timed
        for name, st in self.layout.stores.items():
            self._bind(st.cname, self.arrays[name], f"{st.elem.ctype} *")
            if st.kind in ("reg", "state"):
                self._bind_timing(f"rdy_{name}", max(st.shape[0] if st.kind == "reg" else 1, 1))
        for m in self.meta["tracked"]:
            self._bind_timing(f"b_{m}", (self.layout.stores[m].shape[0] >> BLOCK_SHIFT) + 1)
        self.counts = self._bind_timing("counts", len(self.meta["ops"]))
        self.unit_busy = self._bind_timing("unit_busy", max(len(self.meta["units"]), 1))
        self.unit_free = self._bind_timing("unit_free", max(sum(self.meta["unit_copies"]), 1))
        self._bind_timing("rob", self.meta["rob"])
        self._bind_timing("queue", max(sum(self.meta["unit_copies"]), 1) * 64)
        self._bind_timing("qhead", max(len(self.meta["units"]), 1))
        self._tstate = self._bind_timing("tstate", self.meta.get("tstate", 1))
        self.program = None
        self._disasm = None

    def _bind(self, fieldname: str, arr: np.ndarray, ctype: str = "uint64_t *") -> None:
        self._keep.append(arr)
        setattr(self.s, fieldname, self.ffi.cast(ctype, self.ffi.from_buffer(arr)))

    def _bind_timing(self, fieldname: str, n: int) -> np.ndarray:
        arr = np.zeros(n, np.uint64)
        self._timing.append(arr)
        self._bind(fieldname, arr)
        return arr

    # ---- machine state ----------------------------------------------------------------------------------
    @property
    def pc(self) -> int:
        return int(self.s.pc)

    @pc.setter
    def pc(self, value: int) -> None:
        self.s.pc = value

    def view(self, name: str) -> np.ndarray:
        """A register file, state item or memory as a numpy array of its element type (zero-copy)."""
        return self.layout.stores[name].numpy_view(self.arrays[name])

    mem = reg = state = view

    # ---- programs ---------------------------------------------------------------------------------------
    def load(self, program) -> None:
        """Place the program's sections, decode its text once, reset pc, counters and timing."""
        self.program = program
        self._disasm = None
        text = program.sections[".text"]
        for sec in program.sections.values():
            if not sec.data:
                continue
            mem = self._memory_for(sec.base, len(sec.data))
            if mem is None:
                if sec.name == ".text":
                    continue  # an instruction store outside data memory (PLENA)
                raise LoadError(f"section {sec.name} at {sec.base:#x}..{sec.end:#x} is outside every "
                                f"byte-addressed memory of {self.spec.isa.name}")
            st = self.layout.stores[mem]
            self.arrays[mem][sec.base - st.base:sec.end - st.base] = np.frombuffer(bytes(sec.data), np.uint8)
        data = bytes(text.data)
        granule = self.meta["granule"]
        n = max(len(data) // granule + 1, 1)
        self._ops = self.ffi.new(f"{self.meta['prefix']}_op[]", n * self.meta["max_slots"] + 1)
        self._index = np.zeros(n, np.int64)
        self._text = self.ffi.from_buffer(data)
        self.s.ops = self._ops
        self.s.index = self.ffi.cast("int64_t *", self.ffi.from_buffer(self._index))
        self._keep += [self._index, data]
        self._predecode(self.s, self._text, len(data), text.base)
        abi.apply(self.spec, self.arrays, program)  # the kernel ABI's start state (stack, return address)
        self.reset(program.entry)

    def reset(self, pc: int, warm: bool = False) -> None:
        """Start over at pc: counters and timing cleared, storage kept. `warm`: the caches and the branch
        predictor keep what they hold (a microbenchmark's second run measures the steady state)."""
        s = self.s
        kept = [(off, self._tstate[off:off + n].copy()) for off, n in self.meta.get("tstate_keep", [])] if warm else []
        s.pc = pc
        s.cycles = s.instret = s.now = s.horizon = s.nissued = 0
        s.t_dispatched = s.t_retire = s.t_retired = 0
        s.status = s.halted = 0
        s.trap.kind = 0
        if self.meta.get("delay_slots"):
            s.br_left = 0  # no jump waiting for its delay slots
        if self.meta.get("exposed"):
            s.x_n = s.x_clock = 0  # no result in flight: every value slot free
            s.x_due = 2 ** 64 - 1
            s.x_slot[0:self.meta["x_depth"]] = list(range(self.meta["x_depth"]))
        for arr in self._timing:
            arr[...] = 0
        for off, words in kept:
            self._tstate[off:off + len(words)] = words
        self._timed_since_reset = True

    def structure_stats(self) -> dict:
        """Since the last reset: per cache its accesses and misses; the predictor's control transfers,
        mispredictions and BTB misses (empty when the timing section declares none)."""
        st = self.meta.get("structures") or {}
        t = self._tstate
        out = {"caches": {name: {"accesses": int(t[off]), "misses": int(t[off + 1])}
                          for name, off in (st.get("caches") or {}).items()}}
        if st.get("predictor") is not None:
            off = st["predictor"]
            out["predictor"] = {"branches": int(t[off]), "mispredicts": int(t[off + 1]), "btb_misses": int(t[off + 2])}
        return out

    def _memory_for(self, base: int, size: int) -> Optional[str]:
        for name, st in self.layout.stores.items():
            if st.kind == "mem" and st.placed and st.elem.dtype == np.uint8 and st.base <= base and \
                    base + size <= st.base + st.shape[0]:
                return name
        return None

    def run(self, max_steps: int = 10_000_000, trace: bool = False, timed: bool = True,
            seconds: Optional[float] = None) -> RunResult:
        """Run until halt, trap or `max_steps` instructions (bundles). With trace=True the machine is
        single-stepped and every step records what it wrote (memories over 1 Mi elements are not
        watched); use it for debugging, not for speed. With timed=False the timing model is off:
        the same state, trap and instruction counts (semantics never read timing), no cycles or
        unit times, several times faster (a correctness-only run).

        `seconds` (> 0) limits the run's wall-clock time besides the step budget: once it has
        passed the run stops with status 'timeout' and a trap of kind 'timeout' ("wall-clock limit
        of 2 s exceeded") at the pc of the next instruction, or of the instruction whose long loop
        it interrupted (left half done, not retired). The C run loop reads the clock every
        `meta["poll_steps"]` instructions and long instruction loops every few million
        iterations, so a run stops within milliseconds of the limit; a run that ends before it
        is exactly the run without a limit (state, cycles, counts)."""
        if self.program is None:
            raise RuntimeError("load a program first")
        wall_ns = _wall_ns(seconds)
        if trace:
            return self._traced(max_steps, seconds)
        before = self.counts.copy()
        busy_before = self.unit_busy.copy()
        self.s.untimed = int(not timed)
        self._timed_since_reset = self._timed_since_reset and timed
        self.s.wall_ns = wall_ns
        try:
            code = self._run(self.s, max_steps)
        finally:
            self.s.wall_ns = 0
        s = self.s
        trap = None
        if code in (STATUS["trap"], STATUS["timeout"]):
            pc = int(s.trap.pc)
            trap = Trap(pc, _TRAP_NAMES.get(int(s.trap.kind), "?"), self.ffi.string(s.trap.message).decode(),
                        self.program.source_line(pc), self._text_at(pc))
        names = self.meta["ops"]
        counts = {names[i]: int(c) for i, c in enumerate(self.counts - before) if c}
        if not self._timed_since_reset:
            return RunResult(_STATUS_NAMES[code], None, int(s.instret), trap, counts, {})
        busy = self._busy(self.counts - before, self.unit_busy - busy_before)
        return RunResult(_STATUS_NAMES[code], int(s.cycles), int(s.instret), trap, counts, busy)

    def _traced(self, max_steps: int, seconds: Optional[float] = None) -> RunResult:
        watched = [n for n, st in self.layout.stores.items() if st.kind != "mem" or st.count <= (1 << 20)]
        entries = []
        start_counts, start_busy = self.counts.copy(), self.unit_busy.copy()
        result = None
        deadline = None if seconds is None else time.monotonic() + seconds
        for _ in range(max_steps):
            if deadline is not None and time.monotonic() >= deadline:
                pc = self.pc
                result = RunResult("timeout", result.cycles if result else None, int(self.s.instret),
                                   Trap(pc, "timeout", f"wall-clock limit of {seconds:g} s exceeded",
                                        self.program.source_line(pc), self._text_at(pc)))
                break
            left = None if deadline is None else max(deadline - time.monotonic(), 1e-9)
            before = {n: self.arrays[n].copy() for n in watched}
            pc = self.pc
            retired = int(self.s.instret)
            result = self.run(1, seconds=left)
            if result.status == "halted" and int(self.s.instret) == retired:
                break  # ran off the end of the program: nothing executed
            writes = []
            for n in watched:
                view = self.view(n)
                for idx in np.argwhere(self.arrays[n] != before[n]):
                    i = tuple(int(k) for k in idx)
                    v = view[i]
                    writes.append((n, i, float(v) if isinstance(v, np.floating) or view.dtype.kind == "V" else
                                   (int(v) if np.ndim(v) == 0 and view.dtype.kind in "iub" else v)))
            entries.append(TraceEntry(pc, self._text_at(pc), self.program.source_line(pc), writes))
            if result.status != "budget":
                break
        names = self.meta["ops"]
        result.counts = {names[i]: int(c) for i, c in enumerate(self.counts - start_counts) if c}
        result.unit_busy = self._busy(self.counts - start_counts, self.unit_busy - start_busy)
        result.trace = entries
        return result

    def _busy(self, counts: np.ndarray, dynamic: np.ndarray) -> dict[str, int]:
        """Cycles each unit was occupied: counts x constant cycles, plus what the loop counted."""
        busy = [int(b) for b in dynamic[:len(self.meta["units"])]]
        for (unit, cycles), n in zip(self.meta["static_busy"], counts):
            if unit >= 0 and n:
                busy[unit] += int(n) * cycles
        return dict(zip(self.meta["units"], busy))

    def _text_at(self, pc: int) -> str:
        from kcgen.asm.disassembler import Disassembler
        if self._disasm is None:
            self._disasm = Disassembler(self.spec)
        text = self.program.sections[".text"]
        if not text.base <= pc < text.end:
            return ""
        d = self._disasm.decode_at(bytes(text.data), pc - text.base, pc)
        return self._disasm.text(d, {})


def _wall_ns(seconds: Optional[float]) -> int:
    """A run's wall-clock limit in ns for the C side (0: none)."""
    if seconds is None:
        return 0
    if not seconds > 0:  # also NaN
        raise ValueError(f"seconds must be a positive number of seconds, not {seconds!r}")
    return min(max(int(seconds * 1e9), 1), _MAX_WALL_NS)
