"""Derived, display-ready facts about a checked ISA (values, names, ranges), shared by every renderer.

Everything here reads only the checked ``isadl.Spec`` and its IR; nothing is formatted for a
particular output (Markdown, HTML, text index): those are in their own modules.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from isadl import ir
from isadl.check import DIALECT_OPTIONS, InsnSpec, OperandSpec, Spec
from isadl.params import EvalError, evaluate
from isadl.printer import type_ref
from isadl.syntax import Operand, Template

from .pretty import expr
from .semantics import quote as semantics_quote

_IMM = re.compile(r"(i|u|pcrel)([0-9]+)$")


class _NotConstant(Exception):
    pass


def const_value(spec: Spec, e: Optional[ir.Expr], extra: Optional[dict] = None) -> Optional[int]:
    """The value of ``e`` under the spec's (overridden) parameters, or None when it is not a
    constant (it mentions operands, registers, state, or calls something non-constant)."""
    if e is None:
        return None

    def lookup(n: ir.Name) -> int:
        if extra and n.id in extra:
            return extra[n.id]
        if n.id in spec.params:
            return spec.params[n.id]
        raise _NotConstant()
    try:
        return evaluate(e, lookup)
    except (_NotConstant, EvalError, ZeroDivisionError, OverflowError):
        return None


def is_literal(e: Optional[ir.Expr]) -> bool:
    return isinstance(e, ir.Num) or (isinstance(e, ir.Unary) and e.op == "-" and isinstance(e.operand, ir.Num))


def show_int(v: int) -> str:
    """Decimal, with the hex form too when the hex form is the more telling one."""
    if abs(v) >= 65536:
        return f"{v} ({'-' if v < 0 else ''}{hex(abs(v))})"
    return str(v)


def value_text(spec: Spec, e: Optional[ir.Expr]) -> str:
    """``64`` for a literal, ``64 = MLEN`` for a constant formula, the formula alone otherwise."""
    if e is None:
        return ""
    v = const_value(spec, e)
    if v is None:
        return expr(e)
    if is_literal(e):
        return show_int(v)
    return f"{show_int(v)} = {expr(e)}"


def paragraphs(doc: str) -> list[str]:
    """Doc text split into paragraphs (blank-line separated), each with its lines joined."""
    out = []
    for block in re.split(r"\n\s*\n", doc.strip()):
        text = " ".join(line.strip() for line in block.splitlines() if line.strip())
        if text:
            out.append(text)
    return out


def one_line(doc: str) -> str:
    return " ".join(paragraphs(doc))


def dedent(code: str) -> str:
    """Example code without its blank edge lines and common indentation."""
    lines = [line.rstrip() for line in code.split("\n")]
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    pad = min((len(x) - len(x.lstrip()) for x in lines if x.strip()), default=0)
    return "\n".join(x[pad:] for x in lines)


def plural(n: int, word: str, many: str = "") -> str:
    return f"{n} {word if n == 1 else (many or word + 's')}"


def counts(spec: Spec) -> str:
    isa = spec.isa
    return ", ".join([plural(len(isa.instructions), "instruction"), plural(len(isa.pseudos), "pseudo-instruction"),
                      plural(len(isa.params), "parameter"), plural(len(isa.regfiles), "register file"),
                      plural(len(isa.memories), "memory", "memories")])


# ---- header -------------------------------------------------------------------------------------

def word(spec: Spec) -> int:
    return spec.isa.word or 32


def endian(spec: Spec) -> str:
    return spec.isa.endian or "little"


def dialect_values(spec: Spec, name: str) -> Optional[tuple]:
    if spec.isa.dialect:
        for o in spec.isa.dialect.options:
            if o.name == name:
                return o.values
    return None


def dialect_text(o: ir.DialectOpt) -> str:
    """Option values as written: strings quoted (``";", "//"``), names and directives bare."""
    quoted = DIALECT_OPTIONS.get(o.name, ("",))[0] == "str"
    return ", ".join(semantics_quote(str(v)) if quoted else str(v) for v in o.values)


def pcrel_base(spec: Spec) -> str:
    v = dialect_values(spec, "pcrel_base")
    return str(v[0]) if v else "insn"


# ---- parameters -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ParamRow:
    name: str
    value: Optional[int]
    formula: str
    overridden: bool
    doc: str

    @property
    def value_text(self) -> str:
        return "?" if self.value is None else show_int(self.value)


def params(spec: Spec) -> list[ParamRow]:
    return [ParamRow(p.name, spec.params.get(p.name), expr(p.value), p.name in spec.defines, one_line(p.doc))
            for p in spec.isa.params]


# ---- numeric formats -----------------------------------------------------------------------------

@dataclass(frozen=True)
class FloatRow:
    name: str
    exp: int
    man: int
    bias: int
    flags: tuple[str, ...]
    bits: int
    doc: str


def floats(spec: Spec) -> list[FloatRow]:
    rows = []
    for f in spec.isa.floats:
        args = {a.key: a.value for a in f.args}
        exp, man = int(args.get("exp", 0)), int(args.get("man", 0))
        flags = tuple(a.key for a in f.args if a.value is None)
        bias = int(args["bias"]) if "bias" in args else (1 << (exp - 1)) - 1
        bits = exp + man + (0 if "unsigned" in flags else 1)
        rows.append(FloatRow(f.name, exp, man, bias, flags, bits, one_line(f.doc)))
    return rows


@dataclass(frozen=True)
class MxRow:
    name: str
    elem: str
    scale: str
    block: int
    block_bits: Optional[int]
    doc: str


def _format_bits(spec: Spec, name: str) -> Optional[int]:
    for f in floats(spec):
        if f.name == name:
            return f.bits
    m = re.fullmatch(r"[iu]([0-9]+)|f(32|64)", name)
    if m:
        return int(m.group(1) or m.group(2))
    return None


def mxs(spec: Spec) -> list[MxRow]:
    rows = []
    for m in spec.isa.mxs:
        args = {a.key: a.value for a in m.args}
        elem, scale, block = str(args.get("elem", "")), str(args.get("scale", "")), int(args.get("block", 0))
        eb, sb = _format_bits(spec, elem), _format_bits(spec, scale)
        rows.append(MxRow(m.name, elem, scale, block, None if eb is None or sb is None else block * eb + sb,
                          one_line(m.doc)))
    return rows


# ---- registers -------------------------------------------------------------------------------------

def regfile_count(spec: Spec, rf: ir.RegFile) -> int:
    return const_value(spec, rf.count) or 0


def reg_name(spec: Spec, file: str, index: int) -> str:
    """The pattern (canonical) assembly name of register ``index`` of ``file``."""
    rf = spec.isa.regfile(file)
    pattern = (rf.asm if rf and rf.asm else file + "{n}")
    return pattern.replace("{n}", str(index))


def preserved_text(spec: Spec) -> tuple[str, str]:
    """The ABI's callee-saved registers by the names the ABI gives (`s0-s11, sp`) and, when those are not
    the canonical names, by their canonical names with runs joined (`x2, x8, x9, x18..x27`)."""
    abi = spec.isa.abi
    written = ir.name_ranges(abi.preserve) if abi else ""
    if all(name == reg_name(spec, f, i) for name, f, i in spec.preserved_registers()):
        return written, ""
    order = {rf.name: i for i, rf in enumerate(spec.isa.regfiles)}
    regs = sorted(set(spec.preserved()), key=lambda r: (order.get(r[0], len(order)), r[1]))
    runs: list[list] = []  # [file, first index, count]
    for file, idx in regs:
        if runs and runs[-1][0] == file and runs[-1][1] + runs[-1][2] == idx:
            runs[-1][2] += 1
        else:
            runs.append([file, idx, 1])
    return written, ", ".join(reg_range(spec, *run) for run in runs)


def reg_range(spec: Spec, file: str, lo: int, count: int) -> str:
    if count <= 0:
        return ""
    if count == 1:
        return reg_name(spec, file, lo)
    if count == 2:
        return f"{reg_name(spec, file, lo)}, {reg_name(spec, file, lo + 1)}"
    return f"{reg_name(spec, file, lo)}..{reg_name(spec, file, lo + count - 1)}"


def aliases(spec: Spec, rf: ir.RegFile) -> list[tuple[str, str]]:
    """(alias, canonical register name) in declaration order."""
    out = []
    for a in rf.aliases:
        file, idx = spec.regnames.get(a.name, (rf.name, a.target if isinstance(a.target, int) else -1))
        out.append((a.name, reg_name(spec, file, idx) if idx >= 0 else str(a.target)))
    return out


def group_text(spec: Spec, rf: ir.RegFile) -> str:
    """``l{n} = {r[16 + 2 * n], r[17 + 2 * n]} (low part first); l0 = {r16, r17}``."""
    if not rf.group:
        return ""
    parts = ", ".join(expr(g) for g in rf.group)
    first = []
    for g in rf.group:
        if isinstance(g, ir.Index) and isinstance(g.base, ir.Name):
            i = const_value(spec, g.index, {"n": 0})
            first.append(reg_name(spec, g.base.id, i) if i is not None else expr(g))
    head = reg_name(spec, rf.name, 0)
    return f"{{{parts}}}, lowest part first; e.g. {head} = {{{', '.join(first)}}}"


def reg_type(spec: Spec, name: str, fallback: ir.TypeRef) -> str:
    t = spec.types.get(name)
    return str(t) if t is not None else type_ref(fallback)


# ---- state and memories ------------------------------------------------------------------------------

def dims_text(spec: Spec, dims: tuple[ir.Expr, ...]) -> str:
    """``[BLEN][BLEN] = [4][4]``, or ``[8]`` when the sizes are literals."""
    written = "".join(f"[{expr(d)}]" for d in dims)
    values = [const_value(spec, d) for d in dims]
    if all(is_literal(d) for d in dims) or None in values:
        return written
    return f"{written} = " + "".join(f"[{v}]" for v in values)


@dataclass(frozen=True)
class MemoryRow:
    name: str
    elem: str
    elements: Optional[int]
    size_formula: str
    bytes: Optional[int]
    elem_bits: Optional[int]
    base: Optional[int]
    align: Optional[int]
    readonly: bool
    doc: str


def memories(spec: Spec) -> list[MemoryRow]:
    rows = []
    for m in spec.isa.memories:
        n = const_value(spec, m.size)
        t = spec.types.get(m.name)
        bits = t.bits if t is not None else _format_bits(spec, m.elem)
        nbytes = n * bits // 8 if n is not None and bits is not None and bits % 8 == 0 else None
        rows.append(MemoryRow(m.name, m.elem, n, "" if is_literal(m.size) else expr(m.size), nbytes, bits,
                              const_value(spec, m.base), const_value(spec, m.align), m.readonly, one_line(m.doc)))
    return rows


# ---- operands -------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class OperandRow:
    name: str
    kind: str  # as written in the syntax: x, i12, pcrel13, an enum name
    category: str  # register | immediate | pc-relative | enum
    accepts: str
    default: str  # "" when required
    field: str  # the encoding field holding it ("" for pseudos)


def _operand_spec(spec: Spec, op: Operand) -> Optional[OperandSpec]:
    """An OperandSpec for a pseudo's operand (the checker keeps them only for instructions)."""
    m = _IMM.match(op.kind)
    if m:
        width = int(m.group(2))
        return OperandSpec(op.name, "pcrel" if m.group(1) == "pcrel" else "imm", width, m.group(1) != "u")
    rf = spec.isa.regfile(op.kind)
    if rf is not None:
        n = regfile_count(spec, rf)
        return OperandSpec(op.name, "reg", max(1, (n - 1).bit_length()), False, op.kind, 0, n)
    for rc in spec.isa.regclasses:
        if rc.name == op.kind:
            lo, hi = const_value(spec, rc.lo) or 0, const_value(spec, rc.hi) or 0
            return OperandSpec(op.name, "reg", max(1, (hi - lo).bit_length()), False, rc.file, lo, hi - lo + 1)
    for e in spec.isa.enums:
        if e.name == op.kind:
            return OperandSpec(op.name, "enum", 0, False, e.name)
    return None


