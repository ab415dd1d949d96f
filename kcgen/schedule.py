"""`kcgen schedule`: pack a VLIW program into bundles and software-pipeline its counted inner loops,
driven only by the checked Spec (slots, bundle formats, latencies and the instructions' semantics).

    from kcgen.schedule import schedule
    text = schedule(spec, text)            # assembly in, assembly out (same labels, .data untouched)

What it does, as a compiler's post-RA scheduler would (details and limits: docs/schedule.md):

* Operations: every slot operation of the program (lines that are bundles already are split into
  their operations in the bundle format's slot order, the order the simulator runs them in).
  Each operation's register reads and writes come from its instruction's semantics: `FILE[e]`
  with `e` evaluated on the operand values (a computed index the operands do not decide, such
  as a loop variable, stands for the whole file), register groups as their parts, state items,
  and memories (loads, stores). An instruction that writes `pc` or halts is control.
* Latencies: a result written through `FILE[operand]` is ready `latency` cycles after its bundle
  issues (the instruction's `latency`, default `cycles`); one written through a computed index
  (the post-modified pointer of a load, `p[ptr & 7] = ...`) is not tracked by the timing model and
  is ready in the next bundle. Dependences: read after write (the producer's latency), write after
  read (a later bundle), write after write (a later bundle, and the second result lands after the
  first), memory (each memory one unit: stores stay ordered against its loads and stores, loads may
  pass loads). No read is ever scheduled before its producer's latency has elapsed (empty bundles
  are added where nothing else can wait), so the result does not rely on the simulator's
  interlocks. What a region leaves in flight constrains the code after it and the labels its branch
  names (per label, to a fixed point over the program); where the ways into a label are not all
  known (address-taken labels, indirect jumps), before pipelined loops and at halts, everything
  in flight is waited for.
* Regions: straight-line code between labels, control operations and directives. Each is list
  scheduled (critical-path priority, cycle by cycle, every bundle legal: at most one operation
  per slot and a bundle format that holds the slots together). An operation may move to another
  slot when an instruction with the same semantics and syntax exists there (vlda -> vldb).
* Delay slots (timing vliw delay_slots = N): the N bundles written after a jump are its delay slots
  and part of its region; the jump is a node of the region's dependence graph in its program
  position, and the region ends exactly N bundles after it, so what is placed below it (operations
  of the region that may run on both paths, else nops) fills its delay slots; no jump is ever in
  another's. A program with a label, directive, halt or jump in delay slots, or that sets the
  zero-overhead-loop registers (hwloop registers), is returned as written.
* Loops: a region that starts at a label and ends with a conditional branch back to it (the label
  referenced nowhere else), whose counter is updated by one operation that reads nothing but the
  counter, is modulo scheduled: the initiation interval II is searched upward from
  max(resource bound, recurrence bound); the counter update is kept in stage 0 and the branch in
  the kernel's last bundle before its delay slots, so the loop's own counter runs the kernel n - S + 1 times for n
  iterations and S stages (prologue: the first S - 1 stages, epilogue: the last; with N delay slots
  the branch sits N bundles before the kernel's end, so II > N). Pipelining needs
  n >= S, checked by running the counter's initialisation, update and branch through the
  reference interpreter (kcgen.sim.pyref); otherwise, or when the kernel is no shorter than the
  list-scheduled body, the loop keeps its body, list scheduled.
"""
from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from typing import Optional

from isadl import ir
from isadl.check import Spec
from isadl.params import compile_expr

from .asm.assembler import Assembler, AsmError, _split_top
from .sim.hazards import exposed

__all__ = ["schedule", "Machine", "Op", "ScheduleError", "list_schedule", "modulo_schedule", "dependences",
           "res_mii", "rec_mii"]


_IDENT = re.compile(r"(?<![\w.$])[A-Za-z_.$][\w.$]*")


class ScheduleError(ValueError):
    """The program or the ISA cannot be scheduled (not a VLIW description, an unparsable line)."""


# ---- per-ISA tables ---------------------------------------------------------------------------------------

def _shape(x):
    """A structural key of IR, without source locations and require/trap messages."""
    if isinstance(x, (ir.Require, ir.Trap)):
        return (type(x).__name__, _shape(getattr(x, "cond", None)))
    if dataclasses.is_dataclass(x):
        return (type(x).__name__,) + tuple(_shape(getattr(x, f.name)) for f in dataclasses.fields(x)
                                            if "loc" not in f.name)
    if isinstance(x, tuple):
        return tuple(_shape(v) for v in x)
    return x


@dataclass
class _Access:
    mode: str  # "r" | "w"
    kind: str  # "reg" | "state" | "mem"
    name: str
    index: Optional[object] = None  # compiled index expression (env -> int), or None: the whole file
    tracked: bool = False  # written through FILE[operand]: ready after the latency


@dataclass
class Op:
    """One slot operation."""
    text: str  # as written (one operation, no separator)
    name: str  # instruction name
    slot: str
    reads: frozenset  # atoms: ("file", index) of base register files, ("state", name), ...
    writes: dict  # atom -> cycles until readable by a later bundle
    mem_read: bool = False
    mem_write: bool = False
    control: bool = False
    alts: tuple = ()  # ((name, slot, text), ...): the same operation in other slots
    values: dict = field(default_factory=dict)

    def latency(self) -> int:
        return max(self.writes.values(), default=1)


