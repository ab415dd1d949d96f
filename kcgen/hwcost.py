"""Hardware cost of a proposed instruction, derived from its semantics (issue 18, item 4).

    cost = estimate(base_spec, overlay_spec, "V_RED_ARGMAX")   # -> HwCost
    print(cost.render())
    costs = estimate_proposal(base_path, proposal_text)        # every new instruction of a proposal
    speedup_per_area(speedup, cost.added_area, cost.base_lanes)

From an instruction's semantics (the isadl IR) it derives the datapath the instruction needs:

- operators by kind -- `add` (add, subtract, compare, min, max), `mul`, `fma`, `div`, `sqrt`,
  `exp` (exponential and other transcendental functions: exp, log, tanh, erf, recip), `select`
  (a data-dependent `?:`), `convert` (int <-> float, float narrowing) -- each with its type and
  width. A `for` loop without a carried variable is that many parallel lanes (each lane its own
  operators); a reduction over N terms is a tree of N-1 operators, ceil(log2 N) levels deep. The
  argmax idiom (`m = max(i: v[i])` then `min(i: v[i] == m ? i : N)`) is one compare-and-select
  tree carrying (value, index) pairs. Address arithmetic (indexes), `require` checks and control
  conditions (those reading no data: operands, parameters, loop variables, integer configuration
  state such as PLENA's V_MASK) are not datapath and cost nothing;
- the new state bits it touches (register files, state and memories the overlay adds) and its
  storage ports (elements of each memory, register file or state read and written);
- an area in units of one lane of the base target (the operators one element-wise lane of the
  base's vector instructions holds), from relative operator areas documented in docs/codesign.md
  ("Hardware cost model");
- a minimum latency: the critical path of its dataflow, each operator at the cycles the base ISA
  charges for an instruction that does only that operator (the widest such), each reduction tree
  at the per-level cycles of the base's reduction instruction of that kind.

Nothing here writes files or changes the co-design validator; kcgen.codesign calls it.
"""
from __future__ import annotations

import dataclasses
import itertools
import math
import re
from collections import Counter
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Optional

import isadl
from isadl import ir
from isadl.check import Spec
from isadl.params import evaluate
from isadl.semantics import Checker, _Var
from isadl.types import INT, FloatLitT, FloatT, IntLitT, IntT, Type, VecT

KINDS = ("add", "mul", "fma", "div", "sqrt", "exp", "select", "convert")
TRANSCENDENTAL = ("exp", "log", "tanh", "erf", "recip")

# ---- the area model (docs/codesign.md, "Hardware cost model", gives the sources) -------------------
# Reference points, 45 nm, um^2 (Horowitz, ISSCC 2014, "Computing's energy problem"): integer add
# 8/16/32 bit 36/67/137; integer multiply 8/32 bit 282/3495; FP add 16/32 bit 1360/4184; FP multiply
# 16/32 bit 1640/7700. The power laws below pass through those points (FP add ~ w^1.6, FP multiply
# ~ w^2.2, integer add ~ w, integer multiply ~ w^2).
_INT_ADD_32, _INT_MUL_32, _FP_ADD_16, _FP_MUL_16 = 137.0, 3495.0, 1360.0, 1640.0


def int_add_area(w: int) -> float:
    return _INT_ADD_32 * w / 32


def _fp_add(w: int) -> float:
    return _FP_ADD_16 * (w / 16) ** 1.6


def _fp_mul(w: int) -> float:
    return _FP_MUL_16 * (w / 16) ** 2.2


def operator_area(kind: str, is_float: bool, width: int) -> float:
    """Area (um^2 at 45 nm, only ratios matter) of one operator of `kind` on `width`-bit operands."""
    if kind == "add":
        return _fp_add(width) if is_float else int_add_area(width)
    if kind == "compare":  # a comparator (sign-magnitude or two's complement) is an integer subtractor
        return int_add_area(width)
    if kind == "mul":
        return _fp_mul(width) if is_float else _INT_MUL_32 * (width / 32) ** 2
    if kind == "fma":  # a multiplier and a (wider) adder; the fused rounding saves little area
        return (_fp_mul(width) + _fp_add(width)) if is_float else (_INT_MUL_32 * (width / 32) ** 2 + int_add_area(2 * width))
    if kind in ("exp", "sqrt"):  # table + quadratic interpolation (two multipliers, adder tree, range reduction)
        return 3 * _fp_mul(width)
    if kind == "div":  # reciprocal (as above) and one multiply, a / b = a * recip(b)
        return 4 * _fp_mul(width) if is_float else 4 * _INT_MUL_32 * (width / 32) ** 2
    if kind == "select":  # a 2:1 multiplexer: about half an adder of the same width
        return 0.5 * int_add_area(width)
    if kind == "convert":  # leading-one detector and shifter (int -> float) or rounder (narrowing)
        return 2 * int_add_area(width)
    return 0.0


@dataclass(frozen=True)
class Operator:
    kind: str  # one of KINDS ("add" also covers compare/min/max; `op` says which)
    op: str  # +, -, <, max, exp, recip, argmax, ...
    type: str  # bf16, f32, u32, ...
    width: int
    is_float: bool

    @property
    def area_kind(self) -> str:
        return "compare" if self.kind == "add" and self.op in _COMPARES else self.kind

    def area(self) -> float:
        return operator_area(self.area_kind, self.is_float, self.width)


_COMPARES = ("<", "<=", ">", ">=", "==", "!=", "max", "min", "argmax", "argmin")


@dataclass
class Reduction:
    op: str  # sum, max, argmax, ...
    terms: int
    depth: int
    type: str
    count: int = 1  # how many such trees (a reduction inside a lane loop is one per lane)

    @property
    def operators(self) -> int:
        return (self.terms - 1) * self.count


@dataclass
class Port:
    read: int = 0  # elements read per instruction
    write: int = 0  # elements written per instruction