def _accepts(spec: Spec, s: OperandSpec, shift: int) -> str:
    if s.kind == "reg":
        text = reg_range(spec, s.regfile, s.offset, s.count)
        rf = spec.isa.regfile(s.regfile)
        if rf and any(spec.regnames.get(a.name, ("", -1))[1] in range(s.offset, s.offset + s.count)
                      for a in rf.aliases):
            text += " (or an alias)"
        return f"register {text}"
    if s.kind == "enum":
        e = next((e for e in spec.isa.enums if e.name == s.regfile), None)
        items = ", ".join(f"{it.name} ({it.value})" for it in e.items) if e else ""
        if e is not None and e.numbers:
            return f"one of {items}, or any number 0..{(1 << int(e.numbers[1:])) - 1}"
        return f"one of {items}"
    lo, hi = s.lo, s.hi
    step = 1 << shift
    if shift:
        hi -= hi % step
    rng = f"{show_int(lo)}..{show_int(hi)}"
    mult = f", a multiple of {step}" if shift else ""
    if s.kind == "pcrel":
        base = "this instruction" if pcrel_base(spec) == "insn" else "the next instruction"
        return f"a label, or an offset {rng} from {base}{mult}"
    return f"{'signed' if s.signed else 'unsigned'} {s.width}-bit integer {rng}{mult}"