class Machine:
    """What the scheduler knows of a VLIW ISA, read from its checked Spec."""

    def __init__(self, spec: Spec):
        isa = spec.isa
        if isa.timing is None or isa.timing.model != "vliw" or not isa.slots:
            raise ScheduleError(f"{isa.name}: not a VLIW description (timing vliw with slots)")
        self.spec = spec
        self.asm = Assembler(spec)
        self.sep = self.asm.bundle_sep or ";"
        self.comments = self.asm.comments
        self.formats = [frozenset(f.fields) & {s.name for s in isa.slots} for f in self.asm.bundles]
        self.formats = [f for f in self.formats if f]
        self._fits: dict[frozenset, bool] = {}
        self.slots = [s.name for s in isa.slots]
        self.slot_order = {}  # slot -> position in the widest format holding it (execution order)
        for f in self.asm.bundles:
            for k, name in enumerate(f.fields):
                self.slot_order.setdefault(name, k)
        self.conflicts = {s: {t for t in self.slots if t != s and not self.fits(frozenset((s, t)))} for s in self.slots}
        self.files = {rf.name: rf for rf in isa.regfiles}
        self.states = {st.name for st in isa.states}
        self.mems = {m.name for m in isa.memories}
        self.functions = {f.name: f for f in isa.functions}
        self.params = dict(spec.params)
        self._parts: dict[tuple, tuple] = {}
        self.access = {name: self._accesses(s.insn, s.operands) for name, s in spec.instructions.items()}
        self.lat = {}
        for name, s in spec.instructions.items():
            e = s.insn.latency if s.insn.latency is not None else s.insn.cycles
            self.lat[name] = compile_expr(e, self.params) if e is not None else (lambda env: 1)
        hw = isa.hwloop
        self.hwloop = ({hw.start, hw.end} - {""}) if hw else set()  # instruction-delimited loops (PLENA)
        self.hwloop_regs = set(hw.registers) if hw is not None and hw.registers else set()  # (AIE)
        self.halting = {name for name, s in spec.instructions.items()
                        if any(isinstance(st, ir.Halt) for st in ir.statements(s.insn.semantics))}
        # timing vliw { delay_slots = N }: a pc write lands after the N bundles that follow it
        self.delay = int(next((spec.params_eval(p.value) for p in isa.timing.props if p.name == "delay_slots"), 0))
        self.empty = {name for name, s in spec.instructions.items()
                      if not list(ir.statements(s.insn.semantics))}  # nops: dropped, the schedule re-pads
        self.alts = self._alternatives()
        nops = [(s.nop, s.name) for s in isa.slots if s.nop]
        self.nop = None
        for mnemonic, slot in sorted(nops, key=lambda p: min((f.width for f in self.asm.bundles
                                                              if p[1] in f.fields), default=1 << 30)):
            self.nop = mnemonic
            break
        self._ref = None

    def delay_of(self, op: "Op") -> int:
        """The delay slots after control operation `op` (0 for a halt and a hardware-loop instruction)."""
        return 0 if op.name in self.halting or op.name in self.hwloop else self.delay

    def fits(self, slots: frozenset) -> bool:
        got = self._fits.get(slots)
        if got is None:
            got = self._fits[slots] = any(slots <= f for f in self.formats)
        return got

    # -- semantics -> accesses
    def _accesses(self, insn: ir.Instruction, operands: dict) -> tuple[list, bool]:
        out: list[_Access] = []
        control = [False]
        params = self.params

        def index_of(e):
            try:
                return compile_expr(e, params)
            except Exception:
                return None

        def reg(mode, root: str, path, ops_known=True, tracked=False):
            if root in self.files:
                ix = index_of(path[0]) if path and ops_known else None
                out.append(_Access(mode, "reg", root, ix, tracked))
            elif root in self.states:
                out.append(_Access(mode, "state", root))
            elif root in self.mems:
                out.append(_Access(mode, "mem", root))

        def expr(e, in_fn=False):
            if isinstance(e, ir.Index):
                root, path = ir.index_path(e)
                if isinstance(root, ir.Name):
                    reg("r", root.id, path, not in_fn)
                    for p in path:
                        expr(p, in_fn)
                    return
            if isinstance(e, ir.Name):
                if e.id in self.files or e.id in self.states or e.id in self.mems:
                    reg("r", e.id, [])
                return
            if isinstance(e, ir.Call):
                if e.func == "load" and e.args and isinstance(e.args[0], ir.Name):
                    out.append(_Access("r", "mem", e.args[0].id))
                if e.func in self.functions:
                    expr(self.functions[e.func].body, True)
            if dataclasses.is_dataclass(e):
                for f in dataclasses.fields(e):
                    v = getattr(e, f.name)
                    for c in (v if isinstance(v, tuple) else (v,)):
                        if dataclasses.is_dataclass(c) and not isinstance(c, (ir.Loc, ir.TypeRef)):
                            expr(c, in_fn)

        for s in ir.statements(insn.semantics):  # (nested bodies included)
            if isinstance(s, ir.Assign):
                root, path = ir.index_path(s.target)
                if isinstance(root, ir.Name):
                    if root.id == "pc":
                        control[0] = True
                    tracked = bool(path) and isinstance(path[0], ir.Name) and path[0].id in operands
                    reg("w", root.id, path, True, tracked)
                    for p in path:
                        expr(p)
                expr(s.value)
            elif isinstance(s, (ir.Let, ir.Require, ir.If)):
                expr(s.cond if isinstance(s, (ir.Require, ir.If)) else s.value)
            elif isinstance(s, ir.For):
                expr(s.lo)
                expr(s.hi)
            elif isinstance(s, ir.Halt):
                control[0] = True
            elif isinstance(s, ir.CallStmt):
                c = s.call
                if c.func == "store" and c.args and isinstance(c.args[0], ir.Name):
                    out.append(_Access("w", "mem", c.args[0].id))
                    for a in c.args[1:]:
                        expr(a)
                else:
                    expr(c)
        return out, control[0]

    def parts(self, file: str, idx: Optional[int]) -> tuple:
        """The base-register atoms of FILE[idx] (idx None: every register of the file)."""
        key = (file, idx)
        got = self._parts.get(key)
        if got is not None:
            return got
        rf = self.files[file]
        count = self.spec.params_eval(rf.count)
        idxs = range(count) if idx is None or not 0 <= idx < count else (idx,)
        atoms = []
        for n in idxs:
            if rf.group:
                for g in rf.group:
                    root, path = ir.index_path(g)
                    sub = compile_expr(path[0], self.params)({"n": n})
                    atoms.extend(self.parts(root.id, sub))
            else:
                atoms.append((file, n))
        got = self._parts[key] = tuple(dict.fromkeys(atoms))
        return got

    def _alternatives(self) -> dict:
        """name -> [other instruction names with the same semantics, operands and syntax in another slot]."""
        by_key: dict = {}
        for name, s in self.spec.instructions.items():
            rest = tuple(p.name if hasattr(p, "name") else p for p in s.template.parts)
            ops = tuple((o.name, o.kind, o.regfile) for o in s.operands.values())
            key = (_shape(s.insn.semantics), rest, ops)
            by_key.setdefault(key, []).append(name)
        out = {}
        for names in by_key.values():
            for n in names:
                out[n] = [m for m in names if m != n and self.spec.instructions[m].insn.slot
                          != self.spec.instructions[n].insn.slot]
        return out

    # -- one operation
    def op(self, name: str, values: dict, text: str) -> Op:
        s = self.spec.instructions[name]
        accesses, control = self.access[name]
        env = dict(values)
        try:
            lat = int(self.lat[name](env))
        except Exception as exc:
            raise ScheduleError(f"{text}: the latency of {name} depends on machine state") from exc
        lat = max(lat, 1)
        reads, writes = set(), {}
        mem_r = mem_w = False
        for a in accesses:
            if a.kind == "mem":  # a memory is one unit: loads pass loads, stores keep their place
                if a.mode == "r":
                    mem_r = True
                    reads.add(("mem", a.name))
                else:
                    mem_w = True
                    writes[("mem", a.name)] = 1
                continue
            if a.kind == "state":
                atoms = (("state", a.name),)
            else:
                idx = None
                if a.index is not None:
                    try:
                        idx = int(a.index(env))
                    except Exception:
                        idx = None
                atoms = self.parts(a.name, idx)
            if a.mode == "r":
                reads.update(atoms)
            else:
                for at in atoms:
                    writes[at] = max(writes.get(at, 1), lat if a.tracked else 1)
        alts = []
        mnemonic = s.template.mnemonic
        # (an operand written as a symbol may change value when the code around it changes size: keep
        # such an operation where it is, its immediate range is the one the author checked)
        symbolic = any(self.asm._norm(w) not in self.asm.regnames
                       for w in _IDENT.findall(text[len(mnemonic):]))
        for other in () if symbolic else self.alts.get(name, ()):
            o = self.spec.instructions[other]
            ok = all(spec.kind != "imm" or (isinstance(values.get(k), int) and spec.lo <= values[k] <= spec.hi)
                     for k, spec in o.operands.items())
            if ok and text.startswith(mnemonic):
                alts.append((other, o.insn.slot, o.template.mnemonic + text[len(mnemonic):]))
        return Op(text, name, s.insn.slot, frozenset(reads), writes, mem_r, mem_w,
                  control or name in self.hwloop, tuple(alts), dict(values))

    def reference(self):
        if self._ref is None:
            from .sim.pyref import RefMachine
            self._ref = RefMachine(self.spec)
        return self._ref


