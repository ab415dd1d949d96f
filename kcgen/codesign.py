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
  rate; bytes moved off chip over its bandwidth (tasks/roofline.yaml); bytes read from or written to
  each memory of the base over the best rate its own instructions move through that memory — so a proposal cannot buy
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

from . import hwcost

_TAG = re.compile(r"^[a-z][a-z0-9_]{0,23}$")


@dataclass
class Verdict:
    accepted: bool
    base: str  # the ISA extended
    name: str  # the overlay's ISA name: <base>_<tag>
    mnemonics: list[str] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)  # why not (each actionable)
    floors: dict[str, int] = field(default_factory=dict)  # per new instruction: least honest cycles
    cycles: dict[str, int] = field(default_factory=dict)  # per new instruction: its declared cycles, as charged
    hw: dict = field(default_factory=dict)  # per new instruction: kcgen.hwcost.HwCost (datapath, area, latency)
    overlay: Optional[Path] = None  # the accepted overlay file
    text: str = ""  # the overlay as written (the ISA diff)

    def message(self) -> str:
        if self.accepted:
            costs = ", ".join(f"{m} (cycle floor {self.floors.get(m, 0)})" for m in self.mnemonics)
            hw = "".join("\n" + c.render() for c in self.hw.values())
            return (f"accepted: {costs} added as isa {self.name} extends {self.base}; the target is rebuilt and "
                    f"from now on check_syntax, run_evaluation and grep_docs use it" + hw)
        return "rejected:\n" + "\n".join(f"- {r}" for r in self.reasons)


def wrap(base: str, tag: str, proposal: str) -> str:
    """The overlay file of a proposal that parsed as a list of items (isadl.parser.parse_proposal):
    the proposal's lines unchanged (so its line numbers are the file's minus one). Only text the
    `proposal` grammar rule accepted is written this way, so it cannot close or open a header."""
    return f"isa {base}_{tag} extends {base} {{\n{proposal.rstrip()}\n}}\n"


PROPOSAL = "proposal.isa"  # where diagnostics of the proposal are located (its own line numbers)
CYCLES_MAX = 1 << 31  # the most cycles (or latency) one instruction may declare


