"""Co-design: validate a proposed instruction and merge it into its target as an overlay.

    verdict = propose(base_isa_path, proposal_text, workdir)   # accepted -> workdir/<base>_<tag>.isa

A proposal is one or more `instruction` blocks (and any state, memory or register file they need)
in the description language, without an `isa` header: it is resolved as
`isa <base>_<tag> extends <base> { ... }`. Accepted proposals chain: the next one extends the
last overlay. Validation gives reasons an agent can act on:

- it parses and checks as an overlay (names unique, semantics type-check, encodings decodable);
  an encoding that collides with an existing instruction names it and suggests free opcodes;
- it adds at least one instruction, each with doc text;
- every loop and reduction in its semantics has bounds fixed by the parameters (its cost is fixed);
- its declared `cycles` are not below a floor derived from the work its semantics do: every
  element it writes and every term a reduction combines is at least one lane operation, over the
  target's elementwise rate; the multiply-accumulates (the terms of `sum(a * b)`) over its MAC
  rate; bytes moved off chip over its bandwidth (tasks/roofline.yaml) — so a proposal cannot buy
  speed with a free instruction. (Arithmetic inside one element's expression is not charged: a
  lane's datapath may fuse it. The floor is a lower bound; the doc text argues the real cost.)
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Optional

import isadl
from isadl import ir
from isadl.check import Spec

_TAG = re.compile(r"^[a-z][a-z0-9_]{0,23}$")


@dataclass
class Verdict:
    accepted: bool
    base: str  # the ISA extended
    name: str  # the overlay's ISA name: <base>_<tag>
    mnemonics: list[str] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)  # why not (each actionable)
    floors: dict[str, int] = field(default_factory=dict)  # per new instruction: least honest cycles
    overlay: Optional[Path] = None  # the accepted overlay file
    text: str = ""  # the overlay as written (the ISA diff)

    def message(self) -> str:
        if self.accepted:
            costs = ", ".join(f"{m} (cycle floor {self.floors.get(m, 0)})" for m in self.mnemonics)
            return (f"accepted: {costs} added as isa {self.name} extends {self.base}; the target is rebuilt and "
                    f"from now on check_syntax, run_evaluation and grep_docs use it")
        return "rejected:\n" + "\n".join(f"- {r}" for r in self.reasons)


def wrap(base: str, tag: str, proposal: str) -> str:
    """The overlay text: the proposal's lines unchanged (so its line numbers are the file's minus one)."""
    return f"isa {base}_{tag} extends {base} {{\n{proposal.rstrip()}\n}}\n"


def propose(base_path: Path, proposal: str, workdir: Path, tag: Optional[str] = None,
            target: Optional[str] = None) -> Verdict:
    """Validate `proposal` against the ISA at `base_path`; when accepted, write the overlay into
    `workdir` (beside which a chained base overlay must live) and return it in the verdict.
    `target`: the name tasks/roofline.yaml knows the machine by (default: the base's root name)."""
    base_path = Path(base_path)
    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    base = isadl.load(base_path)
    base_name = base.isa.name
    root = target or base_name.split("_")[0]
    tag = tag or _next_tag(workdir, root)
    verdict = Verdict(False, base_name, f"{base_name}_{tag}")
    if not _TAG.match(tag):
        verdict.reasons.append(f"tag '{tag}' must be lower case letters, digits and _ (at most 24)")
        return verdict
    if re.search(r"^\s*isa\b", proposal, re.M):
        verdict.reasons.append("give only the instruction block(s) (and any state they need), without an "
                               "'isa ... extends ...' header: the proposal is wrapped in one")
        return verdict
    text = wrap(base_name, tag, proposal)
    if base_path.resolve().parent != workdir.resolve() and base_path.resolve().parent != isadl.TARGETS_DIR.resolve():
        raise ValueError(f"the base {base_path} must live in {workdir} or in targets/")
    candidate = workdir / f"{verdict.name}.isa"
    candidate.write_text(text, encoding="utf-8")
    try:
        spec = isadl.load(candidate)
    except isadl.IsaError as exc:
        candidate.unlink()
        verdict.reasons += [_relocate(d, candidate) for d in exc.diagnostics]
        verdict.reasons += _collision_hints(exc, base, text, candidate)
        return verdict
    new = [n for n in spec.instructions if n not in base.instructions]
    verdict.mnemonics = new
    if not new:
        verdict.reasons.append("the proposal adds no instruction")
    rates = _rates(root, spec)
    for name in new:
        insn = spec.instructions[name].insn
        where = f"proposal.isa:{max(insn.loc.line - 1, 1)}:{insn.loc.column}"
        mine = spec.instructions[name]
        shadowed = [o for o in base.instructions.values() if o.format is not None and mine.format is not None
                    and o.format.width == mine.format.width and o.insn.slot == insn.slot
                    and (mine.match & o.mask & mine.mask) == (o.match & o.mask & mine.mask)]
        if shadowed and insn.encoding is not None:
            # the base decodes some of these words already: a new instruction may not take them over
            free = free_values(base, insn.encoding)
            hint = (f"; free values of field '{free[0]}' in format {insn.encoding.format}: "
                    + ", ".join(f"{v:#x}" for v in free[1][:4])) if free and free[1] else ""
            verdict.reasons.append(f"{where}: the encoding of {name} collides with the existing instruction "
                                   f"{shadowed[0].insn.name} (some words decode as both){hint}")
        if not insn.doc.strip():
            verdict.reasons.append(f"{where}: instruction {name} has no doc text: say what it computes, its "
                                   f"operands and its cost")
        try:
            work = Work(spec)
            work.stmts(insn.semantics)
        except Unbounded as exc:
            verdict.reasons.append(f"{where}: instruction {name}: {exc}")
            continue
        floor = work.floor(rates)
        verdict.floors[name] = floor
        declared = _cycles(spec, insn)
        if declared is None:
            verdict.reasons.append(f"{where}: instruction {name} must declare `cycles` as a constant expression of "
                                   f"the parameters (its cost may not depend on operand values)")
        elif declared < floor:
            verdict.reasons.append(
                f"{where}: instruction {name} declares {declared} cycles, below the floor of {floor} for the work its "
                f"semantics do ({work.describe(rates)}); declare cycles >= {floor}")
    if verdict.reasons:
        candidate.unlink()
        return verdict
    verdict.accepted, verdict.overlay, verdict.text = True, candidate, text
    return verdict


def _next_tag(workdir: Path, root: str) -> str:
    n = 1
    while list(workdir.glob(f"*_x{n}.isa")):
        n += 1
    return f"x{n}"


def _relocate(d, candidate: Path) -> str:
    """A diagnostic of the wrapped overlay, located in the proposal as the agent wrote it."""
    if d.loc.path == str(candidate) and d.loc.line:
        return f"proposal.isa:{max(d.loc.line - 1, 1)}:{d.loc.column}: {d.severity}: {d.message}"
    return f"{d.severity}: {d.message}"


_COLLIDE = re.compile(r"instructions (\w+) and (\w+) cannot be told apart")


def _collision_hints(exc: isadl.IsaError, base: Spec, text: str, candidate: Path) -> list[str]:
    """For each new instruction whose encoding collides with an existing one: free opcodes."""
    hints = []
    try:
        overlay = isadl.parse_text(text, str(candidate))[-1]
    except isadl.IsaError:
        return hints
    proposed = {i.name: i for i in overlay.instructions}
    for d in exc.diagnostics:
        m = _COLLIDE.search(d.message)
        if not m:
            continue
        a, b = m.groups()
        mine, theirs = (b, a) if b in proposed else (a, b)
        insn = proposed.get(mine)
        if insn is None or insn.encoding is None:
            continue
        free = free_values(base, insn.encoding)
        if free:
            fld, values = free
            shown = ", ".join(f"{v:#x}" for v in values[:4])
            hints.append(f"{mine} collides with the existing instruction {theirs}; free values of field '{fld}' "
                         f"in format {insn.encoding.format} that decode unambiguously: {shown}")
    return hints


def free_values(base: Spec, enc: ir.Encoding) -> Optional[tuple[str, list[int]]]:
    """The first constant field of `enc` and the values of it that collide with no instruction of
    `base` (all other constant fields as proposed)."""
    fmt = base.formats.get(enc.format)
    if fmt is None:
        return None
    consts = {}
    for b in enc.bindings:
        if b.value is not None:
            try:
                consts[b.field] = base.params_eval(b.value)
            except Exception:
                return None
    if not consts:
        return None
    first = next(iter(consts))
    lay = fmt.fields.get(first)
    if lay is None:
        return None
    others = [i for i in base.instructions.values() if i.format is not None and i.format.width == fmt.width]
    # unbound fields of the proposal default to 0 in its encoding, as the checker lays them out
    for name, fl in fmt.fields.items():
        if name not in consts and not any(b.field == name for b in enc.bindings) and fl.default is not None:
            consts[name] = fl.default
    free = []
    for v in range(1 << min(lay.value_width, 12)):
        mask, match = fmt.fixed_mask, fmt.fixed_match
        for name, value in {**consts, first: v}.items():
            fl = fmt.fields.get(name)
            if fl is None:
                continue
            m, x = _place(fl, value)
            mask, match = mask | m, match | x
        if not any((match & o.mask & mask) == (o.match & o.mask & mask) for o in others):
            free.append(v)
    return first, free


def _place(fl, value: int) -> tuple[int, int]:
    mask = match = 0
    for value_lo, word_lo, width in fl.pieces:
        bits = (value >> value_lo) & ((1 << width) - 1)
        mask |= ((1 << width) - 1) << word_lo
        match |= bits << word_lo
    return mask, match


def _cycles(spec: Spec, insn: ir.Instruction) -> Optional[int]:
    if insn.cycles is None:
        return 1
    try:
        return int(spec.params_eval(insn.cycles))
    except Exception:
        return None


def _rates(target: str, spec: Spec) -> dict[str, Fraction]:
    """The target's best rates per cycle (tasks/roofline.yaml): elementwise, MAC, off-chip bytes."""
    from .roofline import _rate, _table
    peaks = _table().get(target) or {}
    params = dict(spec.params)
    best = lambda kind: max((_rate(v, params) for v in (peaks.get(kind) or {}).values()), default=Fraction(1))  # noqa: E731
    return {"elem": best("elem"), "mac": best("mac"),
            "bytes": _rate(peaks.get("bytes_per_cycle", 1 << 30), params), "offchip": peaks.get("offchip")}


class Unbounded(Exception):
    pass


class Work:
    """The work an instruction's semantics do: element operations, multiply-accumulates inside
    reductions, and bytes moved to or from off-chip memory."""

    def __init__(self, spec: Spec):
        self.spec = spec
        self.elem = 0
        self.mac = 0
        self.offchip_bytes = 0
        self.depth = 0  # levels of the deepest reduction: a tree over n terms is log2(n) deep
        self._offchip = None
        self._vars: set[str] = set()  # mutable locals declared so far (a loop updating one is a reduction)

    def trips(self, lo: ir.Expr, hi: ir.Expr, what: str) -> int:
        """The most iterations: a bound known only at run time counts at its cap, min(x, LIMIT)."""
        def most(e) -> int:
            try:
                return int(self.spec.params_eval(e))
            except Exception:
                if isinstance(e, ir.Call) and e.func == "min":
                    caps = [c for c in (self._const(a) for a in e.args) if c is not None]
                    if caps:
                        return min(caps)
                raise Unbounded(f"the bounds of {what} must be constant expressions of the parameters, or "
                                f"capped with min(..., LIMIT)") from None
        try:
            low = int(self.spec.params_eval(lo))
        except Exception:
            low = 0  # a start known only at run time: count from 0, the most iterations
        return max(most(hi) - low, 0)

    def _const(self, e) -> Optional[int]:
        try:
            return int(self.spec.params_eval(e))
        except Exception:
            return None

    def stmts(self, body, times: int = 1) -> None:
        for s in body:
            if isinstance(s, ir.For):
                n = self.trips(s.lo, s.hi, f"'for {s.var}'")
                if n > 1 and any(isinstance(a, ir.Assign) and isinstance(a.target, ir.Name) and a.target.id in self._vars
                                 for a in _walk(s.body)):
                    self.depth = max(self.depth, math.ceil(math.log2(n)))  # carries a value across iterations
                self.stmts(s.body, times * n)
            elif isinstance(s, ir.If):
                self.expr(s.cond, times)
                a, b = Work(self.spec), Work(self.spec)
                a.stmts(s.then, times)
                b.stmts(s.orelse, times)
                heavier = a if (a.elem, a.mac) >= (b.elem, b.mac) else b
                self.elem += heavier.elem
                self.mac += heavier.mac
            elif isinstance(s, (ir.Let, ir.Assign)):
                if isinstance(s, ir.Let) and s.mutable:
                    self._vars.add(s.name)
                self.expr(s.value, times)
                if isinstance(s, ir.Assign):
                    self.elem += times  # every element written is at least one lane operation
                    self.expr_index(s.target, times)
            elif isinstance(s, ir.Require):
                self.expr(s.cond, times)
            elif isinstance(s, ir.CallStmt):
                self.expr(s.call, times)

    def expr_index(self, e, times: int) -> None:
        """Indexes are addresses (free), but an access to an off-chip memory moves bytes."""
        root = e
        while isinstance(root, (ir.Index, ir.Slice)):
            root = root.base
        if isinstance(root, ir.Name) and self._is_offchip(root.id):
            self.offchip_bytes += times * max(self.spec.types[root.id].bits // 8, 1)

    def _is_offchip(self, name: str) -> bool:
        if self._offchip is None:
            from .roofline import _table
            self._offchip = {v.get("offchip") for v in _table().values() if isinstance(v, dict)} - {None}
        return name in self._offchip

    def expr(self, e, times: int) -> None:
        """Within one element's expression, arithmetic is free (a lane's datapath may fuse it); what
        costs is every term a reduction combines, and every off-chip access."""
        if isinstance(e, ir.Reduce):
            n = self.trips(e.lo, e.hi, f"'{e.op}({e.var} in ...)'")
            if n > 1:
                self.depth = max(self.depth, math.ceil(math.log2(n)))
            if e.op == "sum" and isinstance(e.body, ir.Binary) and e.body.op == "*":
                self.mac += times * n  # a multiply-accumulate per term
            else:
                self.elem += times * n
            self.expr(e.body, times * n)
            return
        if isinstance(e, (ir.Index, ir.Slice)):
            self.expr_index(e, times)
        for child in vars(e).values():
            for c in (child if isinstance(child, tuple) else (child,)):
                if isinstance(c, (ir.Num, ir.FloatLit, ir.Name, ir.Index, ir.Slice, ir.Call, ir.Reduce, ir.Unary,
                                  ir.Binary, ir.Cond)):
                    self.expr(c, times)

    def floor(self, rates: dict) -> int:
        return max(1, self.depth, math.ceil(max(Fraction(self.elem) / rates["elem"], Fraction(self.mac) / rates["mac"],
                                                Fraction(self.offchip_bytes) / rates["bytes"])))

    def describe(self, rates: dict) -> str:
        parts = [f"{self.elem} element results and reduction terms at {float(rates['elem']):g} per cycle"]
        if self.mac:
            parts.append(f"{self.mac} multiply-accumulates at {float(rates['mac']):g} per cycle")
        if self.offchip_bytes:
            parts.append(f"{self.offchip_bytes} off-chip bytes at {float(rates['bytes']):g} per cycle")
        if self.depth:
            parts.append(f"a reduction {self.depth} levels deep (a tree over its terms)")
        return ", ".join(parts)


def _walk(body):
    """Every statement in `body`, nested ones included."""
    for s in body:
        yield s
        if isinstance(s, ir.For):
            yield from _walk(s.body)
        elif isinstance(s, ir.If):
            yield from _walk(s.then)
            yield from _walk(s.orelse)