_MACHINES: dict[int, Machine] = {}


def machine(spec: Spec) -> Machine:
    """The Machine of `spec`, built once per Spec object (a Spec is not hashable: kept by identity)."""
    m = _MACHINES.get(id(spec))
    if m is None or m.spec is not spec:
        if len(_MACHINES) >= 8:
            _MACHINES.pop(next(iter(_MACHINES)))
        m = _MACHINES[id(spec)] = Machine(spec)
    return m


# ---- dependences ------------------------------------------------------------------------------------------

def dependences(ops: list[Op], loop: bool = False) -> list[tuple[int, int, int, int]]:
    """Edges (u, v, latency, distance): v issues at least `latency` bundles after u (of `distance`
    iterations earlier). loop: also the loop-carried edges (distance 1) of running `ops` twice."""
    n = len(ops)
    edges: dict[tuple[int, int, int], int] = {}
    last_w: dict = {}  # atom -> (op index, pass)
    readers: dict = {}  # atom -> [(op index, pass)] since its last write

    def add(u, up, v, vp, lat):
        d = vp - up
        key = (u, v, d)
        if d == 0 and u >= v:
            return
        if edges.get(key, -1 << 30) < lat:
            edges[key] = lat
    for p in range(2 if loop else 1):
        for v, op in enumerate(ops):
            for at in op.reads:
                w = last_w.get(at)
                if w is not None:
                    add(w[0], w[1], v, p, ops[w[0]].writes[at])
            for at, lat in op.writes.items():
                w = last_w.get(at)
                if w is not None:
                    add(w[0], w[1], v, p, max(1, ops[w[0]].writes[at] - lat + 1))
                for r in readers.get(at, ()):
                    add(r[0], r[1], v, p, 1)
            for at in op.reads:
                readers.setdefault(at, []).append((v, p))
            for at in op.writes:
                last_w[at] = (v, p)
                readers[at] = []
    return [(u, v, lat, d) for (u, v, d), lat in edges.items() if not (u == v and d == 0) and u < n]