def propose(base_path: Path, proposal: str, workdir: Path, tag: Optional[str] = None,
            target: Optional[str] = None, build: bool = True) -> Verdict:
    """Validate `proposal` against the ISA at `base_path`; when accepted, write the overlay into
    `workdir` (beside which a chained base overlay must live) and return it in the verdict.
    `target`: the name tasks/roofline.yaml knows the machine by (default: the base's root name).
    Acceptance is atomic: the overlay is built (C simulator and docs) and the proposal's own examples
    run on it before the file appears under its name; any failure leaves `workdir` as it was.
    `build=False` skips the build and the examples (validation only)."""
    from isadl.parser import parse_proposal
    base_path = Path(base_path)
    workdir = Path(workdir)
    base = isadl.load(base_path)
    base_name = base.isa.name
    root = target or base_name.split("_")[0]
    if workdir.exists():
        tag = tag or _next_tag(workdir, root)
    tag = tag or "x1"
    verdict = Verdict(False, base_name, f"{base_name}_{tag}")
    if not _TAG.match(tag):
        verdict.reasons.append(f"tag '{tag}' must be lower case letters, digits and _ (at most 24)")
        return verdict
    if base_path.resolve().parent != workdir.resolve() and base_path.resolve().parent != isadl.TARGETS_DIR.resolve():
        raise ValueError(f"the base {base_path} must live in {workdir} or in targets/")
    try:
        raw = parse_proposal(proposal, PROPOSAL, verdict.name, base_name)
    except isadl.IsaError as exc:
        verdict.reasons += [_relocate(d) for d in exc.diagnostics]
        if re.search(r"^\s*isa\b", proposal, re.M):
            verdict.reasons.append("give only the instruction block(s) (and any state they need), without an "
                                   "'isa ... extends ...' header: the proposal is wrapped in one")
        return verdict
    verdict.reasons += _redefinitions(raw, base)
    if verdict.reasons:
        return verdict
    try:
        spec = _check(raw, base_path, proposal)
    except isadl.IsaError as exc:
        verdict.reasons += [_relocate(d) for d in exc.diagnostics]
        verdict.reasons += _collision_hints(exc, base, raw)
        return verdict
    new = [n for n in spec.instructions if n not in base.instructions]
    verdict.mnemonics = new
    if not new:
        verdict.reasons.append("the proposal adds no instruction")
    rates = _rates(root, spec, _root_spec(root, base))
    hw_base = _root_spec(root, base)
    for name in new:
        insn = spec.instructions[name].insn
        where = f"{PROPOSAL}:{insn.loc.line}:{insn.loc.column}"
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
        costs = {}
        for what, e in (("cycles", insn.cycles), ("latency", insn.latency)):
            if e is None:
                continue
            try:
                costs[what] = cost_range(spec, name, e, operands=(what == "latency"))
            except CostError as exc:
                loc = getattr(e, "loc", None)
                at = f"{PROPOSAL}:{loc.line}:{loc.column}" if loc is not None and loc.line else where
                verdict.reasons.append(f"{at}: error: instruction {name}: {what} {exc}")
        try:
            work = Work(spec)
            work.stmts(insn.semantics)
            work.memory = hwcost.memory_traffic(spec, name)
        except Unbounded as exc:
            verdict.reasons.append(f"{where}: instruction {name}: {exc}")
            continue
        floor = work.floor(rates)
        verdict.floors[name] = floor
        cap = work_cap(spec)
        if work.operations > cap:
            verdict.reasons.append(
                f"{where}: error: instruction {name} does up to {work.operations} element operations, more than the "
                f"cap of {cap} one instruction may do ({WORK_CAP_FACTOR} x the {cap // WORK_CAP_FACTOR} elements of "
                "the machine's memories, register files and state): split the work over instructions")
            continue
        if insn.cycles is not None and "cycles" not in costs:
            continue  # already rejected with its reason
        declared = costs["cycles"][0] if insn.cycles is not None else 1
        verdict.cycles[name] = declared
        if declared < floor:
            verdict.reasons.append(
                f"{where}: instruction {name} declares {declared} cycles, below the floor of {floor} for the work its "
                f"semantics do ({work.describe(rates)}); declare cycles >= {floor}")
        hw = verdict.hw[name] = hwcost.estimate(hw_base, spec, name)
        if hw.too_fast:
            verdict.reasons.append(
                f"{where}: error: instruction {name} declares {hw.declared} cycles, below its critical path of "
                f"{hw.min_latency} ({' -> '.join(hw.path)}; each operator at the latency {hw.base} charges for it); "
                f"declare at least {hw.min_latency}")
    if verdict.reasons:
        return verdict
    text = wrap(base_name, tag, proposal)
    verdict.reasons += _accept(verdict, text, workdir, new, build)
    if verdict.reasons:
        return verdict
    verdict.accepted, verdict.text = True, text
    return verdict


def _root_spec(root: str, base: Spec) -> Spec:
    """The original target a chain of overlays extends (the hardware cost is against its lanes and
    latencies, not an earlier proposal's); `base` itself when it is not a shipped target."""
    try:
        return isadl.load(isadl.find_target(root))
    except (isadl.IsaError, KeyError, OSError, ValueError):
        return base


def _check(raw: ir.ISA, base_path: Path, proposal: str) -> Spec:
    """Resolve and check the parsed proposal as an overlay of the ISA at `base_path`."""
    loader = isadl._Loader()
    base_isas = loader.add_file(base_path)
    loader.sources[PROPOSAL] = proposal
    find = loader.find

    def find_base(name: str, requester: ir.ISA):
        if requester is raw:
            return next((i for i in base_isas if i.name == name), None)
        return find(name, requester)
    loader.find = find_base
    return loader.build(raw, {})


def _accept(verdict: Verdict, text: str, workdir: Path, new: list[str], build: bool) -> list[str]:
    """Write the overlay under a temporary name, build it and run the proposal's own examples on the
    built simulator; only then give it its name. Any failure: the temporary file (and a half-built
    simulator in the build cache) is removed and the reasons returned."""
    import os
    created = not workdir.exists()
    workdir.mkdir(parents=True, exist_ok=True)
    final = workdir / f"{verdict.name}.isa"
    tmp = workdir / f".{verdict.name}.{os.getpid()}.isa.tmp"
    reasons: list[str] = []
    try:
        tmp.write_text(text, encoding="utf-8")
        if build:
            reasons = _build_and_run_examples(tmp, new)
        if not reasons:
            os.replace(tmp, final)
            verdict.overlay = final
    finally:
        if tmp.exists():
            tmp.unlink()
        if reasons and created:
            try:
                workdir.rmdir()
            except OSError:
                pass
    return reasons


