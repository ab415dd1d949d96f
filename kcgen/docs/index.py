"""The plain-text search index that ``grep_docs`` reads.

One record per fact group (ISA, parameter, register file, memory, ABI, …) and per instruction and
pseudo-instruction. Records are separated by one blank line and never contain one. Each line is
``LABEL: value``; a multi-line value is written as ``LABEL:`` followed by lines indented by two
spaces (semantics: one statement a line). The first line of a record names what it describes
(``INSTRUCTION: BEQ``), so every grep hit is a whole, self-describing block.
"""
from __future__ import annotations

from isadl import ir
from isadl.check import Spec
from isadl.printer import type_ref

from . import encoding, facts, semantics
from .pretty import expr

INDENT = "  "


class Record:
    def __init__(self, label: str, value: str):
        self.lines: list[str] = []
        self.add(label, value)

    def add(self, label: str, value) -> "Record":
        """One line ``LABEL: value``; a multi-line value (or a list) becomes an indented block."""
        if value is None or value == "" or value == []:
            return self
        if isinstance(value, str):
            value = value.split("\n")
        value = [v.rstrip() for v in value if v.strip()]
        if not value:
            return self
        if len(value) == 1 and not value[0].startswith(" "):
            self.lines.append(f"{label}: {value[0].strip()}")
        else:
            self.block(label, value)
        return self

    def block(self, label: str, lines, head: str = "") -> "Record":
        self.lines.append(f"{label}: {head}".rstrip() if head else f"{label}:")
        self.lines.extend(INDENT + v.rstrip() for v in lines if v.strip())
        return self

    def text(self) -> str:
        return "\n".join(self.lines)


def _examples(r: Record, examples) -> None:
    for ex in examples:
        code = [line for line in facts.dedent(ex.code).split("\n") if line.strip()]
        if len(code) == 1:
            r.add("EXAMPLE", code[0])
        else:
            r.block("EXAMPLE", code)
        r.add("EXAMPLE_DOC", facts.one_line(ex.doc))
        if ex.given:
            r.add("GIVEN", semantics.inline(ex.given))
        if ex.expect:
            r.add("EXPECT", "; ".join(expr(e) for e in ex.expect))


def _header(spec: Spec) -> Record:
    isa = spec.isa
    r = Record("ISA", isa.name)
    r.add("TITLE", isa.title).add("VERSION", isa.version)
    r.add("EXTENDS", isa.extends)
    r.add("WORD", f"{facts.word(spec)} bits, {facts.endian(spec)}-endian")
    r.add("CONTENTS", facts.counts(spec))
    if spec.defines:
        r.add("OVERRIDES", ", ".join(f"-D {k}={v}" for k, v in spec.defines.items()))
    r.add("DOC", facts.one_line(isa.doc))
    return r


def _storage(spec: Spec) -> list[Record]:
    out = []
    for p in facts.params(spec):
        r = Record("PARAM", p.name).add("VALUE", p.value_text).add("FORMULA", p.formula)
        if p.overridden:
            r.add("SET_BY", "-D override")
        out.append(r.add("DOC", p.doc))
    for c in spec.isa.constraints:
        out.append(Record("CONSTRAINT", expr(c.cond)).add("MESSAGE", c.message))
    for f in facts.floats(spec):
        out.append(Record("FLOAT", f.name).add("BITS", str(f.bits)).add("EXPONENT", str(f.exp))
                   .add("MANTISSA", str(f.man)).add("BIAS", str(f.bias)).add("FLAGS", ", ".join(f.flags))
                   .add("DOC", f.doc))
    for m in facts.mxs(spec):
        out.append(Record("MX", m.name).add("ELEMENT", m.elem).add("SCALE", m.scale).add("BLOCK", str(m.block))
                   .add("BITS_PER_BLOCK", "" if m.block_bits is None else str(m.block_bits)).add("DOC", m.doc))
    for rf in spec.isa.regfiles:
        n = facts.regfile_count(spec, rf)
        r = Record("REGISTERS", rf.name).add("COUNT", str(n)).add("TYPE", facts.reg_type(spec, rf.name, rf.type))
        r.add("NAMES", facts.reg_range(spec, rf.name, 0, n))
        r.add("ALIASES", ", ".join(f"{a}={t}" for a, t in facts.aliases(spec, rf)))
        r.add("ZERO", ", ".join(rf.zero))
        r.add("GROUP", facts.group_text(spec, rf))
        if rf.readonly:
            r.add("ACCESS", "read-only")
        out.append(r.add("DOC", facts.one_line(rf.doc)))
    for rc in spec.isa.regclasses:
        lo, hi = facts.const_value(spec, rc.lo), facts.const_value(spec, rc.hi)
        r = Record("REGCLASS", rc.name).add("RANGE", f"{rc.file}[{expr(rc.lo)}..{expr(rc.hi)}]")
        if lo is not None and hi is not None:
            r.add("NAMES", facts.reg_range(spec, rc.file, lo, hi - lo + 1))
        out.append(r.add("DOC", facts.one_line(rc.doc)))
    for s in spec.isa.states:
        r = Record("STATE", s.name).add("SHAPE", facts.dims_text(spec, s.dims) or "scalar")
        r.add("TYPE", facts.reg_type(spec, s.name, s.type))
        r.add("INIT", expr(s.init) if s.init is not None else "0")
        if s.readonly:
            r.add("ACCESS", "read-only")
        out.append(r.add("DOC", facts.one_line(s.doc)))
    for m in facts.memories(spec):
        size = ("?" if m.elements is None else facts.show_int(m.elements)) + " elements"
        if m.size_formula:
            size += f" (= {m.size_formula})"
        if m.bytes is not None:
            size += f", {facts.show_int(m.bytes)} bytes"
        r = Record("MEMORY", m.name).add("ELEMENT", m.elem).add("SIZE", size)
        r.add("BASE", "" if m.base is None else hex(m.base)).add("ALIGN", "" if m.align is None else str(m.align))
        if m.readonly:
            r.add("ACCESS", "read-only")
        out.append(r.add("DOC", m.doc))
    for e in spec.isa.enums:
        out.append(Record("ENUM", e.name).add("VALUES", ", ".join(f"{it.name}={it.value}" for it in e.items))
                   .add("DOC", facts.one_line(e.doc)))
    return out