def _default(spec: Spec, s: OperandSpec, raw) -> str:
    if raw is None:
        return ""
    if s.kind == "reg" and isinstance(raw, int):
        return reg_name(spec, s.regfile, raw + s.offset) if s.count else str(raw)
    if s.kind == "enum" and isinstance(raw, int):
        e = next((e for e in spec.isa.enums if e.name == s.regfile), None)
        for it in (e.items if e else ()):
            if it.value == raw:
                return it.name
    return str(raw)


_CATEGORY = {"reg": "register", "imm": "immediate", "pcrel": "pc-relative", "enum": "enum"}


def operands(spec: Spec, template: Template, insn: Optional[InsnSpec] = None) -> list[OperandRow]:
    op_field = {o: f for f, o in insn.fields.items()} if insn else {}
    rows = []
    for op in template.operands:
        s = insn.operands.get(op.name) if insn else _operand_spec(spec, op)
        field = op_field.get(op.name, "")
        if s is None:
            dflt = "" if op.default is None else str(op.default)
            rows.append(OperandRow(op.name, op.kind, "?", op.kind, dflt, field))
            continue
        shift = 0
        if insn and insn.format and field in insn.format.fields:
            shift = insn.format.fields[field].shift
        rows.append(OperandRow(op.name, op.kind, _CATEGORY[s.kind], _accepts(spec, s, shift),
                               _default(spec, s, op.default), field))
    return rows