@dataclass
class HwCost:
    mnemonic: str
    base: str  # the base ISA's name
    ops: dict[str, int]  # kind -> operators per instruction
    operators: dict[Operator, int]  # each operator (kind, op, type) -> count per instruction
    lanes: int  # the widest parallel element loop or reduction
    per_lane: dict[str, float]  # kind -> operators per lane (ops / lanes)
    reductions: list[Reduction]
    reduction_depth: int
    state_bits: int  # bits of the state the overlay adds that this instruction touches
    new_state: dict[str, int]  # name -> bits
    memory_ports: dict[str, Port]  # storage name -> elements read / written per instruction
    area_um2: float  # the model's absolute figure (45 nm); only its ratio to base_lane_um2 is reported
    base_lane_um2: float
    base_lane: dict[str, int]  # the operators of one base lane: "kind type" -> count
    base_lanes: int  # lanes of the base's vector unit
    added_area: float  # in base lanes
    min_latency: int  # cycles, critical path at the base ISA's operator latencies
    declared: Optional[int]  # the instruction's `cycles` (or `latency` when it has one)
    path: list[str] = field(default_factory=list)  # the critical path, first operator first
    issue_cycles: int = 1  # the cycles it keeps its unit: operators are shared over them (added_area)

    @property
    def too_fast(self) -> bool:
        """The declared cost is below the critical path: the datapath cannot do it in that time."""
        return self.declared is not None and self.min_latency > self.declared

    def speedup_per_area(self, speedup: float) -> float:
        return speedup_per_area(speedup, self.added_area, self.base_lanes)

    def render(self) -> str:
        kinds = ", ".join(f"{n} {_LABEL.get(k, k)}" for k, n in self.ops.items() if n) or "none"
        lanes = ", ".join(f"{_fmt(v)} {k}" for k, v in self.per_lane.items() if v) or "none"
        lines = [f"{self.mnemonic}: datapath {kinds} operators over {self.lanes} lane(s) ({lanes} per lane)"]
        for r in self.reductions:
            many = f"{r.count} x " if r.count > 1 else ""
            lines.append(f"  reduction: {many}{r.op} tree over {r.terms} {r.type} terms, {r.terms - 1} operators, "
                         f"{r.depth} levels")
        ports = "; ".join(f"{n} {p.read} read/{p.write} written" for n, p in self.memory_ports.items()) or "none"
        lines.append(f"  elements per instruction: {ports}; new state bits: {self.state_bits}")
        shared = f", operators shared over its {self.issue_cycles} cycles" if self.issue_cycles > 1 else ""
        lines.append(f"  area: {self.added_area:.2f} base lanes{shared} (one base lane = "
                     f"{', '.join(f'{n} {k}' for k, n in self.base_lane.items())}; the vector unit has {self.base_lanes})")
        verdict = ""
        if self.declared is not None:
            verdict = (f"; declared {self.declared}: BELOW the critical path" if self.too_fast
                       else f"; declared {self.declared}")
        lines.append(f"  minimum latency: {self.min_latency} cycles ({' -> '.join(self.path) or 'no operator'}){verdict}")
        return "\n".join(lines)

    def to_json(self) -> dict:
        return {"mnemonic": self.mnemonic, "ops": dict(self.ops), "lanes": self.lanes,
                "per_lane": dict(self.per_lane), "reduction_depth": self.reduction_depth,
                "reductions": [dataclasses.asdict(r) for r in self.reductions], "state_bits": self.state_bits,
                "memory_ports": {k: dataclasses.asdict(v) for k, v in self.memory_ports.items()},
                "added_area": round(self.added_area, 3), "base_lanes": self.base_lanes,
                "issue_cycles": self.issue_cycles,
                "min_latency": self.min_latency, "declared": self.declared, "too_fast": self.too_fast}


_LABEL = {"add": "add/compare", "exp": "exp/transcendental"}


def _fmt(x: float) -> str:
    return f"{x:g}" if x == int(x) else f"{x:.3g}"


def speedup_per_area(speedup: float, added_area: float, base_lanes: int) -> float:
    """Speedup over the area growth of the vector unit: speedup / ((base_lanes + added_area) / base_lanes).
    Above 1 the instruction pays for its silicon (the same area spent on more base lanes could at best
    speed up by the area ratio)."""
    if base_lanes <= 0:
        raise ValueError("base_lanes must be positive")
    return speedup / ((base_lanes + added_area) / base_lanes)


# ---- the analysis ---------------------------------------------------------------------------------