def _machine(spec: Spec) -> list[Record]:
    isa = spec.isa
    out = []
    if isa.abi:
        a = isa.abi
        r = Record("ABI", isa.name).add("ENTRY", facts.value_text(spec, a.entry))
        r.add("ARGS", ", ".join(a.args))
        r.add("END", " ".join(a.end) if a.end else "runs past its last instruction")
        if a.stack:
            r.add("STACK", f"{a.stack[0]} = {facts.value_text(spec, a.stack[1])}")
        written, canon = facts.preserved_text(spec)
        r.add("PRESERVE", (written + (f" = {canon}" if canon else "")) if a.preserve else "none")
        for g in a.regions:
            lo, hi = facts.const_value(spec, g.lo), facts.const_value(spec, g.hi)
            vals = f" = [{lo}..{hi})" if lo is not None and hi is not None and not (
                facts.is_literal(g.lo) and facts.is_literal(g.hi)) else ""
            doc = f" -- {facts.one_line(g.doc)}" if g.doc else ""
            r.add("REGION", f"{g.name}: {g.memory}[{expr(g.lo)}..{expr(g.hi)}]{vals} {g.role}{doc}")
        out.append(r.add("DOC", facts.one_line(a.doc)))
    if isa.timing:
        t = isa.timing
        r = Record("TIMING", t.model)
        for u in t.units:
            opts = facts.unit_options(spec, u)
            r.add("UNIT", u.name + (f" ({opts})" if opts else "") + (f" -- {facts.one_line(u.doc)}" if u.doc else ""))
        for p in t.props:
            r.add("PROPERTY", f"{p.name} = {facts.value_text(spec, p.value)}")
        for x in t.caches + t.predictors:
            props = ", ".join(f"{p.name} = {p.value.id if isinstance(p.value, ir.Name) else facts.value_text(spec, p.value)}"
                              for p in x.props)
            r.add(x.kind.upper(), f"{x.name}: {props}" + (f" -- {facts.one_line(x.doc)}" if x.doc else ""))
        out.append(r.add("DOC", facts.one_line(t.doc)))
    for s in isa.slots:
        out.append(Record("SLOT", s.name).add("WIDTH", f"{s.width} bits").add("NOP", s.nop)
                   .add("DOC", facts.one_line(s.doc)))
    if isa.dialect:
        d = isa.dialect
        r = Record("DIALECT", isa.name)
        for o in d.options:
            r.add(o.name.upper(), facts.dialect_text(o))
        for rl in d.relocs:
            paired = f" (paired with %{rl.paired})" if rl.paired else ""
            r.add("RELOC", f"%{rl.name}({rl.arg}) = {expr(rl.value)}{paired}")
        out.append(r.add("DOC", facts.one_line(d.doc)).add("MACROS", facts.macro_directives(spec)))
    if isa.hwloop:
        h = isa.hwloop
        r = Record("HWLOOP", isa.name)
        r = (r.add("REGISTERS", ", ".join(h.registers)) if h.registers else r.add("START", h.start).add("END", h.end))
        out.append(r.add("DEPTH", facts.value_text(spec, h.depth)).add("DOC", facts.one_line(h.doc)))
    for f in isa.formats:
        if f.name not in spec.formats:
            continue
        lay = spec.formats[f.name]
        r = Record("BUNDLE" if f.bundle else "FORMAT", f.name).add("WIDTH", f"{lay.width} bits")
        r.add("LAYOUT", encoding.cells_text(encoding.cells(spec, f.name)))
        if lay.fixed_mask:
            r.add("FIXED", f"mask {encoding.hex_word(lay.fixed_mask, lay.width)}, "
                           f"match {encoding.hex_word(lay.fixed_match, lay.width)}")
        out.append(r)
    for fn in isa.functions:
        sig = f"{fn.name}({', '.join(f'{p.name}: {type_ref(p.type)}' for p in fn.params)}) -> {type_ref(fn.result)}"
        out.append(Record("FUNCTION", fn.name).add("SIGNATURE", sig).add("DEFINITION", expr(fn.body))
                   .add("DOC", facts.one_line(fn.doc)))
    return out