def syntax_form(template: Template) -> str:
    """``beq rs1, rs2, target``: the syntax with operand names only (optional ones bracketed)."""
    out = [template.mnemonic]
    for p in template.parts:
        if isinstance(p, Operand):
            out.append(f"[{p.name}]" if p.optional else p.name)
        else:
            out.append(p)
    return "".join(out)


# ---- timing ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class TimingFacts:
    unit: str
    slot: str
    cycles: str  # "" when not given
    cycles_value: Optional[int]
    latency: str  # "" when not given (then it equals cycles)
    latency_value: Optional[int]


def timing(spec: Spec, insn: ir.Instruction) -> TimingFacts:
    return TimingFacts(insn.unit, insn.slot,
                       expr(insn.cycles) if insn.cycles is not None else "", const_value(spec, insn.cycles),
                       expr(insn.latency) if insn.latency is not None else "", const_value(spec, insn.latency))


def bundles_with(spec: Spec, slot: str) -> list[str]:
    """The bundle formats that have a place for ``slot``."""
    return [f.name for f in spec.isa.formats
            if f.bundle and any(fl.kind == "plain" and fl.name == slot for fl in f.fields)]


def cost_text(formula: str, value: Optional[int]) -> str:
    if not formula:
        return ""
    if value is None:
        return f"{formula} (depends on operands or state)"
    return formula if formula == str(value) else f"{value} = {formula}"


def unit_options(spec: Spec, u: ir.Unit) -> str:
    opts = []
    if u.count is not None:
        opts.append(f"count {value_text(spec, u.count)}")
    if u.pipelined:
        opts.append("pipelined")
    if u.is_async:
        opts.append("asynchronous")
    if u.queue is not None:
        opts.append(f"queue {value_text(spec, u.queue)}")
    return ", ".join(opts)


# ---- sections -------------------------------------------------------------------------------------------

def instruction_groups(spec: Spec) -> list[tuple[str, str, list[ir.Instruction]]]:
    """(title, doc, instructions) by section, in order of first appearance; declaration order within."""
    docs = {}
    for s in spec.isa.sections:
        docs.setdefault(s.title, s.doc)
    groups: dict[str, list[ir.Instruction]] = {}
    for insn in spec.isa.instructions:
        groups.setdefault(insn.section, []).append(insn)
    return [(title, docs.get(title, "") if title else "", items) for title, items in groups.items()]


def insn_warnings(insn: ir.Instruction) -> list[tuple[str, str]]:
    """(condition, message) of the instruction's assembler warnings, where the IR has them."""
    return [(expr(w.cond), w.message) for w in getattr(insn, "warnings", ())]