def _build_and_run_examples(path: Path, new: list[str]) -> list[str]:
    import os
    import shutil
    from kcgen.sim import build as simbuild
    from kcgen.sim.examples import examples, run_example
    from kcgen.sim.simulator import Simulator
    from kcgen.target import build_target
    try:
        spec = isadl.load(path)
    except isadl.IsaError as exc:  # the overlay as written must mean what was validated
        return [f"the overlay does not load: {exc}"]
    try:
        target = build_target(spec)
    except Exception as exc:  # BuildError, the generator's Unsupported, a compiler's complaint
        try:
            directory = simbuild.cache_root() / f"{spec.isa.name}-{simbuild.cache_key(spec, os.environ.get('CC') or 'gcc')}"
            if directory.is_dir() and not (directory / "sim.so").exists():
                shutil.rmtree(directory, ignore_errors=True)  # leave no half-built simulator behind
        except Exception:
            pass
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return [f"the extended target does not build, so nothing was added: {first}"]
    reasons = []
    for case in examples(spec):
        if case.name not in new:
            continue
        result = run_example(spec, case, lambda s: Simulator(s, target.built))
        if not result.ok:
            line = case.example.loc.line - 1  # the overlay's header line is not the proposal's
            reasons.append(f"{PROPOSAL}:{max(line, 1)}:{case.example.loc.column}: error: example "
                           f"{case.id} fails on the built simulator: " + result.message().replace("\n", "; "))
    return reasons


def _redefinitions(raw: ir.ISA, base: Spec) -> list[str]:
    """A proposal only adds: every name it declares must be new to the base (an instruction may not
    take the mnemonic of an existing instruction or pseudo-instruction either, in any case)."""
    b = base.isa
    existing: dict[str, str] = {}
    for kind, items in (("parameter", b.params), ("state", b.states), ("memory", b.memories),
                        ("register file", b.regfiles), ("register class", b.regclasses), ("enum", b.enums),
                        ("function", b.functions), ("float format", b.floats), ("mx format", b.mxs),
                        ("format", b.formats)):
        for item in items:
            existing.setdefault(item.name, kind)
    mnemonics = {i.name.lower(): f"instruction {i.name}" for i in b.instructions}
    for p in b.pseudos:
        mnemonics.setdefault(p.name.lower(), f"pseudo-instruction {p.name}")
    reasons = []
    for kind, items in (("parameter", raw.params), ("state", raw.states), ("memory", raw.memories),
                        ("register file", raw.regfiles), ("register class", raw.regclasses), ("enum", raw.enums),
                        ("function", raw.functions), ("float format", raw.floats), ("mx format", raw.mxs),
                        ("format", raw.formats)):
        for item in items:
            if item.name in existing and not getattr(item, "override", False):
                reasons.append(f"{PROPOSAL}:{item.loc.line}:{item.loc.column}: error: a proposal only adds: {kind} "
                               f"{item.name} redefines the base's {existing[item.name]} {item.name}; choose a new name")
    for kind, items in (("instruction", raw.instructions), ("pseudo-instruction", raw.pseudos)):
        for item in items:
            old = mnemonics.get(item.name.lower())
            if old:
                reasons.append(f"{PROPOSAL}:{item.loc.line}:{item.loc.column}: error: a proposal only adds: {kind} "
                               f"{item.name} redefines (or shadows) the base's {old}; choose a new mnemonic")
    return reasons


class CostError(Exception):
    pass