# ---- list scheduling --------------------------------------------------------------------------------------

def _place_ok(m: Machine, used: set, slot: str) -> bool:
    return slot not in used and m.fits(frozenset(used | {slot}))


class _Unschedulable(Exception):
    """A program this scheduler keeps as written (a label or a directive in a jump's delay slots,
    a jump there, hardware loops, a region whose delay slots cannot hold what must follow the jump)."""


def list_schedule(m: Machine, ops: list[Op], control: Optional[Op] = None, after=()) -> list[list[str]]:
    """Bundles for a straight-line region `ops` (in program order), then `control` (a branch, followed by
    exactly its delay slots, or a halt alone after everything) and `after` (the operations written in the
    branch's delay slots): every dependence kept, every result ready when the region ends."""
    return _list(m, ops, control, after=after)[0]


def _list(m: Machine, ops: list[Op], control: Optional[Op] = None, entry: Optional[dict] = None,
          drain: bool = True, after=()) -> tuple[list[list[str]], dict]:
    """list_schedule, with `entry` (unit -> cycle, from the region's start, at which a result still in
    flight from before becomes ready) and, drain=False, results allowed to be in flight at the end:
    returns the bundles and what is in flight after them (unit -> cycles until ready).

    A jump (control that is not a halt) is a node of the dependence graph in its program position
    (after `ops`, before `after`); the region ends exactly m.delay_of(jump) bundles after it, so the
    operations placed below it are its delay slots (they run on both paths, before the target)."""
    entry = entry or {}
    after = list(after)
    halt = control is not None and control.name in m.halting
    if halt and after:
        raise _Unschedulable("operations after a halt")
    nodes = ops + ([control] if control is not None and not halt else []) + after
    D = m.delay_of(control) if control is not None and not halt else 0
    c = len(ops) if control is not None and not halt else None
    jest = 0
    for _ in range(64):
        time, slot_of, text_of, rows, est = _cycles(m, nodes, entry, c, D, jest)
        need = max([time[v] + 1 for v in range(len(nodes))] + [0])
        if drain:
            need = max([need] + [time[v] + nodes[v].latency() for v in range(len(nodes)) if v != c]
                       + list(entry.values()))
        if c is None:
            end = need
            break
        if need <= time[c] + D + 1:
            end = time[c] + D + 1
            break
        jest = need - 1 - D
    else:
        raise _Unschedulable(f"{control.text}: what must follow it does not fit its delay slots")
    allops = list(nodes)
    if halt:  # a halt keeps a bundle of its own, last (as kernels end: `    done`)
        t = max([end] + [est_halt for est_halt in [max([entry.get(a, 0) for a in control.reads] + [0])]])
        while len(rows) <= t:
            rows.append(set())
        time.append(t)
        slot_of.append(control.slot)
        text_of.append(control.text)
        allops.append(control)
        end = t + 1
    bundles: list[list[tuple[str, str]]] = [[] for _ in range(end)]
    for v in range(len(allops)):
        bundles[time[v]].append((slot_of[v], text_of[v]))
    out = {a: r - end for a, r in entry.items() if r > end}
    for v, op in enumerate(allops):
        for a, lat in op.writes.items():
            if time[v] + lat > end:
                out[a] = max(out.get(a, 0), time[v] + lat - end)
    return [[t for _, t in sorted(b, key=lambda st: m.slot_order.get(st[0], 0))] for b in bundles], out