def _operands_line(rows) -> str:
    parts = []
    for o in rows:
        extra = f", default {o.default}" if o.default else ""
        field = f", field {o.field}" if o.field else ""
        parts.append(f"{o.name}: {o.accepts}{extra}{field}")
    return "; ".join(parts)


def _instruction(spec: Spec, insn) -> Record:
    ispec = spec.instructions.get(insn.name)
    r = Record("INSTRUCTION", insn.name)
    if ispec is None:
        return r.add("SYNTAX", insn.syntax)
    r.add("MNEMONIC", ispec.template.mnemonic)
    r.add("SECTION", insn.section)
    r.add("SYNTAX", ispec.template.text)
    r.add("FORM", facts.syntax_form(ispec.template))
    r.add("OPERANDS", _operands_line(facts.operands(spec, ispec.template, ispec)) or "none")
    t = facts.timing(spec, insn)
    r.add("SLOT", t.slot).add("UNIT", t.unit)
    if t.slot:
        r.add("BUNDLES", ", ".join(facts.bundles_with(spec, t.slot)))
    r.add("CYCLES", facts.cost_text(t.cycles, t.cycles_value))
    if t.latency:
        r.add("LATENCY", facts.cost_text(t.latency, t.latency_value))
    elif t.cycles:
        r.add("LATENCY", facts.cost_text(t.cycles, t.cycles_value) + " (same as cycles)")
    if ispec.format is not None:
        r.add("ENCODING", encoding.summary(spec, ispec))
        r.add("BITS", encoding.cells_text(encoding.cells(spec, ispec.format.name, ispec)))
    sem = semantics.lines(insn.semantics)
    if sem:
        r.block("SEMANTICS", sem)
    else:
        r.add("SEMANTICS", "(no architectural effect)")
    for cond, msg in facts.insn_warnings(insn):
        r.add("WARN", f"{cond} : {msg}")
    r.add("DOC", facts.one_line(insn.doc))
    _examples(r, insn.examples)
    return r


def _pseudo(spec: Spec, p) -> Record:
    tpl = spec.pseudos.get(p.name)
    r = Record("PSEUDO", p.name)
    r.add("SECTION", p.section)
    r.add("SYNTAX", tpl.text if tpl else p.syntax)
    if tpl is not None:
        r.add("FORM", facts.syntax_form(tpl))
        r.add("OPERANDS", _operands_line(facts.operands(spec, tpl)) or "none")
    for e in p.expansions:
        head = f"when {expr(e.when)}" if e.when is not None else ("otherwise" if len(p.expansions) > 1 else "")
        r.block("EXPANSION", list(e.lines), head)
    r.add("DOC", facts.one_line(p.doc))
    _examples(r, p.examples)
    return r


def render(spec: Spec) -> str:
    records = [_header(spec)] + _storage(spec) + _machine(spec)
    for _title, _doc, items in facts.instruction_groups(spec):
        records += [_instruction(spec, i) for i in items]
    records += [_pseudo(spec, p) for p in spec.isa.pseudos]
    for n, ex in enumerate(spec.isa.examples, 1):
        r = Record("PROGRAM", f"{spec.isa.name} example {n}")
        _examples(r, (ex,))
        records.append(r)
    return "\n\n".join(r.text() for r in records) + "\n"