def cost_range(spec: Spec, name: str, e: ir.Expr, operands: bool = False) -> tuple[int, int]:
    """The least and most values of an instruction's `cycles` or `latency` expression `e`, computed
    as the C simulator computes it (kcgen/sim/cgen.py: each subexpression in its checked type, 64-bit
    at most, the result cast to uint64), over every value of the operands it reads (`operands`: may
    it read them at all). Rejected with CostError: a literal or an intermediate value that does not
    fit its type (the simulator would wrap it or not compile it), a division by zero, a shift by the
    type's width or more, a result outside [1, CYCLES_MAX], an operand whose values are too many to
    enumerate, or a construct other than integer arithmetic, comparisons, ?: and min/max. With no
    value wrapping, the simulator's figure is the exact one computed here."""
    from itertools import product

    from kcgen.sim.typed import type_instruction
    body = type_instruction(spec, name)
    ops = spec.instructions[name].operands
    used = sorted({n.id for n in _names(e)} & set(body.operands))
    if used and not operands:
        raise CostError(f"must be a constant expression of the parameters (it reads {', '.join(used)}; its cost may "
                        f"not depend on operand values)")
    domains = []
    for n in used:
        o = ops[n]
        hi = o.hi if o.kind != "reg" or not o.count else min(o.hi, o.count - 1)
        domains.append(range(o.lo, hi + 1))
    combos = 1
    for d in domains:
        combos *= len(d)
    if combos > (1 << 16):
        raise CostError(f"depends on operands ({', '.join(used)}) with {combos} combinations of values: too many to "
                        f"bound; make it depend on parameters (or on narrower operands)")
    values = [_eval_cost(spec, body, e, dict(zip(used, vals))) for vals in product(*domains)]
    lo, hi = min(values), max(values)
    if lo < 1:
        raise CostError(f"can be {lo}: it must be at least 1")
    if hi > CYCLES_MAX:
        raise CostError(f"can be {hi}: at most 2^31 = {CYCLES_MAX} cycles are allowed for one instruction")
    return lo, hi


def _names(e):
    if isinstance(e, ir.Name):
        yield e
    for child in vars(e).values():
        for c in (child if isinstance(child, tuple) else (child,)):
            if hasattr(c, "__dataclass_fields__") and not isinstance(c, ir.Loc):
                yield from _names(c)


def _fits(v: int, t) -> bool:
    from isadl.types import BoolT, IntLitT, IntT
    if isinstance(t, IntLitT):
        return -(1 << 63) <= v < (1 << 63)
    if isinstance(t, BoolT):
        return v in (0, 1)
    if isinstance(t, IntT):
        return (-(1 << (t.width - 1)) <= v < (1 << (t.width - 1))) if t.signed else 0 <= v < (1 << t.width)
    return False