def _cycles(m: Machine, allops: list[Op], entry: dict, c: Optional[int], D: int, jest: int):
    """Cycle-by-cycle list scheduling of `allops` (every dependence, entry constraints; allops[c], a jump,
    no earlier than `jest` and first among equals: D + 1 bundles of the region follow it at least)."""
    N = len(allops)
    edges = dependences(allops)
    preds = [[] for _ in allops]
    succs = [[] for _ in allops]
    for u, v, lat, _ in edges:
        preds[v].append((u, lat))
        succs[u].append((v, lat))
    height = [0] * N
    for u in range(N - 1, -1, -1):
        height[u] = max([height[v] + lat for v, lat in succs[u]] + [allops[u].latency()])
        if u == c:
            height[u] = max(height[u], D + 1)
    time = [None] * N
    slot_of = [op.slot for op in allops]
    text_of = [op.text for op in allops]
    rows: list[set] = []
    remaining = set(range(N))
    npred = [len(preds[v]) for v in range(N)]
    est = [max([entry.get(a, 0) for a in op.reads] + [entry.get(a, 0) - lat + 1 for a, lat in op.writes.items()] + [0])
           for op in allops]
    if c is not None:
        est[c] = max(est[c], jest)
    ready = {v for v in range(N) if npred[v] == 0}
    cycle = 0
    while remaining:
        while len(rows) <= cycle:
            rows.append(set())
        cands = sorted((v for v in ready if est[v] <= cycle), key=lambda v: (-height[v], v))
        for v in cands:
            op = allops[v]
            choices = [(op.slot, op.text, op.name)] + [(s, t, nm) for nm, s, t in op.alts]
            for slot, text, _ in choices:
                if _place_ok(m, rows[cycle], slot):
                    rows[cycle].add(slot)
                    time[v], slot_of[v], text_of[v] = cycle, slot, text
                    break
            else:
                continue
            ready.discard(v)
            remaining.discard(v)
            for w, lat in succs[v]:
                est[w] = max(est[w], cycle + lat)
                npred[w] -= 1
                if npred[w] == 0:
                    ready.add(w)
        cycle += 1
    return time, slot_of, text_of, rows, est


# ---- modulo scheduling ------------------------------------------------------------------------------------

