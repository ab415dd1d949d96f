"""A small document tree (headings, paragraphs, tables, code, encoding diagrams) built from a Spec.

The Markdown and HTML renderers walk this tree; neither of them looks at the Spec. Every string in
the tree is plain text: each renderer escapes it for its own output.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Union

from isadl.check import TIMING_MODELLED, Spec
from isadl.printer import type_ref

from . import encoding, facts, semantics
from .pretty import expr


# ---- inline content -------------------------------------------------------------------------

@dataclass(frozen=True)
class Code:
    text: str


@dataclass(frozen=True)
class Link:
    text: str
    anchor: str
    code: bool = False


Inline = Union[str, Code, Link]
Inlines = tuple[Inline, ...]


def _inl(x) -> Inlines:
    if isinstance(x, tuple):
        return x
    if isinstance(x, list):
        return tuple(x)
    return (x,)


# ---- blocks ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Heading:
    level: int
    text: Inlines
    anchor: str


@dataclass(frozen=True)
class Para:
    text: Inlines


@dataclass(frozen=True)
class Bullets:
    items: tuple[Inlines, ...]


@dataclass(frozen=True)
class Table:
    header: tuple[str, ...]
    rows: tuple[tuple[Inlines, ...], ...]


@dataclass(frozen=True)
class CodeBlock:
    text: str
    label: str = ""  # a caption such as "given" or "expect"


@dataclass(frozen=True)
class Diagram:
    cells: tuple[encoding.Cell, ...]
    width: int
    caption: str


Block = Union[Heading, Para, Bullets, Table, CodeBlock, Diagram]


@dataclass
class Document:
    title: str
    blocks: list[Block] = field(default_factory=list)


# ---- building ---------------------------------------------------------------------------------

def slug(text: str) -> str:
    s = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return s or "section"


class _Builder:
    def __init__(self, spec: Spec):
        self.spec = spec
        self.isa = spec.isa
        self.doc = Document(f"{self.isa.name}" + (f": {self.isa.title}" if self.isa.title else ""))
        self.anchors: set[str] = set()
        self.toc: list[tuple[int, str, str]] = []  # (level, text, anchor)

    def add(self, b: Block) -> None:
        self.doc.blocks.append(b)

    def anchor(self, want: str) -> str:
        a, n = want, 2
        while a in self.anchors:
            a, n = f"{want}-{n}", n + 1
        self.anchors.add(a)
        return a

    def heading(self, level: int, text, anchor: str, toc: bool = True) -> str:
        a = self.anchor(anchor)
        self.add(Heading(level, _inl(text), a))
        if toc and level <= 3:
            self.toc.append((level, "".join(x if isinstance(x, str) else x.text for x in _inl(text)), a))
        return a

    def prose(self, doc: str) -> None:
        for p in facts.paragraphs(doc):
            self.add(Para((p,)))

    def table(self, header, rows) -> None:
        if rows:
            self.add(Table(tuple(header), tuple(tuple(_inl(c) for c in r) for r in rows)))

    # ---- sections in order ----------------------------------------------------------------------
    def build(self) -> Document:
        isa, spec = self.isa, self.spec
        self.heading(1, self.doc.title, "top", toc=False)
        facts_line = [f"ISA {isa.name}"]
        if isa.version:
            facts_line.append(f"version {isa.version}")
        facts_line.append(f"{facts.word(spec)}-bit instruction words")
        facts_line.append(f"{facts.endian(spec)}-endian")
        if isa.extends:
            facts_line.append(f"extends {isa.extends}")
        self.add(Para((", ".join(facts_line) + ".",)))
        self.add(Para((facts.counts(spec) + ".",)))
        if spec.defines:
            self.add(Para(("Generated with parameter overrides: ",
                           Code(", ".join(f"-D {k}={v}" for k, v in spec.defines.items())), ".")))
        self.prose(isa.doc)
        toc_at = len(self.doc.blocks)
        self.parameters()
        self.number_formats()
        self.registers()
        self.state()
        self.memories()
        self.enums()
        self.abi()
        self.timing()
        self.dialect()
        self.hwloop()
        self.formats()
        self.functions()
        self.instructions()
        self.pseudos()
        self.programs()
        contents = [Heading(2, ("Contents",), self.anchor("contents"))]
        items = []
        for level, text, a in self.toc:
            if level == 2:
                items.append((Link(text, a),))
        contents.append(Bullets(tuple(items)))
        self.doc.blocks[toc_at:toc_at] = contents
        return self.doc

    def parameters(self) -> None:
        if not self.isa.params:
            return
        self.heading(2, "Hardware parameters", "parameters")
        self.add(Para(("Values are after any -D overrides; the definition is the formula as written in the "
                       "description.",)))
        rows = []
        for p in facts.params(self.spec):
            value = p.value_text + (" (set by -D)" if p.overridden else "")
            rows.append((Code(p.name), value, Code(p.formula), p.doc))
        self.table(("Parameter", "Value", "Definition", "Description"), rows)
        if self.isa.constraints:
            self.add(Para(("Constraints checked on every build:",)))
            self.add(Bullets(tuple((Code(expr(c.cond)), f": {c.message}") for c in self.isa.constraints)))

    def number_formats(self) -> None:
        fl, mx = facts.floats(self.spec), facts.mxs(self.spec)
        if not fl and not mx:
            return
        self.heading(2, "Numeric formats", "numeric-formats")
        self.add(Para(("f32 and f64 are built in (IEEE 754 binary32 and binary64).",)))
        self.table(("Float", "Bits", "Exponent", "Mantissa", "Bias", "Flags", "Description"),
                   [(Code(f.name), str(f.bits), str(f.exp), str(f.man), str(f.bias), ", ".join(f.flags) or "-",
                     f.doc) for f in fl])
        self.table(("MX format", "Element", "Scale", "Block", "Bits per block", "Description"),
                   [(Code(m.name), Code(m.elem), Code(m.scale), str(m.block),
                     "?" if m.block_bits is None else str(m.block_bits), m.doc) for m in mx])

    def registers(self) -> None:
        spec = self.spec
        if not self.isa.regfiles:
            return
        self.heading(2, "Register files", "registers")
        rows = []
        for rf in self.isa.regfiles:
            n = facts.regfile_count(spec, rf)
            notes = []
            if rf.zero:
                notes.append(f"zero: {', '.join(rf.zero)}")
            if rf.readonly:
                notes.append("read-only")
            if rf.group:
                notes.append("grouped")
            rows.append((Code(rf.name), str(n), Code(facts.reg_type(spec, rf.name, rf.type)),
                         Code(facts.reg_range(spec, rf.name, 0, n)), "; ".join(notes) or "-", facts.one_line(rf.doc)))
        self.table(("File", "Count", "Element type", "Assembly names", "Notes", "Description"), rows)
        for rf in self.isa.regfiles:
            items = []
            al = facts.aliases(spec, rf)
            if al:
                items.append(("Aliases: ", Code(", ".join(f"{a}={r}" for a, r in al))))
            if rf.zero:
                items.append(("Hard-wired zero: ", Code(", ".join(rf.zero)), " (reads 0, writes are ignored)"))
            if rf.group:
                items.append(("Group: ", Code(facts.group_text(spec, rf))))
            if rf.readonly:
                items.append(("Read-only: semantics cannot write it.",))
            if items:
                self.heading(3, ("Register file ", Code(rf.name)), f"regs-{rf.name}", toc=False)
                self.add(Bullets(tuple(items)))
        if self.isa.regclasses:
            self.heading(3, "Register classes", "register-classes", toc=False)
            rows = []
            for rc in self.isa.regclasses:
                lo, hi = facts.const_value(spec, rc.lo), facts.const_value(spec, rc.hi)
                regs = facts.reg_range(spec, rc.file, lo, hi - lo + 1) if lo is not None and hi is not None else ""
                rows.append((Code(rc.name), Code(f"{rc.file}[{expr(rc.lo)}..{expr(rc.hi)}]"), Code(regs),
                             f"index - {lo}" if lo else "index", facts.one_line(rc.doc)))
            self.table(("Class", "Range", "Registers", "Encoded as", "Description"), rows)

    def state(self) -> None:
        if not self.isa.states:
            return
        self.heading(2, "Architectural state", "state")
        rows = []
        for s in self.isa.states:
            shape = facts.dims_text(self.spec, s.dims) or "scalar"
            rows.append((Code(s.name), shape, Code(facts.reg_type(self.spec, s.name, s.type)),
                         Code(expr(s.init)) if s.init is not None else "0",
                         "read-only" if s.readonly else "read/write", facts.one_line(s.doc)))
        self.table(("State", "Shape", "Type", "Initial value", "Access", "Description"), rows)

    def memories(self) -> None:
        if not self.isa.memories:
            return
        self.heading(2, "Memories", "memories")
        self.add(Para(("Memories are addressed by element: ", Code("m[a]"),
                       " is element a. The base is the address of element 0 as seen by programs.",)))
        rows = []
        for m in facts.memories(self.spec):
            size = ("?" if m.elements is None else facts.show_int(m.elements),)
            if m.size_formula:
                size += (" = ", Code(m.size_formula))
            rows.append((Code(m.name), Code(m.elem), size, "-" if m.bytes is None else facts.show_int(m.bytes),
                         "-" if m.base is None else hex(m.base), "-" if m.align is None else str(m.align),
                         "read-only" if m.readonly else "read/write", m.doc))
        self.table(("Memory", "Element", "Size (elements)", "Size (bytes)", "Base", "Alignment", "Access",
                    "Description"), rows)

    def enums(self) -> None:
        if not self.isa.enums:
            return
        self.heading(2, "Enumerations", "enums")
        self.table(("Enum", "Values", "Description"),
                   [(Code(e.name), Code(", ".join(f"{it.name}={it.value}" for it in e.items)), facts.one_line(e.doc))
                    for e in self.isa.enums])

    def abi(self) -> None:
        a = self.isa.abi
        if a is None:
            return
        spec = self.spec
        self.heading(2, "Kernel ABI", "abi")
        items = []
        if a.entry is not None:
            items.append(("Entry address: ", Code(facts.value_text(spec, a.entry))))
        if a.args:
            shown = []
            for r in a.args:
                file, idx = spec.regnames.get(r, ("", -1))
                canon = facts.reg_name(spec, file, idx) if file else r
                shown.append(r if canon == r else f"{r} ({canon})")
            items.append(("Arguments, in order: ", Code(", ".join(shown))))
        if a.end:
            if a.end[0] == "halt":
                items.append(("End: the kernel executes ", Code(a.end[1] if len(a.end) > 1 else "?"),
                              ", which halts the machine"))
            else:
                items.append(("End: the kernel returns to the address in ",
                              Code(a.end[1] if len(a.end) > 1 else "?")))
        else:
            items.append(("End: the kernel runs past its last instruction.",))
        if a.stack:
            items.append(("Stack: ", Code(f"{a.stack[0]} = {facts.value_text(spec, a.stack[1])}")))
        if a.preserve:
            written, canon = facts.preserved_text(spec)
            items.append(("Preserved (callee-saved): ", Code(written), *((" = ", Code(canon)) if canon else ()),
                          "; the kernel must end with each of them holding its value at entry"))
        else:
            items.append(("Preserved (callee-saved): none; the kernel may end with any register changed",))
        self.add(Bullets(tuple(items)))
        rows = []
        for r in a.regions:
            lo, hi = facts.const_value(spec, r.lo), facts.const_value(spec, r.hi)
            rng = f"{r.memory}[{expr(r.lo)}..{expr(r.hi)}]"
            vals = f"[{facts.show_int(lo)}..{facts.show_int(hi)})" if lo is not None and hi is not None else "?"
            rows.append((Code(r.name), Code(rng), vals, "?" if lo is None or hi is None else str(hi - lo), r.role,
                         facts.one_line(r.doc)))
        self.table(("Region", "Range", "Elements (lo inclusive, hi exclusive)", "Count", "Role", "Description"), rows)
        self.prose(a.doc)

    def timing(self) -> None:
        t = self.isa.timing
        if t is None:
            return
        self.heading(2, "Timing model", "timing")
        model = {"inorder": "in-order issue with decoupled units", "ooo": "out-of-order core",
                 "vliw": "VLIW: one bundle per cycle, the slots are the units"}.get(t.model, t.model)
        self.add(Para(("Model: ", Code(t.model), f" ({model}).")))
        self.table(("Unit", "Options", "Description"),
                   [(Code(u.name), facts.unit_options(self.spec, u) or "-", facts.one_line(u.doc)) for u in t.units])
        modelled = TIMING_MODELLED.get(t.model, set())
        self.table(("Property", "Value", "Simulated"),
                   [(Code(p.name), Code(facts.value_text(self.spec, p.value)),
                     "yes" if p.name in modelled else "no: recorded, the simulators ignore it") for p in t.props])
        self.prose(t.doc)
        if self.isa.slots:
            self.add(Para(("Issue slots:",)))
            self.table(("Slot", "Width (bits)", "Nop", "Description"),
                       [(Code(s.name), str(s.width), Code(s.nop) if s.nop else "-", facts.one_line(s.doc))
                        for s in self.isa.slots])

    def dialect(self) -> None:
        d = self.isa.dialect
        if d is None:
            return
        self.heading(2, "Assembler dialect", "dialect")
        rows = [(Code(o.name), Code(facts.dialect_text(o))) for o in d.options]
        self.table(("Option", "Values"), rows)
        self.table(("Relocation operator", "Value", "Notes"),
                   [(Code(f"%{r.name}({r.arg})"), Code(expr(r.value)),
                     f"paired with %{r.paired}: {r.arg} names the instruction carrying %{r.paired}" if r.paired
                     else "-") for r in d.relocs])
        self.prose(d.doc)
        self.prose(facts.macro_directives(self.spec))

    def hwloop(self) -> None:
        h = self.isa.hwloop
        if h is None:
            return
        self.heading(2, "Hardware loops", "hwloop")
        if h.registers:  # register-driven zero-overhead loops
            items = [(f"Loop {what} register: ", Code(name)) for what, name in zip(("count", "start", "end"), h.registers)]
        else:
            items = [("Loop start: ", Link(h.start, f"insn-{h.start}", code=True)),
                     ("Loop end: ", Link(h.end, f"insn-{h.end}", code=True))]
        if h.depth is not None:
            items.append(("Maximum nesting: ", Code(facts.value_text(self.spec, h.depth))))
        self.add(Bullets(tuple(items)))
        self.prose(h.doc)

    def formats(self) -> None:
        if not self.isa.formats:
            return
        self.heading(2, "Instruction formats", "formats")
        for f in self.isa.formats:
            if f.name not in self.spec.formats:
                continue
            lay = self.spec.formats[f.name]
            kind = "Bundle format" if f.bundle else "Format"
            self.heading(3, (f"{kind} ", Code(f.name)), f"format-{f.name}", toc=False)
            cs = encoding.cells(self.spec, f.name)
            cap = f"{lay.width} bits"
            if f.bundle or lay.fixed_mask:
                cap += f", fixed bits: mask {encoding.hex_word(lay.fixed_mask, lay.width)}, " \
                       f"match {encoding.hex_word(lay.fixed_match, lay.width)}"
            self.add(Diagram(tuple(cs), lay.width, cap))

    def functions(self) -> None:
        if not self.isa.functions:
            return
        self.heading(2, "Helper functions", "functions")
        self.add(Para(("Pure helpers used by the semantics below; each call is inlined.",)))
        for fn in self.isa.functions:
            sig = f"{fn.name}({', '.join(f'{p.name}: {type_ref(p.type)}' for p in fn.params)}) -> " \
                  f"{type_ref(fn.result)} = {expr(fn.body)}"
            self.add(CodeBlock(sig))
            self.prose(fn.doc)

    # ---- instructions ----------------------------------------------------------------------------
    def instructions(self) -> None:
        if not self.isa.instructions:
            return
        self.heading(2, "Instructions", "instructions")
        groups = facts.instruction_groups(self.spec)
        summary = []
        for title, _doc, items in groups:
            for insn in items:
                t = self.spec.instructions.get(insn.name)
                summary.append((Link(insn.name, f"insn-{insn.name}", code=True),
                                Code(t.template.text if t else insn.syntax), title or "-",
                                facts.one_line(insn.doc).split(". ")[0].rstrip(".")))
        self.table(("Instruction", "Syntax", "Section", "Summary"), summary)
        for title, doc, items in groups:
            if title:
                self.heading(3, title, f"sec-{slug(title)}")
                self.prose(doc)
            elif len(groups) > 1:
                self.heading(3, "Other instructions", "sec-other")
            for insn in items:
                self.instruction(insn)

    def instruction(self, insn) -> None:
        spec = self.spec
        ispec = spec.instructions.get(insn.name)
        a = self.anchor(f"insn-{insn.name}")
        self.add(Heading(4, (Code(insn.name),), a))
        if ispec is None:
            self.add(Para(("Syntax: ", Code(insn.syntax))))
            return
        self.add(Para(("Syntax: ", Code(ispec.template.text))))
        self.prose(insn.doc)
        ops = facts.operands(spec, ispec.template, ispec)
        self.table(("Operand", "Kind", "Accepts", "Default", "Field"),
                   [(Code(o.name), Code(o.kind), o.accepts, Code(o.default) if o.default else "required",
                     Code(o.field) if o.field else "-") for o in ops])
        if ispec.format is not None:
            cs = encoding.cells(spec, ispec.format.name, ispec)
            self.add(Diagram(tuple(cs), ispec.format.width, "Encoding: " + encoding.summary(spec, ispec)))
        self.add(CodeBlock(semantics.text(insn.semantics) or "# no architectural effect", "Semantics"))
        t = facts.timing(spec, insn)
        items = []
        if t.slot:
            items.append(("Slot: ", Code(t.slot)))
            bundles = facts.bundles_with(spec, t.slot)
            if bundles:
                items.append(("Bundles with this slot: ",
                              *[x for i, b in enumerate(bundles)
                                for x in ((", ",) if i else ()) + (Link(b, f"format-{b}", code=True),)]))
        if t.unit:
            items.append(("Unit: ", Code(t.unit)))
        if t.cycles:
            items.append(("Cycles: ", Code(facts.cost_text(t.cycles, t.cycles_value))))
        if t.latency:
            items.append(("Latency: ", Code(facts.cost_text(t.latency, t.latency_value))))
        elif t.cycles:
            items.append(("Latency: same as cycles",))
        if items:
            self.add(Bullets(tuple(items)))
        warns = facts.insn_warnings(insn)
        if warns:
            self.add(Para(("Assembler warnings:",)))
            self.add(Bullets(tuple((Code(c), f": {m}") for c, m in warns)))
        self.examples(insn.examples)

    def examples(self, examples) -> None:
        for i, ex in enumerate(examples, 1):
            self.add(CodeBlock(facts.dedent(ex.code), f"Example {i}" if len(examples) > 1 else "Example"))
            self.prose(ex.doc)
            checks = []
            if ex.given:
                checks.append(("Given: ", Code(semantics.inline(ex.given))))
            if ex.expect:
                checks.append(("Expect: ", Code("; ".join(expr(e) for e in ex.expect))))
            if checks:
                self.add(Bullets(tuple(checks)))

    def pseudos(self) -> None:
        if not self.isa.pseudos:
            return
        self.heading(2, "Pseudo-instructions", "pseudos")
        self.add(Para(("The assembler replaces each pseudo-instruction by the first expansion whose condition "
                       "holds; ", Code("{name}"), " stands for the operand as written.")))
        for p in self.isa.pseudos:
            tpl = self.spec.pseudos.get(p.name)
            a = self.anchor(f"pseudo-{p.name}")
            self.add(Heading(4, (Code(p.name),), a))
            self.add(Para(("Syntax: ", Code(tpl.text if tpl else p.syntax))))
            self.prose(p.doc)
            if tpl is not None:
                self.table(("Operand", "Kind", "Accepts", "Default"),
                           [(Code(o.name), Code(o.kind), o.accepts, Code(o.default) if o.default else "required")
                            for o in facts.operands(self.spec, tpl)])
            for e in p.expansions:
                if e.when is not None:
                    self.add(Para(("When ", Code(expr(e.when)), ", it expands to:")))
                else:
                    self.add(Para(("Otherwise it expands to:" if len(p.expansions) > 1 else "Expands to:",)))
                self.add(CodeBlock("\n".join(e.lines)))
            self.examples(p.examples)

    def programs(self) -> None:
        if not self.isa.examples:
            return
        self.heading(2, "Example programs", "programs")
        self.add(Para(("Whole programs, run from the ABI entry address by the test suite.",)))
        self.examples(self.isa.examples)


def build(spec: Spec) -> Document:
    return _Builder(spec).build()