def _eval_cost(spec: Spec, body, e: ir.Expr, env: dict[str, int]) -> int:
    from isadl.types import BoolT, IntLitT, IntT

    def show(x) -> str:
        from isadl.printer import expr as expr_text
        try:
            return expr_text(x)
        except Exception:
            return type(x).__name__

    def ev(x) -> int:
        t = body.type(x)
        if not isinstance(t, (IntT, IntLitT, BoolT)):
            raise CostError(f"must be integer arithmetic ({show(x)} is {t})")
        if isinstance(x, ir.Num):
            v = x.value
        elif isinstance(x, ir.Name):
            if x.id in env:
                v = env[x.id]
            elif x.id in spec.params:
                v = int(spec.params[x.id])
            elif x.id in ("true", "false"):
                v = int(x.id == "true")
            else:
                raise CostError(f"may read only parameters and operands, not {x.id}")
        elif isinstance(x, ir.Unary):
            a = ev(x.operand)
            v = int(a == 0) if x.op == "!" else (-a if x.op == "-" else ~a)
        elif isinstance(x, ir.Cond):
            v = ev(x.then) if ev(x.cond) else ev(x.orelse)
        elif isinstance(x, ir.Call) and x.func in ("min", "max") and len(x.args) >= 1:
            args = [ev(a) for a in x.args]
            v = min(args) if x.func == "min" else max(args)
        elif isinstance(x, ir.Binary):
            if x.op == "**":
                try:
                    v = int(spec.params_eval(x))
                except Exception:
                    raise CostError("may raise only parameters to constant powers") from None
            elif x.op in ("&&", "||"):
                a = ev(x.left)
                v = int(bool(a) and bool(ev(x.right))) if x.op == "&&" else int(bool(a) or bool(ev(x.right)))
            else:
                a, b = ev(x.left), ev(x.right)
                op = x.op
                if op in ("<<", ">>"):
                    w = t.width if isinstance(t, IntT) else 64
                    if not 0 <= b < w:
                        raise CostError(f"shifts by {b}, not within 0..{w - 1} (the simulator would give 0)")
                    v = a << b if op == "<<" else a >> b
                elif op in ("/", "%"):
                    if b == 0:
                        raise CostError("divides by zero")
                    q = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)  # C: towards zero
                    v = q if op == "/" else a - q * b
                elif op in ("==", "!=", "<", "<=", ">", ">="):
                    v = int({"==": a == b, "!=": a != b, "<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op])
                elif op in ("+", "-", "*", "&", "|", "^"):
                    v = {"+": a + b, "-": a - b, "*": a * b, "&": a & b, "|": a | b, "^": a ^ b}[op]
                else:
                    raise CostError(f"uses '{op}', which a cost expression may not")
        else:
            raise CostError(f"must be integer arithmetic, comparisons, ?: and min/max of parameters and operands, "
                            f"not {show(x)}")
        if not _fits(v, t):
            raise CostError(f"evaluates {show(x)} to {v}, which does not fit the simulator's {t} arithmetic "
                            f"(it would wrap around)")
        return v
    v = ev(e)
    if not _fits(v, IntLitT()):
        raise CostError(f"is {v}, which does not fit 64 bits")
    return v


def _next_tag(workdir: Path, root: str) -> str:
    n = 1
    while list(workdir.glob(f"*_x{n}.isa")):
        n += 1
    return f"x{n}"


def _relocate(d) -> str:
    """A diagnostic located in the proposal as the agent wrote it (GNU style, its own line numbers)."""
    if d.loc.path == PROPOSAL and d.loc.line:
        return f"{PROPOSAL}:{d.loc.line}:{d.loc.column}: {d.severity}: {d.message}"
    return f"{d.severity}: {d.message}"


_COLLIDE = re.compile(r"instructions (\w+) and (\w+) cannot be told apart")


def _collision_hints(exc: isadl.IsaError, base: Spec, overlay: ir.ISA) -> list[str]:
    """For each new instruction whose encoding collides with an existing one: free opcodes."""
    hints = []
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


def _rates(target: str, spec: Spec, base: Spec) -> dict:
    """The target's best rates per cycle (tasks/roofline.yaml): elementwise, MAC, off-chip bytes; and
    each of the base's memories' port rates (`ports`)."""
    from .roofline import _rate, _table
    peaks = _table().get(target) or {}
    params = dict(spec.params)
    best = lambda kind: max((_rate(v, params) for v in (peaks.get(kind) or {}).values()), default=Fraction(1))  # noqa: E731
    bandwidth = _rate(peaks.get("bytes_per_cycle", 1 << 30), params)
    every_memory = None if peaks.get("offchip") else bandwidth  # the roofline's bandwidth is every memory's
    return {"elem": best("elem"), "mac": best("mac"), "bytes": bandwidth, "offchip": peaks.get("offchip"),
            "ports": port_rates(base, every_memory)}


_PORTS_CACHE: dict[int, tuple[Spec, dict]] = {}  # keeps the spec alive, so its id is not reused


def port_rates(base: Spec, every_memory: Optional[Fraction] = None) -> dict[str, tuple[Fraction, Fraction]]:
    """Bytes per cycle each memory of the base reads and writes at best: the most any of its instructions
    with a constant cost moves (its bytes over its `cycles`; PLENA's vector SRAM: V_ADD_VV reads two
    rows and writes one a cycle), or the roofline's bandwidth where that covers every memory (coral,
    boom, amdnpu: their vector loads' costs depend on vl) when it is higher. A memory no instruction
    reads (or writes) at a known rate has no rate that way, and is not charged."""
    hit = _PORTS_CACHE.get(id(base))
    if hit is None or hit[0] is not base:
        best: dict[str, list[Fraction]] = {m.name: [Fraction(0), Fraction(0)] for m in base.isa.memories}
        for name, ins in base.instructions.items():
            cycles = hwcost.const(base, ins.insn.cycles) if ins.insn.cycles is not None else 1
            if not cycles or cycles < 1:
                continue
            try:
                traffic = hwcost.memory_traffic(base, name)
            except Exception:
                continue
            for mem, moved in traffic.items():
                for i in (0, 1):
                    best[mem][i] = max(best[mem][i], Fraction(moved[i], cycles))
        hit = _PORTS_CACHE[id(base)] = (base, best)
    return {m: (max(r, every_memory or 0), max(w, every_memory or 0)) for m, (r, w) in hit[1].items()}


class Unbounded(Exception):
    pass


WORK_CAP_FACTOR = 16  # one instruction may touch every element of the machine this many times, no more


def work_cap(spec: Spec) -> int:
    """The most element operations one instruction may do: WORK_CAP_FACTOR times the elements of every
    memory, register file and state item (an instruction doing more is a program, and a hang: the
    step budget counts instructions, not the work inside one)."""
    total = sum(int(spec.params_eval(m.size)) for m in spec.isa.memories)
    total += sum(int(spec.params_eval(rf.count)) for rf in spec.isa.regfiles)
    return WORK_CAP_FACTOR * max(total, 1)


class Work:
    """The work an instruction's semantics do: element operations, multiply-accumulates inside
    reductions, and bytes moved to or from off-chip memory."""

    def __init__(self, spec: Spec):
        self.spec = spec
        self.elem = 0
        self.mac = 0
        self.offchip_bytes = 0
        self.depth = 0  # levels of the deepest reduction: a tree over n terms is log2(n) deep
        self.memory: dict[str, tuple[int, int]] = {}  # base memory -> bytes read, written (hwcost.memory_traffic)
        self._offchip = None
        self._vars: set[str] = set()  # mutable locals declared so far (a loop updating one is a reduction)
        self._functions = {f.name: f for f in spec.isa.functions}
        self._inside: set[str] = set()  # the functions being inlined (a call chain)

    @property
    def operations(self) -> int:
        """Element operations in all: element results, reduction terms, multiply-accumulates."""
        return self.elem + self.mac

    def trips(self, lo: ir.Expr, hi: ir.Expr, what: str) -> int:
        """The most iterations: a bound known only at run time counts at its cap, min(x, LIMIT); a start
        known only at run time counts from 0."""
        most = hwcost.loop_bound(self.spec, hi)
        if most is None:
            raise Unbounded(f"the bounds of {what} must be constant expressions of the parameters, or "
                            f"capped with min(..., LIMIT)")
        return max(most - (hwcost.const(self.spec, lo) or 0), 0)

    def stmts(self, body, times: int = 1) -> None:
        for s in body:
            if isinstance(s, ir.For):
                n = self.trips(s.lo, s.hi, f"'for {s.var}'")
                if n > 1 and any(isinstance(a, ir.Assign) and isinstance(a.target, ir.Name) and a.target.id in self._vars
                                 for a in ir.statements(s.body)):
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
        if isinstance(e, ir.Call) and e.func in self._functions and e.func not in self._inside:
            self._inside.add(e.func)  # a helper function is inlined where it is called: its work is the caller's
            self.expr(self._functions[e.func].body, times)
            self._inside.discard(e.func)
        for child in vars(e).values():
            for c in (child if isinstance(child, tuple) else (child,)):
                if isinstance(c, (ir.Num, ir.FloatLit, ir.Name, ir.Index, ir.Slice, ir.Call, ir.Reduce, ir.Unary,
                                  ir.Binary, ir.Cond)):
                    self.expr(c, times)

    def floor(self, rates: dict) -> int:
        return max(1, self.depth, math.ceil(max(Fraction(self.elem) / rates["elem"], Fraction(self.mac) / rates["mac"],
                                                Fraction(self.offchip_bytes) / rates["bytes"],
                                                *(moved / rate for moved, rate, _ in self._ports(rates)))))

    def _ports(self, rates: dict):
        """(bytes, bytes per cycle, what) of each direction of each base memory the instruction uses."""
        for mem, moved in sorted(self.memory.items()):
            for i, what in ((0, "read from"), (1, "written to")):
                rate = rates.get("ports", {}).get(mem, (0, 0))[i]
                if moved[i] and rate:
                    yield Fraction(moved[i]), rate, f"{what} {mem}"

    def describe(self, rates: dict) -> str:
        parts = [f"{self.elem} element results and reduction terms at {float(rates['elem']):g} per cycle"]
        if self.mac:
            parts.append(f"{self.mac} multiply-accumulates at {float(rates['mac']):g} per cycle")
        if self.offchip_bytes:
            parts.append(f"{self.offchip_bytes} off-chip bytes at {float(rates['bytes']):g} per cycle")
        for moved, rate, what in self._ports(rates):
            parts.append(f"{moved} bytes {what} at {float(rate):g} per cycle (its best port rate in the base)")
        if self.depth:
            parts.append(f"a reduction {self.depth} levels deep (a tree over its terms)")
        return ", ".join(parts)