def res_mii(m: Machine, ops: list[Op]) -> int:
    """Resource bound on II: per slot, its operations plus those of the busiest slot that can never
    share a bundle with it (operations that may move to another slot count where they must be)."""
    count: dict[str, int] = {}
    for op in ops:
        if op.alts:
            continue
        count[op.slot] = count.get(op.slot, 0) + 1
    best = max([c + max([count.get(t, 0) for t in m.conflicts[s]] + [0]) for s, c in count.items()] + [1])
    flexible = sum(1 for op in ops if op.alts)
    if flexible:  # an operation with alternatives takes one of its slots
        slots = {op.slot for op in ops if op.alts} | {s for op in ops for _, s, _ in op.alts}
        total = sum(count.get(s, 0) for s in slots) + flexible
        best = max(best, -(-total // max(len(slots), 1)))
    return best


def _positive_cycle(n: int, edges, ii: int) -> bool:
    """Whether the graph with weights lat - ii * dist has a positive cycle (Bellman-Ford)."""
    dist = [0] * n
    for _ in range(n + 1):
        changed = False
        for u, v, lat, d in edges:
            w = dist[u] + lat - ii * d
            if w > dist[v]:
                dist[v] = w
                changed = True
        if not changed:
            return False
    return True


def rec_mii(n: int, edges) -> int:
    """Recurrence bound on II: the smallest II with no dependence cycle longer than II times its distance."""
    hi = max([lat for _, _, lat, _ in edges] + [1]) * max(n, 1)
    lo = 1
    if not _positive_cycle(n, edges, lo):
        return lo
    while lo < hi:
        mid = (lo + hi) // 2
        if _positive_cycle(n, edges, mid):
            lo = mid + 1
        else:
            hi = mid
    return lo


@dataclass
class Modulo:
    ii: int
    times: list[int]  # issue cycle of each body operation (before the branch, then after it) in one iteration
    texts: list[str]  # the operation's text (possibly in an alternative slot)
    slots: list[str]
    branch_time: int

    @property
    def stages(self) -> int:
        return max(self.times + [self.branch_time]) // self.ii + 1


def modulo_schedule(m: Machine, ops: list[Op], branch: Op, counter: int, max_ii: int, after=()) -> Optional[Modulo]:
    """A modulo schedule of the loop body `ops` closed by `branch` and the operations `after` it (written
    in its delay slots). The branch is kept in stage 0, delay_slots bundles before the kernel's end (the
    kernel's last bundles are its delay slots), and (ops + after)[counter], the counter update, in stage 0;
    None when no II < max_ii works."""
    allops = ops + [branch] + list(after)
    n = len(allops)
    b = len(ops)
    if counter >= b:
        counter += 1  # (an index into ops + after)
    edges = dependences(allops, loop=True)
    lo = max(res_mii(m, allops), rec_mii(n, edges), m.delay_of(branch) + 1)
    preds = [[] for _ in allops]
    succs = [[] for _ in allops]
    for u, v, lat, d in edges:
        preds[v].append((u, lat, d))
        succs[u].append((v, lat, d))
    for ii in range(lo, max_ii):
        got = _try_ii(m, allops, preds, succs, ii, b, counter)
        if got is not None:
            return got
    return None


def _try_ii(m: Machine, allops, preds, succs, ii: int, b: int, counter: int) -> Optional[Modulo]:
    n = len(allops)
    rows = [set() for _ in range(ii)]
    time = [None] * n
    slot_of = [op.slot for op in allops]
    text_of = [op.text for op in allops]
    tb = ii - 1 - m.delay_of(allops[b])
    if tb < 0 or not _place_ok(m, rows[tb], allops[b].slot):
        return None
    rows[tb].add(allops[b].slot)
    time[b] = tb
    horizon = ii * max(4, n)
    for v in range(n):
        if v == b:
            continue
        est = max([time[u] + lat - ii * d for u, lat, d in preds[v] if time[u] is not None] + [0])
        lst = min([time[w] - lat + ii * d for w, lat, d in succs[v] if time[w] is not None] + [horizon])
        if v == counter:
            lst = min(lst, ii - 1)
        op = allops[v]
        choices = [(op.slot, op.text)] + [(s, t) for _, s, t in op.alts]
        placed = False
        for t in range(est, min(lst, est + ii - 1) + 1):
            for slot, text in choices:
                if _place_ok(m, rows[t % ii], slot):
                    rows[t % ii].add(slot)
                    time[v], slot_of[v], text_of[v] = t, slot, text
                    placed = True
                    break
            if placed:
                break
        if not placed:
            return None
    for v in range(n):  # every edge, both directions (placement checked only placed neighbours)
        for w, lat, d in succs[v]:
            if time[w] + ii * d < time[v] + lat:
                return None
    keep = [v for v in range(n) if v != b]
    return Modulo(ii, [time[v] for v in keep], [text_of[v] for v in keep], [slot_of[v] for v in keep], time[b])


def _flatten(m: Machine, ms: Modulo, ops: list[Op], branch: Op) -> tuple[list, list, list]:
    """(prologue, kernel, epilogue) bundles of a modulo schedule (each a list of [(slot, text)])."""
    ii, S = ms.ii, ms.stages
    n = len(ops)
    pro = [[] for _ in range((S - 1) * ii)]
    ker = [[] for _ in range(ii)]
    for v in range(n):
        t = ms.times[v]
        ker[t % ii].append((ms.slots[v], ms.texts[v]))
        for j in range(S - 1):  # iteration j of the prologue
            T = j * ii + t
            if T < len(pro):
                pro[T].append((ms.slots[v], ms.texts[v]))
    ker[ms.branch_time].append((branch.slot, branch.text))
    # epilogue: iteration n-1-k (k = 0..S-2) runs its stages above k
    drain = max([ms.times[v] + ops[v].latency() - ii for v in range(n)] + [0])
    last = max([ms.times[v] - ii + 1 for v in range(n)] + [0])  # (the rows after the last operation: dropped)
    epi = [[] for _ in range(max(last, drain))]
    for v in range(n):
        t = ms.times[v]
        for k in range(S - 1):
            E = t - (k + 1) * ii
            if E >= 0:
                epi[E].append((ms.slots[v], ms.texts[v]))
    return pro, ker, epi


# ---- the program ------------------------------------------------------------------------------------------

_LABEL = re.compile(r"^\s*([A-Za-z_.$][\w.$]*)\s*:(?!=)")


@dataclass
class _Line:
    kind: str  # "ops" | "label" | "other" | "comment"
    raw: str
    ops: list = field(default_factory=list)
    label: str = ""


def _strip_comment(m: Machine, line: str) -> str:
    cut = len(line)
    for c in m.comments:
        k = line.find(c)
        if k >= 0:
            cut = min(cut, k)
    return line[:cut]


def _parse(m: Machine, text: str, path: str = "<input>") -> tuple[list[_Line], object]:
    try:
        program = m.asm.assemble(text, path)
    except AsmError as exc:
        raise ScheduleError(str(exc)) from exc
    if program.expanded:  # one source line, many instructions: the line-by-line rewrite cannot place them
        raise ScheduleError(f"{path}: the scheduler rewrites the program line by line and does not take "
                            f".macro/.rept/.irp expansions; write them out first")
    by_line = {r[3]: r for r in program.records}
    out: list[_Line] = []
    for no, raw in enumerate(text.splitlines(), 1):
        code = _strip_comment(m, raw).strip()
        if not code:
            out.append(_Line("comment" if raw.strip() else "other", raw))
            continue
        lm = _LABEL.match(code)
        if lm and not code.startswith("."):
            out.append(_Line("label", lm.group(1) + ":", label=lm.group(1)))
            code = code[lm.end():].strip()
            if not code:
                continue
        rec = by_line.get(no)
        if rec is None or code.startswith("."):
            out.append(_Line("other", raw if not lm else "    " + code))
            continue
        pieces = [p.strip() for p, _ in _split_top(code, m.sep) if p.strip()]
        ops = rec[2]
        if len(pieces) != len(ops):  # a pseudo-instruction that expands to several: keep the line
            out.append(_Line("other", "    " + code))
            continue
        parsed = [m.op(name, dict(vals), piece) for (name, vals), piece in zip(ops, pieces)]
        parsed = [o for o in parsed if o.name not in m.empty]  # nops: the schedule pads where it must
        if len(parsed) > 1:  # the order the slots run in: the bundle format's
            used = {o.slot for o in parsed}
            fmt = next((f for f in m.asm.bundles if used <= set(f.fields)), None)
            order = {name: k for k, name in enumerate(fmt.fields)} if fmt is not None else {}
            parsed.sort(key=lambda o: order.get(o.slot, 0))
        out.append(_Line("ops", raw, parsed))
    return out, program


def _emit(m: Machine, bundles, indent: str = "    ") -> list[str]:
    lines = []
    for b in bundles:
        texts = [t if isinstance(t, str) else t[1] for t in b]
        if not texts:
            texts = [m.nop]
        lines.append(indent + f" {m.sep} ".join(texts))
    return lines


def _slot_sorted(m: Machine, bundle) -> list[str]:
    return [t for _, t in sorted(bundle, key=lambda st: -1 if st[0] is None else m.slot_order.get(st[0], 0))]


def _counter_ok(m: Machine, init: Op, update: Op, branch: Op, target: int, stages: int,
                update_first: bool = True) -> bool:
    """Whether the loop runs at least `stages` iterations: init, then (update, branch taken) S - 1 times
    (update_first=False: the update is written after the branch, in its delay slots)."""
    if stages <= 1:
        return True
    try:
        ref = m.reference()
        fns = ref.code.insns
        A = ref.arrays
        for arr in A.values():
            arr[...] = 0
        atoms = list(init.writes)
        if any(len(a) != 2 or a[0] not in m.files for a in atoms):
            return False

        def run(op: Op) -> bool:
            ref.cur_pc = ref.next_pc = 0
            ref.jumped = False
            vals = dict(op.values)
            for k, wrap in ref.code.operand_wraps.get(op.name, ()):
                if k in vals:
                    vals[k] = wrap(vals[k])
            fns[op.name](ref, A, vals)
            return ref.jumped and ref.next_pc == target
        run(init)
        for _ in range(stages - 1):
            if update_first:
                run(update)
            taken = run(branch)
            if not update_first:
                run(update)
            if not taken:
                return False
        return True
    except Exception:
        return False


def schedule(spec: Spec, text: str, pipeline: bool = True, path: str = "<input>") -> str:
    """`text` with every region packed into bundles and its counted inner loops software-pipelined
    (pipeline=False: packed only). Raises ScheduleError when `text` does not assemble."""
    m = machine(spec)
    lines, program = _parse(m, text, path)
    hw = {("state", r) for r in m.hwloop_regs}
    if any(hw & set(op.writes) for ln in lines for op in ln.ops):
        return text  # zero-overhead loops: their bodies are bundle addresses (not scheduled: docs/schedule.md)
    try:
        return _schedule(m, lines, program, pipeline)
    except _Unschedulable as exc:
        if exposed(spec):  # as written, a read before its result would see the old value: not the input's meaning
            raise ScheduleError(f"{path}: cannot schedule: {exc} (an exposed pipeline does not wait for it)") from exc
        return text


def _schedule(m: Machine, lines, program, pipeline: bool) -> str:
    refs: dict[str, int] = {}  # label -> how many operations name it
    for ln in lines:
        for op in ln.ops:
            for word in _IDENT.findall(op.text.split(None, 1)[1] if " " in op.text else ""):
                refs[word] = refs.get(word, 0) + 1
    for ln in lines:
        if ln.kind == "other":
            for word in _IDENT.findall(ln.raw):
                refs[word] = refs.get(word, 0) + 1
    taken = _address_taken(m, lines, refs, program)
    label_in: dict[str, dict] = {}
    for _ in range(8):
        out, seen = _pass(m, lines, refs, program, pipeline, label_in, taken)
        if seen == label_in:
            return out
        label_in = seen
    return _pass(m, lines, refs, program, pipeline, None, taken)[0]


def _branch_targets(m: Machine, op: Op, labels: dict) -> list[str]:
    s = m.spec.instructions[op.name]
    return [labels[v] for k, v in op.values.items()
            if s.operands.get(k) is not None and s.operands[k].kind != "reg" and v in labels]


def _address_taken(m: Machine, lines: list[_Line], refs: dict, program) -> set:
    """Text labels named by something other than a direct branch (`movxm p7, #ret1` for an indirect
    jump): what may reach them is unknown, so everything drains before them and at every branch to them
    (and at indirect jumps)."""
    labels, section = {}, ".text"
    for ln in lines:
        if ln.kind == "other" and ln.raw.strip().startswith("."):
            section = ln.raw.strip().split()[0]
        if ln.kind == "label" and section == ".text" and ln.label in program.symbols:
            labels[program.symbols[ln.label]] = ln.label
    named: dict[str, int] = {}
    for ln in lines:
        for op in ln.ops:
            if op.control and op.name not in m.halting:
                for lab in _branch_targets(m, op, labels):
                    named[lab] = named.get(lab, 0) + 1
    return {lab for lab in labels.values() if refs.get(lab, 0) != named.get(lab, 0)}


def _merge(a: dict, b: dict) -> dict:
    out = dict(a)
    for k, v in b.items():
        if v > out.get(k, 0):
            out[k] = v
    return out


def _pass(m: Machine, lines: list[_Line], refs: dict, program, pipeline: bool, label_in: Optional[dict],
          taken: set):
    """One scheduling pass: the program's text, and what each label receives in flight from the
    branches to it (label_in None: every region drains; `taken`: labels everything drains before)."""
    labels = {program.symbols[ln.label]: ln.label for ln in lines if ln.kind == "label" and ln.label in program.symbols}
    out: list[str] = []
    region: list[Op] = []
    comments: list[str] = []
    prev_region: list[Op] = []  # the region before the current label (for a loop's counter initialisation)
    pending: dict = {}  # results in flight at the end of what is emitted so far (unit -> cycles until ready)
    seen: dict[str, dict] = {}

    def flush(control: Optional[Op] = None, drain: bool = False, after=()):
        nonlocal region, comments, prev_region, pending
        out.extend(comments)
        if control is not None and not drain:
            got = _branch_targets(m, control, labels)
            drain = control.name in m.halting or len(got) != 1 or got[0] in taken
        drain = drain or label_in is None
        if region or control is not None:
            bundles, pending = _list(m, region, control, pending, drain, after)
            out.extend(_emit(m, bundles))
        elif drain and pending:
            out.extend(_emit(m, [[]] * max(pending.values())))
            pending = {}
        if control is not None and label_in is not None:
            for lab in _branch_targets(m, control, labels):
                seen[lab] = _merge(seen.get(lab, {}), pending)
        prev_region = region if control is None else []
        region, comments = [], []

    section = ".text"
    i = 0
    while i < len(lines):
        ln = lines[i]
        if ln.kind == "label":
            loop = _loop_at(m, lines, i, refs, program) if pipeline and section == ".text" else None
            done = None
            if loop is not None:
                body, branch, after, end = loop
                done = _pipeline(m, ln.label, body, branch, after, prev_region if not region else region, program)
            flush(drain=done is not None or ln.label in taken)  # (a pipelined loop starts with nothing in flight)
            if done is not None:
                out.extend(done)
                i = end + 1
                continue
            if label_in is not None and ln.label not in taken:
                pending = _merge(pending, label_in.get(ln.label, {}))
            out.append(ln.raw)
        elif ln.kind == "comment":
            if region:
                comments.append(ln.raw)
            else:
                out.append(ln.raw)
        elif ln.kind == "other":
            flush(drain=True)
            s = ln.raw.strip()
            if s.startswith("."):
                section = s.split()[0] if s.split()[0] in (".text", ".data", ".bss", ".rodata", ".section") else section
            out.append(ln.raw)
        else:
            if section != ".text":
                out.append(ln.raw)
            else:
                for k, op in enumerate(ln.ops):
                    if op.control:
                        region.extend(ln.ops[:k])  # (a bundle with its control op: the slots before it)
                        after, i = _delay_ops(m, lines, i, op, ln.ops[k + 1:])
                        flush(op, after=after)
                        break
                else:
                    region.extend(ln.ops)
        i += 1
    flush(drain=True)
    return "\n".join(out) + "\n", seen


def _delay_ops(m: Machine, lines: list[_Line], i: int, op: Op, rest: list) -> tuple[list, int]:
    """The operations after control `op` on line i (`rest`) and in its delay slots (the next
    m.delay_of(op) lines of bundles; comments skipped), and the index of the last of those lines."""
    after = list(rest)
    if any(o.control for o in rest):
        raise _Unschedulable(f"{op.text}: two control operations in one bundle")
    want = m.delay_of(op)
    while want:
        i += 1
        if i >= len(lines):
            raise _Unschedulable(f"{op.text}: the program ends in its delay slots")
        ln = lines[i]
        if ln.kind == "comment":
            continue
        if ln.kind != "ops" or any(o.control for o in ln.ops):
            raise _Unschedulable(f"{op.text}: a label, a directive or a jump in its delay slots")
        after.extend(ln.ops)
        want -= 1
    return after, i


def _loop_at(m: Machine, lines: list[_Line], i: int, refs: dict, program):
    """(body ops, branch op, the operations in its delay slots, index of the last line of those) when a
    countable inner loop starts at line i."""
    label = lines[i].label
    if refs.get(label, 0) != 1 or label not in program.symbols:
        return None
    body: list[Op] = []
    for k in range(i + 1, len(lines)):
        ln = lines[k]
        if ln.kind in ("comment",):
            continue
        if ln.kind != "ops":
            return None
        ctl = [op for op in ln.ops if op.control]
        if not ctl:
            body.extend(ln.ops)
            continue
        if len(ctl) != 1 or len(ln.ops) != 1:
            return None
        branch = ctl[0]
        if program.symbols[label] not in branch.values.values():
            return None
        try:
            after, end = _delay_ops(m, lines, k, branch, [])
        except _Unschedulable:
            return None
        return body, branch, after, end
    return None


def _pipeline(m: Machine, label: str, body: list[Op], branch: Op, after: list[Op], before: list[Op],
              program) -> Optional[list[str]]:
    """The pipelined loop's lines (prologue, label, kernel, epilogue), or None to keep the loop as it is.
    `body` runs before the branch, `after` in its delay slots."""
    full = body + after
    if not full or branch.mem_read or branch.mem_write or any(op.control for op in full):
        return None
    creg = set(branch.reads)
    writers = [k for k, op in enumerate(full) if creg & set(op.writes)]
    if len(writers) != 1:
        return None
    u = writers[0]
    update = full[u]
    if set(update.writes) != creg or not update.reads <= creg or update.mem_read or update.mem_write:
        return None
    init = next((op for op in reversed(before) if creg & set(op.writes)), None)
    if init is None or set(init.writes) != creg or init.reads or init.mem_read:
        return None
    try:
        flat = list_schedule(m, body, branch, after=after)
    except _Unschedulable:
        return None
    ms = modulo_schedule(m, body, branch, u, len(flat), after=after)
    if ms is None:
        return None
    target = program.symbols[label]
    if not _counter_ok(m, init, update, branch, target, ms.stages, u < len(body)):
        return None
    pro, ker, epi = _flatten(m, ms, full, branch)
    lines = _emit(m, [_slot_sorted(m, b) for b in pro])
    lines.append(f"{label}:")
    lines += _emit(m, [_slot_sorted(m, b) for b in ker])
    lines += _emit(m, [_slot_sorted(m, b) for b in epi])
    return lines