class _Analysis:
    """One instruction's datapath: a walk of its semantics with types (isadl's own checker) and ready times."""

    def __init__(self, spec: Spec, name: str, latencies: Optional["Latencies"] = None,
                 state: Optional[dict[str, int]] = None):
        self.spec = spec
        self.insn = spec.instructions[name].insn
        ctx = dataclasses.replace(spec.context, error=lambda *a: None)
        self.chk = Checker(ctx, spec.semantic_operands(spec.instructions[name].operands))
        self.ctx = ctx
        self.lat = latencies
        self.ops: Counter = Counter()  # Operator -> count
        self.elementwise: Counter = Counter()  # the same, outside reduction trees
        self.reductions: list[Reduction] = []
        self.reads: dict[tuple, int] = {}  # (storage, index expr) -> elements
        self.writes: dict[tuple, int] = {}
        self.lanes = 1
        self.loop_lanes = 1  # widest `for` without a carried variable
        self.ready: dict[str, tuple[int, list[str]]] = {}  # let/var/storage -> (cycle, path)
        self.data: set[str] = set()  # lets and vars holding data
        self.mutable: set[str] = set()
        self.maxes: dict[str, ir.Reduce] = {}  # let name -> the max/min reduction it holds (argmax idiom)
        self.finish: tuple[int, list[str]] = (0, [])
        self._trees: dict[int, Reduction] = {}  # id of a Reduce node -> its tree
        self.tree_ops: Counter = Counter()  # the operators of reduction trees
        self.addresses: set[str] = set()
        self.loopvars: list[tuple[str, int]] = []  # enclosing loop and reduction variables, with their trips
        self.bits: dict[str, int] = {}  # significant bits of integer lets, loop variables and inlined parameters
        self.consts: dict[str, int] = dict(state or {})  # lets, inlined parameters (and state held) of constant value
        self.deps: dict[str, set[str]] = {}  # let/parameter -> the names its value depends on (through lets)
        self.callsites: list[int] = []  # the calls being inlined

    # -- helpers
    def type_of(self, e: ir.Expr) -> Optional[Type]:
        try:
            return self.chk.expr(e)
        except Exception:
            return None

    def operand_type(self, *es: ir.Expr) -> tuple[str, int, bool]:
        """The sized type an operator works in: the widest float among the operands, else the widest integer."""
        best = None
        for e in es:
            t = self.type_of(e)
            if isinstance(t, VecT):
                t = t.elem
            if isinstance(t, (FloatT, IntT)):
                key = (isinstance(t, FloatT), t.width)
                if best is None or key > (isinstance(best, FloatT), best.width):
                    best = t
        if best is None:
            return ("int", 64, False)
        return (str(best), best.width, isinstance(best, FloatT))

    def count(self, kind: str, op: str, tinfo: tuple[str, int, bool], n: int, tree: bool = False) -> Operator:
        o = Operator(kind, op, tinfo[0], tinfo[1], tinfo[2])
        self.ops[o] += n
        (self.tree_ops if tree else self.elementwise)[o] += n
        return o

    def latency(self, o: Operator) -> int:
        return self.lat.of(o) if self.lat else 1

    def _push(self, var: str, trips: int = 1) -> None:
        self.chk.scopes.append({var: _Var(INT, False, True, "loop variable")})
        self.loopvars.append((var, trips))
        self.bits[var] = max(1, (trips - 1).bit_length())
        self.deps.pop(var, None)
        self.consts.pop(var, None)

    # -- constants, dependences and significant bits (an int8 product held in an i32 is an 8x8 multiplier)
    def _fold(self, e: ir.Expr) -> Optional[int]:
        """The value of `e` when it is a constant: of the parameters, constant lets, inlined arguments
        and the state the analysis holds fixed, through calls of the ISA's functions."""
        if isinstance(e, ir.Num):
            return e.value
        if isinstance(e, ir.Name):
            if e.id in self.consts:
                return self.consts[e.id]
            if self.chk.lookup_var(e.id) or e.id not in self.spec.params:
                return None
            return int(self.spec.params[e.id])
        if isinstance(e, ir.Unary):
            a = self._fold(e.operand)
            return None if a is None else {"-": -a, "~": ~a, "!": int(not a)}[e.op]
        if isinstance(e, ir.Cond):
            c = self._fold(e.cond)
            return None if c is None else self._fold(e.then if c else e.orelse)
        if isinstance(e, ir.Binary):
            a, b = self._fold(e.left), self._fold(e.right)
            if a is None or b is None:
                return None
            try:
                return int(evaluate(ir.Binary(e.op, ir.Num(a), ir.Num(b)), lambda n: 0))
            except Exception:
                return None
        if isinstance(e, ir.Call):
            if e.func in self.ctx.functions and not self.chk.lookup_var(e.func):
                fn = self.ctx.functions[e.func]
                args = [self._fold(a) for a in e.args]
                if None in args:
                    return None
                saved = {p.name: self.consts.get(p.name) for p in fn.params}
                self.consts.update({p.name: v for p, v in zip(fn.params, args)})
                try:
                    return self._fold(fn.body)
                finally:
                    for name, v in saved.items():
                        (self.consts.__setitem__(name, v) if v is not None else self.consts.pop(name, None))
            args = [self._fold(a) for a in e.args]
            if None in args:
                return None
            if re.fullmatch(r"[ui](8|16|32|64)", e.func) and len(args) == 1:
                return args[0]
            if e.func in ("min", "max") and args:
                return min(args) if e.func == "min" else max(args)
        return None

    def _depends(self, e: ir.Expr) -> set[str]:
        """The names `e` uses, through the lets and parameters that stand for other expressions."""
        out: set[str] = set()
        for n in _names(e):
            out.add(n.id)
            out |= self.deps.get(n.id, set())
        return out

    def _bind(self, name: str, value: ir.Expr) -> None:
        self.deps[name] = self._depends(value)
        sig = self._sig(value)
        (self.bits.__setitem__(name, sig) if sig is not None else self.bits.pop(name, None))
        c = self._fold(value)
        (self.consts.__setitem__(name, c) if c is not None else self.consts.pop(name, None))

    def _sig(self, e: ir.Expr) -> Optional[int]:
        """Bits an integer value can occupy (None: as many as its type): what sign/zero extension, masks,
        shifts and narrow conversions leave of it, a product the sum of its factors' bits."""
        c = self._fold(e)
        if c is not None:
            return max(1, abs(c).bit_length() + (c < 0))
        if isinstance(e, ir.Name):
            if e.id in self.bits:
                return self.bits[e.id]
            t = self.type_of(e)
            return t.width if isinstance(t, IntT) else None
        if isinstance(e, ir.Index):
            t = self.type_of(e)
            return t.width if isinstance(t, IntT) else None
        if isinstance(e, ir.Slice):
            hi, lo = self._fold(e.hi), self._fold(e.lo)
            return hi - lo + 1 if hi is not None and lo is not None else None
        if isinstance(e, ir.Cond):
            c = self._fold(e.cond)
            if c is not None:
                return self._sig(e.then if c else e.orelse)
            a, b = self._sig(e.then), self._sig(e.orelse)
            return max(a, b) if a is not None and b is not None else None
        if isinstance(e, ir.Binary):
            a, b = self._sig(e.left), self._sig(e.right)
            if e.op in ("<", "<=", ">", ">=", "==", "!=", "&&", "||"):
                return 1
            if e.op == "&":
                known = [x for x in (a, b) if x is not None]
                return min(known) if known else None
            k = self._fold(e.right)
            if e.op == ">>" and a is not None and k is not None:
                return max(1, a - k)
            if e.op == "<<" and a is not None and k is not None:
                return a + k
            if a is None or b is None:
                return None
            return {"*": a + b, "+": max(a, b) + 1, "-": max(a, b) + 1, "|": max(a, b), "^": max(a, b),
                    "/": a, "%": b}.get(e.op)
        if isinstance(e, ir.Call):
            f = e.func
            if f in self.ctx.functions:
                fn = self.ctx.functions[f]
                saved = {p.name: (self.bits.get(p.name), self.consts.get(p.name), self.deps.get(p.name))
                         for p in fn.params}
                for p, a in zip(fn.params, e.args):
                    self._bind(p.name, a)
                out = self._sig(fn.body)
                self._restore(saved)
                return out
            target = self.ctx.resolve_type(ir.TypeRef(f)) if not self.chk.lookup_var(f) else None
            if isinstance(target, IntT) and e.args:
                inner = self._sig(e.args[0])
                return min(target.width, inner) if inner is not None else target.width
            if f in ("min", "max"):
                sigs = [self._sig(a) for a in e.args]
                return max(sigs) if None not in sigs else None
        t = self.type_of(e)
        return t.width if isinstance(t, IntT) else None

    def _restore(self, saved: dict) -> None:
        for name, values in saved.items():
            for table, v in zip((self.bits, self.consts, self.deps), values):
                if v is None:
                    table.pop(name, None)
                else:
                    table[name] = v

    def _pop(self) -> None:
        self.chk.scopes.pop()
        self.loopvars.pop()

    # -- statements
    def run(self) -> "_Analysis":
        self.addresses = _address_lets(self.insn.semantics)
        self.stmts(self.insn.semantics, 1, (0, []))
        return self

    def stmts(self, body, times: int, guard: tuple[int, list[str]]) -> None:
        self.chk.scopes.append({})
        for s in body:
            self.stmt(s, times, guard)
        self.chk.scopes.pop()

    def stmt(self, s, times: int, guard) -> None:
        if isinstance(s, ir.Let):
            self._bind(s.name, s.value)
            if s.mutable:
                self.consts.pop(s.name, None)
        if isinstance(s, ir.Let) and s.name in self.addresses:  # used only to address: not datapath
            try:
                self.chk.let(s)
            except Exception:
                pass
        elif isinstance(s, ir.Let):
            r, d = self.expr(s.value, times)
            try:
                self.chk.let(s)
            except Exception:
                pass
            self.ready[s.name] = r
            if d:
                self.data.add(s.name)
            if s.mutable:
                self.mutable.add(s.name)
            if isinstance(s.value, ir.Reduce) and s.value.op in ("max", "min"):
                self.maxes[s.name] = s.value
        elif isinstance(s, ir.Assign):
            r, d = self.expr(s.value, times)
            done = max(r, guard, key=lambda x: x[0])
            root, _ = ir.index_path(s.target)
            if isinstance(root, ir.Name):
                if root.id in self.mutable:
                    self.ready[root.id] = done
                    if d:
                        self.data.add(root.id)
                else:
                    self._access(self.writes, root.id, s.target, times)
                    self.ready[root.id] = max(self.ready.get(root.id, (0, [])), done, key=lambda x: x[0])
            self.finish = max(self.finish, done, key=lambda x: x[0])
        elif isinstance(s, ir.If) and self._fold(s.cond) is not None:  # decided by constants: one branch
            self.stmts(s.then if self._fold(s.cond) else s.orelse, times, guard)
        elif isinstance(s, ir.If):
            c, d = self.expr(s.cond, times)
            inner = max(guard, c, key=lambda x: x[0]) if d else guard
            self._branches(lambda: self.stmts(s.then, times, inner), lambda: self.stmts(s.orelse, times, inner))
        elif isinstance(s, ir.For):
            n = self._trips(s.lo, s.hi)
            carried = [a.target.id for a in ir.statements(s.body) if isinstance(a, ir.Assign)
                       and isinstance(a.target, ir.Name) and a.target.id in self.mutable]
            before = {v: self.ready.get(v, (0, [])) for v in carried}
            self._push(s.var, n)
            self.stmts(s.body, times * n, guard)
            self._pop()
            if carried and n > 1:  # a loop carrying a value is a reduction: a tree over its iterations
                depth = math.ceil(math.log2(n))
                for v in carried:
                    start, after = before[v][0], self.ready.get(v, (0, []))
                    step = max(after[0] - start, 1)
                    self.ready[v] = (start + step * depth, after[1] + [f"x{depth} levels"])
                self.reductions.append(Reduction("loop", n, depth, "", times))
                self.lanes = max(self.lanes, times * n)
            else:
                self.lanes = max(self.lanes, times * n)
                self.loop_lanes = max(self.loop_lanes, times * n)
        elif isinstance(s, ir.CallStmt):
            self.expr(s.call, times)
        # Require, Trap, Halt: checks and control, not datapath

    def _branches(self, then, orelse) -> None:
        """Both branches' operators; units of the same kind are shared (only one branch's result is kept)."""
        saved, saved_e = self.ops, self.elementwise
        self.ops, self.elementwise = Counter(), Counter()
        then()
        a, ae = self.ops, self.elementwise
        self.ops, self.elementwise = Counter(), Counter()
        orelse()
        b, be = self.ops, self.elementwise
        self.ops, self.elementwise = saved + (a | b), saved_e + (ae | be)

    def _trips(self, lo, hi) -> int:
        most = loop_bound(self.spec, hi)
        return max((1 if most is None else most) - (const(self.spec, lo) or 0), 0)

    def _const(self, e) -> Optional[int]:
        return const(self.spec, e)

    def _access(self, table: dict, name: str, e: ir.Expr, times: int, elems: int = 1) -> None:
        """Distinct elements: the trips of the loop variables the access's index names, times the
        elements of one access (a wide load)."""
        used = self._depends(e)
        n = math.prod(trips for var, trips in self.loopvars if var in used)
        key = (name, e, tuple(self.callsites))  # one function body read at two call sites is two reads
        table[key] = max(table.get(key, 0), n * elems)

    # -- expressions: (ready, is_data); ready = (cycle, path of operators)
    def expr(self, e, times: int):
        zero = (0, [])
        if isinstance(e, (ir.Num, ir.FloatLit)):
            return zero, False
        if isinstance(e, ir.Name):
            if e.id in self.ready and (e.id in self.data or e.id in self.mutable):
                return self.ready[e.id], e.id in self.data or e.id in self.mutable
            st = self.ctx.storage.get(e.id)
            if st is not None and not self.chk.lookup_var(e.id):
                is_data = not (isinstance(st.type, (IntT, IntLitT)) and not st.dims)  # integer config state
                if is_data:
                    self._access(self.reads, e.id, e, times)
                return self.ready.get(e.id, zero), is_data
            return zero, False
        if isinstance(e, ir.Index):
            root, _ = ir.index_path(e)
            if isinstance(root, ir.Name) and not self.chk.lookup_var(root.id) and \
                    (root.id in self.ctx.regfiles or root.id in self.ctx.storage):
                self._access(self.reads, root.id, e, times)
                return self.ready.get(root.id, zero), True
            return self.expr(root, times)
        if isinstance(e, ir.Slice):
            return self.expr(e.base, times)
        if isinstance(e, ir.Unary):
            return self.expr(e.operand, times)  # negation flips a sign bit; ! and ~ are wiring
        if isinstance(e, ir.Binary):
            (rl, dl), (rr, dr) = self.expr(e.left, times), self.expr(e.right, times)
            if not (dl or dr):
                return zero, False
            r = max(rl, rr, key=lambda x: x[0])
            kind = {"+": "add", "-": "add", "*": "mul", "/": "div", "%": "div", "<": "add", "<=": "add",
                    ">": "add", ">=": "add", "==": "add", "!=": "add"}.get(e.op)
            if kind is None:  # logic, shifts: wiring and gates
                return r, True
            o = self.count(kind, e.op, self._narrowed(self.operand_type(e.left, e.right), e), times)
            return self._after(r, o), True
        if isinstance(e, ir.Cond) and self._fold(e.cond) is not None:  # decided by constants: one branch
            return self.expr(e.then if self._fold(e.cond) else e.orelse, times)
        if isinstance(e, ir.Cond):
            c, dc = self.expr(e.cond, times)
            (rt, dt), (rf, df) = self.expr(e.then, times), self.expr(e.orelse, times)
            r = max(rt, rf, key=lambda x: x[0])
            if not dc:  # a control condition: a lane mask, not a multiplexer
                return r, dt or df
            o = self.count("select", "?:", self.operand_type(e.then, e.orelse), times)
            return self._after(max(r, c, key=lambda x: x[0]), o), True
        if isinstance(e, ir.Reduce):
            return self.reduce(e, times)
        if isinstance(e, ir.Call):
            return self.call(e, times)
        return zero, False

    def _narrowed(self, tinfo: tuple[str, int, bool], e: ir.Binary) -> tuple[str, int, bool]:
        """An integer operator is as wide as its operands' significant bits (a multiplier: the wider factor)."""
        if tinfo[2]:
            return tinfo
        a, b = self._sig(e.left), self._sig(e.right)
        if a is None or b is None:
            return tinfo
        width = max(a, b) + (1 if e.op in "+-" else 0)
        return (f"int{width}", width, False) if width < tinfo[1] else tinfo

    def _after(self, r, o: Operator):
        lat = self.latency(o)
        return (r[0] + lat, r[1] + [f"{o.op} {o.type} ({lat})"])

    def call(self, e: ir.Call, times: int):
        zero = (0, [])
        f = e.func
        if f in self.ctx.functions:  # a function is inlined: its parameters stand for the arguments
            fn = self.ctx.functions[f]
            args = [self.expr(a, times) for a in e.args]
            saved = {p.name: (self.ready.get(p.name), p.name in self.data) for p in fn.params}
            bound = {p.name: (self.bits.get(p.name), self.consts.get(p.name), self.deps.get(p.name)) for p in fn.params}
            for p, a in zip(fn.params, e.args):
                self._bind(p.name, a)
            scope = {}
            for p, (r, d) in zip(fn.params, args):
                self.ready[p.name] = r
                (self.data.add if d else self.data.discard)(p.name)
                scope[p.name] = _Var(self.ctx.resolve_type(p.type) or INT, False, False, "let")
            self.chk.scopes.append(scope)
            self.callsites.append(id(e))
            out = self.expr(fn.body, times)
            self.callsites.pop()
            self.chk.scopes.pop()
            self._restore(bound)
            for name, (r, d) in saved.items():
                if r is None:
                    self.ready.pop(name, None)
                else:
                    self.ready[name] = r
                (self.data.add if d else self.data.discard)(name)
            return out
        if f == "load":
            t = self.ctx.resolve_type(ir.TypeRef(getattr(e.args[1], "id", ""))) if len(e.args) == 3 else None
            mem = self.ctx.storage.get(getattr(e.args[0], "id", ""))
            elems = max((t.bits // mem.type.bits) if t and mem else 1, 1)
            self._access(self.reads, e.args[0].id, e, times, elems)
            return self.ready.get(e.args[0].id, zero), True
        if f == "store":
            r, _ = self.expr(e.args[3], times)
            t = self.ctx.resolve_type(ir.TypeRef(getattr(e.args[1], "id", "")))
            mem = self.ctx.storage.get(getattr(e.args[0], "id", ""))
            elems = max((t.bits // mem.type.bits) if t and mem else 1, 1)
            self._access(self.writes, e.args[0].id, e, times, elems)
            self.ready[e.args[0].id] = r
            self.finish = max(self.finish, r, key=lambda x: x[0])
            return r, True
        args = [self.expr(a, times) for a in e.args]
        data = any(d for _, d in args)
        r = max((a[0] for a in args), key=lambda x: x[0], default=zero)
        if not data:
            return zero, False
        target = self.ctx.resolve_type(ir.TypeRef(f)) if not self.chk.lookup_var(f) else None
        if target is not None:  # a conversion T(x)
            src = self.type_of(e.args[0])
            if _converts(src, target):
                o = self.count("convert", f"{src}->{target}", (str(target), max(target.bits, getattr(src, "bits", 0)),
                                                                isinstance(target, FloatT)), times)
                return self._after(r, o), True
            return r, True
        if f in ("min", "max"):
            o = self.count("add", f, self.operand_type(*e.args), times)
        elif f == "abs":
            t = self.operand_type(*e.args)
            if t[2]:
                return r, True  # clears a sign bit
            o = self.count("add", f, t, times)
        elif f == "fma":
            o = self.count("fma", f, self.operand_type(*e.args), times)
        elif f in TRANSCENDENTAL:
            o = self.count("exp", f, self.operand_type(*e.args), times)
        elif f == "sqrt":
            o = self.count("sqrt", f, self.operand_type(*e.args), times)
        elif f in ("sat",) or f.startswith("mx_"):
            o = self.count("convert", f, self.operand_type(*e.args), times)
        elif f == "ldexp":
            o = self.count("add", f, ("i32", 32, False), times)
        else:  # bit(), bitcast, sext/zext, clz/ctz/popcount, isnan/isinf: wiring and small logic
            return r, True
        return self._after(r, o), True

    def reduce(self, e: ir.Reduce, times: int):
        n = self._trips(e.lo, e.hi)
        idx = self._argmax_of(e)
        if idx is not None:  # the index half of an argmax: the max tree already carries it
            name, tree = idx
            tree.op = "arg" + tree.op
            self._push(self.maxes[name].var)
            t = self.operand_type(self.maxes[name].body)
            self._pop()
            bits = t[1] + max(math.ceil(math.log2(max(n, 2))), 1)
            self.count("select", "argmax", (f"{t[0]}+index", bits, False), times * (n - 1), tree=True)
            return self.ready[name], True
        self._push(e.var, n)
        rb, db = self.expr(e.body, times * n)
        t = self.operand_type(e.body)
        self._pop()
        self.lanes = max(self.lanes, times * n)
        if not db:
            return (0, []), False
        kind = {"sum": "add", "prod": "mul", "max": "add", "min": "add"}.get(e.op)
        if n <= 1:
            return rb, True
        depth = math.ceil(math.log2(n))
        tree = Reduction(e.op, n, depth, t[0], times)
        self.reductions.append(tree)
        self._trees[id(e)] = tree
        if kind is None:  # and/or/xor trees: gates
            return rb, True
        o = self.count(kind, e.op, t, times * (n - 1), tree=True)
        lat = self.lat.tree(o, depth) if self.lat else depth
        return (rb[0] + lat, rb[1] + [f"{e.op} tree of {depth} levels ({lat})"]), True

    def _argmax_of(self, e: ir.Reduce):
        """(name of m, its tree) when `e` is min/max(i: body(i) == m ? index : other) with m = max/min(i: body(i))."""
        if e.op not in ("min", "max") or not isinstance(e.body, ir.Cond):
            return None
        c = e.body.cond
        if not (isinstance(c, ir.Binary) and c.op == "=="):
            return None
        for value, other in ((c.left, c.right), (c.right, c.left)):
            if isinstance(other, ir.Name) and other.id in self.maxes:
                m = self.maxes[other.id]
                if m.var == e.var and m.body == value and m.lo == e.lo and m.hi == e.hi and id(m) in self._trees:
                    return other.id, self._trees[id(m)]
        return None


def _converts(src: Optional[Type], dst: Type) -> bool:
    """Whether T(x) needs hardware: int <-> float, or a float narrowed (rounded). Widening is wiring."""
    if src is None or isinstance(src, (IntLitT, FloatLitT)):
        return False
    if isinstance(src, FloatT) and isinstance(dst, FloatT):
        return dst.width < src.width
    return isinstance(src, FloatT) != isinstance(dst, FloatT)


def _value_names(e):
    """Names an expression uses as values (not inside an index, a bit-slice bound or a load/store address)."""
    if isinstance(e, ir.Name):
        yield e.id
    elif isinstance(e, ir.Index):
        yield from _value_names(e.base)
    elif isinstance(e, ir.Slice):
        yield from _value_names(e.base)
    elif isinstance(e, ir.Call) and e.func in ("load", "store"):
        for a in e.args[3:]:
            yield from _value_names(a)
    elif isinstance(e, ir.Call):
        for a in e.args:
            yield from _value_names(a)
    elif isinstance(e, ir.Reduce):
        yield from _value_names(e.body)
    elif isinstance(e, ir.Unary):
        yield from _value_names(e.operand)
    elif isinstance(e, ir.Binary):
        yield from _value_names(e.left)
        yield from _value_names(e.right)
    elif isinstance(e, ir.Cond):
        for c in (e.cond, e.then, e.orelse):
            yield from _value_names(c)


def _address_lets(body) -> set[str]:
    """Lets whose values only ever address storage (`let src = gp[rs1]`): their arithmetic is address
    generation, not datapath."""
    lets = {s.name: s.value for s in ir.statements(body) if isinstance(s, ir.Let)}
    used: set[str] = set()
    for s in ir.statements(body):
        if isinstance(s, ir.Assign):
            used |= set(_value_names(s.value))
            if isinstance(s.target, ir.Name):
                used.add(s.target.id)
        elif isinstance(s, ir.If):
            used |= set(_value_names(s.cond))
        elif isinstance(s, ir.CallStmt):
            used |= set(_value_names(s.call))
    grown = True
    while grown:
        grown = False
        for name in list(used):
            if name in lets:
                new = set(_value_names(lets[name])) - used
                if new:
                    used |= new
                    grown = True
    return {n for n in lets if n not in used}


def _names(e):
    if isinstance(e, ir.Name):
        yield e
    elif dataclasses.is_dataclass(e):
        for f in dataclasses.fields(e):
            v = getattr(e, f.name)
            for c in (v if isinstance(v, tuple) else (v,)):
                if dataclasses.is_dataclass(c) and not isinstance(c, ir.Loc):
                    yield from _names(c)


# ---- the base target: its latencies and its lane ----------------------------------------------------

@dataclass
class Latencies:
    """Cycles the base ISA charges per operator (the widest instruction doing only that operator) and
    per reduction-tree level (its reduction instruction of that kind)."""
    elem: dict[str, tuple[int, str]]  # key (add/mul/fma/div/sqrt/exp/recip/...) -> (cycles, from mnemonic)
    trees: dict[str, tuple[Fraction, str]]  # "add"/"mul"/"compare" -> (cycles per level, from mnemonic)

    @staticmethod
    def key(o: Operator) -> str:
        return o.op if o.kind == "exp" else o.area_kind

    def of(self, o: Operator) -> int:
        if o.kind in ("select", "convert"):
            return 0  # absorbed in the producing operator's cycle (the base rounds to bf16 in every op)
        return self.cycles(self.key(o))

    def cycles(self, key: str) -> int:
        if key in self.elem:
            return self.elem[key][0]
        fallback = {"compare": ["add"], "fma": ["mul", "add"], "div": ["recip", "mul"], "sqrt": ["recip"],
                    "recip": ["exp"], "log": ["exp"], "tanh": ["exp"], "erf": ["exp"]}.get(key)
        if fallback is None:
            return 1
        return sum(self.cycles(k) for k in fallback)

    def tree(self, o: Operator, depth: int) -> int:
        k = o.area_kind
        if k in self.trees:
            return math.ceil(self.trees[k][0] * depth)
        return depth * self.of(o)

    def source(self, key: str) -> str:
        return self.elem[key][1] if key in self.elem else "fallback"


@dataclass
class BaseModel:
    latencies: Latencies
    lane: dict[Operator, int]  # the operators of one lane of the base's vector instructions
    lanes: int  # how many lanes

    @property
    def lane_area(self) -> float:
        return sum(o.area() * n for o, n in self.lane.items()) or operator_area("add", True, 32)


_BASE_CACHE: dict[int, tuple[Spec, BaseModel]] = {}  # keeps the spec alive, so its id is not reused


def base_model(base: Spec) -> BaseModel:
    """Latencies and lane of the base target, from its own instructions' semantics and cycles."""
    hit = _BASE_CACHE.get(id(base))
    if hit is not None and hit[0] is base:
        return hit[1]
    analyses = {}
    for name, ins in base.instructions.items():
        cyc = _declared(base, ins.insn)
        if cyc is None or ins.insn.unit == "dma":
            continue
        try:
            analyses[name] = (_Analysis(base, name).run(), cyc)
        except Exception:
            continue
    # the lane: the most common width of the element-wise loops (PLENA: VLEN)
    widths = Counter(a.loop_lanes for a, _ in analyses.values() if a.loop_lanes > 1 and a.elementwise)
    width = widths.most_common(1)[0][0] if widths else 1
    elem: dict[str, tuple[int, str]] = {}  # key -> (cycles, mnemonic)
    tree: dict[str, tuple[Fraction, str]] = {}
    for name, (a, cyc) in analyses.items():
        keys = {Latencies.key(o) for o in a.elementwise if o.kind not in ("select", "convert")}
        trees = list(a.tree_ops)
        if len(a.reductions) == 1 and a.reductions[0].count == 1 and a.reductions[0].op != "loop" \
                and len(trees) == 1 and a.reductions[0].depth:
            # one reduction over one row: the instruction's cycles are its tree's (and the final accumulate's)
            k = trees[0].area_kind
            level = Fraction(cyc, a.reductions[0].depth)
            if k not in tree or level < tree[k][0]:
                tree[k] = (level, name)
        elif not a.reductions and len(keys) == 1 and a.loop_lanes == width:
            # one kind of operator in every lane: the instruction's cycles are that operator's latency
            k = keys.pop()
            if k not in elem or cyc < elem[k][0]:
                elem[k] = (cyc, name)
    lat = Latencies(elem, tree)
    # a lane holds, per operator, the most any one element-wise instruction uses per element
    # (instructions run one at a time and share units); the unit has as many lanes as the commonest
    # element-wise instruction works on per cycle: its elements over the cycles it keeps its unit
    samples = [s for s in (_lane_sample(base, name, ins.insn) for name, ins in base.instructions.items()
                           if ins.insn.unit != "dma") if s is not None]
    # loads and stores vote only where every element-wise instruction touches a memory (PLENA's vector
    # SRAM): elsewhere their element-wise operations are address arithmetic, and coral's 144 segment and
    # indexed forms (one element a cycle) would outvote its ALU
    memories = {m.name for m in base.isa.memories}
    compute = [(a, n) for a, n in samples if not any(k[0] in memories for k in (*a.reads, *a.writes))]
    samples = compute or samples
    widths = Counter(per_cycle for _, per_cycle in samples)
    lanes = widths.most_common(1)[0][0] if widths else 1
    by_kind: dict[tuple, tuple[Operator, int]] = {}
    for a, per_cycle in samples:
        if per_cycle != lanes:
            continue
        for o, n in a.elementwise.items():
            per = n // a.loop_lanes
            if per and o.kind not in ("select", "convert"):
                k = o.area_kind  # the largest unit of each kind serves the narrower uses of it too
                if k not in by_kind or per * o.area() > by_kind[k][1] * by_kind[k][0].area():
                    by_kind[k] = (o if o.kind != "exp" else dataclasses.replace(o, op="exp"), per)
    lane = {o: n for o, n in by_kind.values()}
    model = BaseModel(lat, lane, lanes)
    if len(_BASE_CACHE) > 16:
        _BASE_CACHE.clear()
    _BASE_CACHE[id(base)] = (base, model)
    return model


STATE_CANDIDATES = (0, 1, 2, 4, 8, 16, 32, 64, 128)  # values tried for state a cost reads (coral's vtype: e8..e32)


def _lane_sample(base: Spec, name: str, insn: ir.Instruction) -> Optional[tuple["_Analysis", int]]:
    """(analysis, elements per cycle) of an element-wise instruction of the base, or None. An instruction
    whose cost reads state (coral's vector instructions: vl and vtype) is taken at its widest: state that
    bounds a loop as min(state, CAP) at CAP, other state at the candidate value giving the largest lane."""
    cycles = insn.cycles
    reads = sorted({n.id for n in _names(cycles)} - set(base.params)) if cycles is not None else []
    caps = _state_caps(base, insn.semantics)
    free = [n for n in reads if n not in caps]
    if len(free) > 2:
        return None
    best = None
    for values in itertools.product(STATE_CANDIDATES, repeat=len(free)):
        state = {**{n: caps[n] for n in reads if n in caps}, **dict(zip(free, values))}
        try:
            a = _Analysis(base, name, state=state).run()
            issue = int(evaluate(_uncast(cycles), lambda n: state[n.id] if n.id in state else base.params[n.id])) \
                if cycles is not None else 1
        except Exception:
            continue
        if a.loop_lanes <= 1 or not a.elementwise or a.reductions or issue < 1:
            continue
        area = sum(o.area() * n for o, n in a.elementwise.items()) / a.loop_lanes
        if best is None or area > best[0]:
            best = (area, a, max(1, a.loop_lanes // issue))
    return (best[1], best[2]) if best else None


def _uncast(e):
    """`e` without its integer casts (u32(1) is 1): a cost expression's value where nothing wraps."""
    if isinstance(e, ir.Call) and len(e.args) == 1 and re.fullmatch(r"[ui](8|16|32|64)", e.func):
        return _uncast(e.args[0])
    if dataclasses.is_dataclass(e) and not isinstance(e, ir.Loc):
        changes = {}
        for f in dataclasses.fields(e):
            v = getattr(e, f.name)
            if isinstance(v, tuple):
                changes[f.name] = tuple(_uncast(c) for c in v)
            elif dataclasses.is_dataclass(v) and not isinstance(v, ir.Loc):
                changes[f.name] = _uncast(v)
        return dataclasses.replace(e, **changes)
    return e


def _state_caps(spec: Spec, body) -> dict[str, int]:
    """State that bounds a loop as min(state, CAP): its cap."""
    caps: dict[str, int] = {}
    for s in ir.statements(body):
        if isinstance(s, ir.For) and isinstance(s.hi, ir.Call) and s.hi.func == "min":
            names = [a.id for a in s.hi.args if isinstance(a, ir.Name) and a.id in spec.types]
            cap = loop_bound(spec, s.hi)
            for n in names:
                if cap is not None:
                    caps[n] = max(caps.get(n, 0), cap)
    return caps


def const(spec: Spec, e: ir.Expr) -> Optional[int]:
    """The value of an expression of the parameters, or None when it depends on the machine's state."""
    try:
        return int(spec.params_eval(e))
    except Exception:
        return None


def loop_bound(spec: Spec, e: ir.Expr) -> Optional[int]:
    """The largest value a loop bound takes: a constant of the parameters, or the cap of a bound
    known only at run time written min(x, LIMIT); None when it has neither."""
    value = const(spec, e)
    if value is None and isinstance(e, ir.Call) and e.func == "min":
        caps = [c for c in (const(spec, a) for a in e.args) if c is not None]
        value = min(caps) if caps else None
    return value


def _issue_cycles(spec: Spec, insn: ir.Instruction) -> int:
    """The cycles the instruction keeps its unit (its `cycles`; 1 when not a constant)."""
    try:
        return max(1, int(spec.params_eval(insn.cycles))) if insn.cycles is not None else 1
    except Exception:
        return 1


def _declared(spec: Spec, insn: ir.Instruction) -> Optional[int]:
    e = insn.latency if insn.latency is not None else insn.cycles
    if e is None:
        return 1
    try:
        return int(spec.params_eval(e))
    except Exception:
        return None


# ---- the entry points -------------------------------------------------------------------------------

def estimate(base: Spec, overlay: Spec, mnemonic: str) -> HwCost:
    """The datapath, area and minimum latency of instruction `mnemonic` of `overlay` (which extends `base`)."""
    model = base_model(base)
    a = _Analysis(overlay, mnemonic, model.latencies).run()
    ops = {k: 0 for k in KINDS}
    for o, n in a.ops.items():
        ops[o.kind] += n
    per_lane = {k: v / a.lanes for k, v in ops.items()}
    issue = _issue_cycles(overlay, overlay.instructions[mnemonic].insn)
    # the least datapath that sustains the declared cost: an instruction that keeps its unit `issue`
    # cycles may reuse each operator that many times (n operators of a kind: ceil(n / issue) units)
    alike = Counter()  # operators of the same kind and size can stand in for one another
    for o, n in a.ops.items():
        alike[(o.area_kind, o.area())] += n
    area = sum(unit * -(-n // issue) for (_, unit), n in alike.items())
    ports: dict[str, Port] = {}
    for table, attr in ((a.reads, "read"), (a.writes, "write")):
        for (name, *_), n in table.items():
            p = ports.setdefault(name, Port())
            setattr(p, attr, getattr(p, attr) + n)
    new = _new_state(base, overlay)
    touched = {n: b for n, b in new.items() if n in ports}
    path = a.finish[1]
    return HwCost(
        mnemonic=mnemonic, base=base.isa.name, ops=ops, operators=dict(a.ops), lanes=a.lanes, per_lane=per_lane,
        reductions=a.reductions, reduction_depth=max((r.depth for r in a.reductions), default=0),
        state_bits=sum(touched.values()), new_state=touched, memory_ports=ports, area_um2=area,
        base_lane_um2=model.lane_area, base_lane={f"{o.area_kind} {o.type}": n for o, n in model.lane.items()},
        base_lanes=model.lanes, added_area=area / model.lane_area, min_latency=max(1, a.finish[0]),
        declared=_declared(overlay, overlay.instructions[mnemonic].insn), path=path, issue_cycles=issue)


def memory_traffic(spec: Spec, mnemonic: str) -> dict[str, tuple[int, int]]:
    """Bytes of each memory the instruction reads and writes at most (distinct elements, loops at their
    caps, as `memory_ports` counts them), by memory name; register files and state are not memories."""
    a = _Analysis(spec, mnemonic).run()
    sizes = {m.name: max(_bits(spec.types[m.name]) // 8, 1) for m in spec.isa.memories}
    out: dict[str, list[int]] = {}
    for i, table in enumerate((a.reads, a.writes)):
        for (name, *_), n in table.items():
            if name in sizes:
                out.setdefault(name, [0, 0])[i] += n * sizes[name]
    return {k: (r, w) for k, (r, w) in out.items()}


def _new_state(base: Spec, overlay: Spec) -> dict[str, int]:
    out = {}
    for r in overlay.isa.regfiles:
        if r.name not in base.types:
            out[r.name] = overlay.params_eval(r.count) * overlay.types[r.name].bits
    for s in overlay.isa.states:
        if s.name not in base.types:
            out[s.name] = math.prod(overlay.params_eval(d) for d in s.dims) * _bits(overlay.types[s.name])
    for m in overlay.isa.memories:
        if m.name not in base.types:
            out[m.name] = overlay.params_eval(m.size) * _bits(overlay.types[m.name])
    return out


def _bits(t) -> int:
    while isinstance(t, VecT):
        t = t.elem
    return t.bits


def load_proposal(base_path: Path, proposal: str, tag: str = "hw") -> tuple[Spec, Spec]:
    """(base, overlay) for a proposal as `kcgen propose` takes it (blocks without an `isa` header), or
    for a whole overlay file's text (with its header). Nothing is written."""
    from isadl.parser import parse_proposal
    base_path = Path(base_path)
    base = isadl.load(base_path)
    name = f"{base.isa.name}_{tag}"
    if any(line.lstrip().startswith("isa ") for line in proposal.splitlines()):
        text = proposal
    else:  # a list of items (the proposal grammar rule) first, so the header below cannot be escaped
        parse_proposal(proposal, "proposal.isa", name, base.isa.name)
        text = f"isa {name} extends {base.isa.name} {{\n{proposal.rstrip()}\n}}\n"
    overlay = isadl.load_text(text, str(base_path.parent / f"{name}.isa"))
    return base, overlay


def estimate_proposal(base_path: Path, proposal: str, tag: str = "hw") -> list[HwCost]:
    """The cost of every instruction the proposal adds, in the order it declares them."""
    base, overlay = load_proposal(base_path, proposal, tag)
    return [estimate(base, overlay, n) for n in overlay.instructions if n not in base.instructions]
