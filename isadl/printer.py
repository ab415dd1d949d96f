"""IR → canonical isadl text. ``parse_text(print_isa(isa)) == (isa,)`` for every parsed ISA."""
from __future__ import annotations

import re

from . import ir
from .parser import RESERVED, process_triple

# Binding strength, loosest first; matches the grammar's precedence ladder.
_PREC = {"?": 1, "||": 2, "&&": 3, "==": 4, "!=": 4, "<": 4, "<=": 4, ">": 4, ">=": 4,
         "|": 5, "^": 6, "&": 7, "<<": 8, ">>": 8, "+": 9, "-": 9, "*": 10, "/": 10, "%": 10}
_UNARY, _POW, _POSTFIX = 11, 12, 13
_BITS = {"|", "^", "&", "<<", ">>"}
_LOGIC = {"&&", "||"}


def quote(s: str) -> str:
    if "\n" in s and '"""' not in s and not s.endswith('"') and process_triple(s) == s:
        return '"""\n' + s + '\n"""'
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t") + '"'


def _prec(e: ir.Expr) -> int:
    if isinstance(e, ir.Cond):
        return 1
    if isinstance(e, ir.Binary):
        return _POW if e.op == "**" else _PREC[e.op]
    if isinstance(e, ir.Unary):
        return _UNARY
    if isinstance(e, ir.Num) and e.value < 0:
        return _UNARY
    return _POSTFIX


def expr(e: ir.Expr, hexlit: bool = False) -> str:
    """Canonical text of an expression. Parentheses go where the grammar needs them and, for
    readers, wherever bitwise, shift or logical operators mix with others (C and Python rank
    these differently): ``((x + 0x800) >> 12) & 0xfffff``, not ``x + 2048 >> 12 & 0xfffff``.
    Literals that are operands of & | ^ print in hex."""
    if isinstance(e, ir.Num):
        if hexlit and e.value >= 16 or e.value >= (1 << 16):
            return hex(e.value)
        return str(e.value) if e.value > -(1 << 16) else "-" + hex(-e.value)
    if isinstance(e, ir.FloatLit):
        return e.text
    if isinstance(e, ir.Name):
        return e.id
    if isinstance(e, ir.Index):
        return f"{_wrap(e.base, _POSTFIX)}[{expr(e.index)}]"
    if isinstance(e, ir.Slice):
        return f"{_wrap(e.base, _POSTFIX)}[{expr(e.hi)}:{expr(e.lo)}]"
    if isinstance(e, ir.Call):
        return f"{e.func}({', '.join(expr(a) for a in e.args)})"
    if isinstance(e, ir.Reduce):
        return f"{e.op}({e.var} in {expr(e.lo)}..{expr(e.hi)}: {expr(e.body)})"
    if isinstance(e, ir.Unary):
        inner = _wrap(e.operand, _UNARY)
        # `- -x` and `-(-5)` must not lex as one token or fold into a literal
        if e.op == "-" and (inner.startswith("-") or isinstance(e.operand, ir.Num)):
            inner = f"({expr(e.operand)})"
        return f"{e.op}{inner}"
    if isinstance(e, ir.Binary):
        p = _prec(e)
        if e.op == "**":  # right-assoc: left operand must bind tighter, right is a unary
            return f"{_wrap(e.left, _POSTFIX)} ** {_wrap(e.right, _UNARY)}"
        right = p + 1
        left = p + 1 if p == 4 else p  # comparisons do not chain
        return f"{_operand(e.left, e, left)} {e.op} {_operand(e.right, e, right)}"
    if isinstance(e, ir.Cond):
        return f"{_wrap(e.cond, 2)} ? {expr(e.then)} : {expr(e.orelse)}"
    raise TypeError(f"not an expression: {e!r}")


def _operand(c: ir.Expr, parent: ir.Binary, need: int) -> str:
    s = expr(c, hexlit=parent.op in ("&", "|", "^"))
    clarify = isinstance(c, ir.Binary) and c.op != parent.op and (
        c.op in _BITS or parent.op in _BITS or (c.op in _LOGIC and parent.op in _LOGIC))
    return f"({s})" if clarify or _prec(c) < need else s


def _wrap(e: ir.Expr, need: int) -> str:
    s = expr(e)
    return f"({s})" if _prec(e) < need else s


def type_ref(t: ir.TypeRef) -> str:
    return t.name + "".join(f"[{expr(d)}]" for d in t.dims)


def _bits(b: ir.Bits) -> str:
    return str(b.hi) if b.hi == b.lo else f"{b.hi}:{b.lo}"


class _Out:
    def __init__(self):
        self.lines: list[str] = []
        self.depth = 0

    def __call__(self, text: str = "") -> None:
        if not text:
            self.lines.append("")
            return
        pad = "  " * self.depth
        # multi-line strings are emitted verbatim so that dedent gives them back unchanged
        first, *rest = text.split("\n")
        self.lines.append(pad + first)
        self.lines.extend(rest)

    def open(self, text: str) -> None:
        self(text + " {")
        self.depth += 1

    def close(self) -> None:
        self.depth -= 1
        self("}")


def _doc(out: _Out, doc: str) -> None:
    if doc:
        out(f"doc {quote(doc)}")


def _opt_doc(doc: str) -> str:
    return f" {quote(doc)}" if doc else ""


def _block(out: _Out, stmts) -> None:
    for s in stmts:
        _stmt(out, s)


def _stmt(out: _Out, s: ir.Stmt) -> None:
    if isinstance(s, ir.Let):
        kw = "var" if s.mutable else "let"
        ann = f": {type_ref(s.type)}" if s.type else ""
        out(f"{kw} {s.name}{ann} = {expr(s.value)}")
    elif isinstance(s, ir.Assign):
        out(f"{expr(s.target)} = {expr(s.value)}")
    elif isinstance(s, ir.If):
        out.open(f"if {expr(s.cond)}")
        _block(out, s.then)
        if s.orelse:
            out.depth -= 1
            out.open("} else")
            _block(out, s.orelse)
        out.close()
    elif isinstance(s, ir.For):
        out.open(f"for {s.var} in {expr(s.lo)}..{expr(s.hi)}")
        _block(out, s.body)
        out.close()
    elif isinstance(s, ir.Require):
        out(f"require {expr(s.cond)} : {quote(s.message)}")
    elif isinstance(s, ir.Trap):
        out(f"trap {quote(s.message)}")
    elif isinstance(s, ir.Halt):
        out("halt")
    elif isinstance(s, ir.CallStmt):
        out(expr(s.call))
    else:
        raise TypeError(f"not a statement: {s!r}")


def _example(out: _Out, ex: ir.Example) -> None:
    if not (ex.given or ex.expect or ex.doc):
        out(f"example {quote(ex.code)}")
        return
    out.open(f"example {quote(ex.code)}")
    _doc(out, ex.doc)
    if ex.given:
        out.open("given")
        _block(out, ex.given)
        out.close()
    if ex.expect:
        out.open("expect")
        for e in ex.expect:
            out(expr(e) + ";")
        out.close()
    out.close()


def _fields(out: _Out, fmt: ir.Format) -> None:
    for f in fmt.fields:
        if f.kind == "plain":
            out(f"{f.name} {_bits(f.bits)}" + (f" = {f.value:#x}" if f.value is not None else ""))
        elif f.kind == "scattered":
            out(f"{f.name} {{ " + ", ".join(f"{_bits(p.value)} = {_bits(p.word)}" for p in f.pieces) + " }")
        elif f.kind == "fixed":
            out(f"fixed {_bits(f.bits)} = {f.value:#x}")
        else:
            out(f"ignore {_bits(f.bits)}")


def _instruction(out: _Out, i: ir.Instruction) -> None:
    out.open(f"instruction {i.name}")
    out(f"syntax {quote(i.syntax)}")
    if i.encoding:
        binds = ", ".join(b.field if b.value is None else f"{b.field}={expr(b.value)}" for b in i.encoding.bindings)
        out(f"encoding {i.encoding.format}({binds})")
    for key in ("slot", "unit"):
        if getattr(i, key):
            out(f"{key} {getattr(i, key)}")
    for key in ("cycles", "latency"):
        if getattr(i, key) is not None:
            out(f"{key} {expr(getattr(i, key))}")
    if i.bypass:
        out(f"bypass {i.bypass}" + (f" {i.bypass_cycles}" if i.bypass_cycles != 1 else ""))
    if i.semantics:
        out.open("semantics")
        _block(out, i.semantics)
        out.close()
    for w in i.warnings:
        out(f"warn {expr(w.cond)} : {quote(w.message)}")
    _doc(out, i.doc)
    for ex in i.examples:
        _example(out, ex)
    out.close()


def _pseudo(out: _Out, p: ir.Pseudo) -> None:
    out.open(f"pseudo {p.name} {quote(p.syntax)}")
    for e in p.expansions:
        head = f"when {expr(e.when)} expands" if e.when is not None else "expands"
        out(f"{head} {{ " + " ".join(quote(line) for line in e.lines) + " }")
    _doc(out, p.doc)
    for ex in p.examples:
        _example(out, ex)
    out.close()


def _in_sections(out: _Out, items, emit) -> None:
    """Emit items in order, wrapping runs that share a section in `section "T" { … }`."""
    current = None
    for item in items:
        if item.section != current:
            if current:
                out.close()
            current = item.section
            if current:
                out.open(f"section {quote(current)}")
        emit(out, item)
    if current:
        out.close()


def print_isa(isa: ir.ISA) -> str:
    out = _Out()
    head = f"isa {isa.name}" + (f" {quote(isa.title)}" if isa.title else "") + \
        (f" extends {isa.extends}" if isa.extends else "")
    out.open(head)
    if isa.version:
        out(f"version {quote(isa.version)}")
    if isa.word is not None:
        out(f"word {isa.word}")
    if isa.endian:
        out(f"endian {isa.endian}")
    _doc(out, isa.doc)
    for p in isa.params:
        out(("override " if p.override else "") + f"param {p.name} = {expr(p.value)}{_opt_doc(p.doc)}")
    for c in isa.constraints:
        out(f"constraint {expr(c.cond)} : {quote(c.message)}")
    for kind, fmts in (("float", isa.floats), ("mx", isa.mxs)):
        for f in fmts:
            args = ", ".join(a.key if a.value is None else f"{a.key}={a.value}" for a in f.args)
            out(f"{kind} {f.name}({args}){_opt_doc(f.doc)}")
    for r in isa.regfiles:
        body = []
        if r.asm:
            body.append(f"asm {quote(r.asm)}")
        if r.aliases:
            body.append("alias " + ", ".join(f"{a.name}={a.target}" for a in r.aliases))
        body += [f"zero {z}" for z in r.zero]
        if r.readonly:
            body.append("readonly")
        if r.group:
            body.append("group " + ", ".join(expr(g) for g in r.group))
        head = f"regs {r.name}[{expr(r.count)}]: {type_ref(r.type)}"
        if body or r.doc:
            out.open(head)
            for line in body:
                out(line)
            _doc(out, r.doc)
            out.close()
        else:
            out(head)
    for rc in isa.regclasses:
        out(f"regclass {rc.name} = {rc.file}[{expr(rc.lo)}..{expr(rc.hi)}]{_opt_doc(rc.doc)}")
    for s in isa.states:
        dims = "".join(f"[{expr(d)}]" for d in s.dims)
        init = f" = {expr(s.init)}" if s.init is not None else ""
        out(f"state {s.name}{dims}: {type_ref(s.type)}{init}{' readonly' if s.readonly else ''}{' untimed' if s.untimed else ''}"
            f"{' ieee_flags' if s.ieee_flags else ''}{_opt_doc(s.doc)}")
    for m in isa.memories:
        body = ([f"base {expr(m.base)}"] if m.base is not None else []) + \
               ([f"align {expr(m.align)}"] if m.align is not None else []) + (["readonly"] if m.readonly else [])
        head = f"memory {m.name}: {m.elem}[{expr(m.size)}]"
        if body or m.doc:
            out.open(head)
            for line in body:
                out(line)
            _doc(out, m.doc)
            out.close()
        else:
            out(head)
    for e in isa.enums:
        items = ", ".join(f"{it.name if _is_name(it.name) else quote(it.name)} = {it.value}" for it in e.items)
        out(f"enum {e.name}{': ' + e.numbers if e.numbers else ''} {{ {items} }}{_opt_doc(e.doc)}")
    for s in isa.slots:
        out(f"slot {s.name}({s.width})" + (f" nop {s.nop}" if s.nop else "") + _opt_doc(s.doc))
    for f in isa.formats:
        if f.bundle:
            out.open(f"bundle {f.name}({f.width})")
        else:
            out.open(f"format {f.name}" + (f"({f.width})" if f.width is not None else ""))
        _fields(out, f)
        out.close()
    for fn in isa.functions:
        params = ", ".join(f"{p.name}: {type_ref(p.type)}" for p in fn.params)
        out(f"function {fn.name}({params}) -> {type_ref(fn.result)} = {expr(fn.body)}{_opt_doc(fn.doc)}")
    if isa.timing:
        t = isa.timing
        out.open(f"timing {t.model}")
        for u in t.units:
            opts = (f" count {expr(u.count)}" if u.count is not None else "") + (" async" if u.is_async else "") + \
                (f" queue {expr(u.queue)}" if u.queue is not None else "") + (" pipelined" if u.pipelined else "")
            out(f"unit {u.name}{opts}{_opt_doc(u.doc)}")
        for p in t.props:
            out(f"{p.name} = {expr(p.value)}")
        for x in t.caches + t.predictors:
            out.open(f"{x.kind} {x.name}")
            for p in x.props:
                out(f"{p.name} = {expr(p.value)}")
            _doc(out, x.doc)
            out.close()
        _doc(out, t.doc)
        out.close()
    if isa.dialect:
        d = isa.dialect
        out.open("dialect")
        for o in d.options:
            out(f"{o.name} " + ", ".join(_dvalue(v) for v in o.values))
        for r in d.relocs:
            out(f"reloc {r.name}({r.arg}) = {expr(r.value)}" + (f" paired {r.paired}" if r.paired else ""))
        _doc(out, d.doc)
        out.close()
    if isa.abi:
        a = isa.abi
        out.open("abi")
        if a.entry is not None:
            out(f"entry {expr(a.entry)}")
        if a.args:
            out("args " + ", ".join(a.args))
        if a.end:
            out("end " + " ".join(a.end))
        if a.stack:
            out(f"stack {a.stack[0]} = {expr(a.stack[1])}")
        if a.preserve:
            out("preserve " + ir.name_ranges(a.preserve))
        for r in a.regions:
            out(f"region {r.name}: {r.memory}[{expr(r.lo)}..{expr(r.hi)}] {r.role}{_opt_doc(r.doc)}")
        _doc(out, a.doc)
        out.close()
    if isa.hwloop:
        h = isa.hwloop
        out.open("hwloop")
        if h.registers:
            out(f"registers {', '.join(h.registers)}")
        else:
            out(f"start {h.start}")
            out(f"end {h.end}")
        if h.depth is not None:
            out(f"depth {expr(h.depth)}")
        _doc(out, h.doc)
        out.close()
    # Section headers first (they carry the docs and fix the order), then the members.
    for s in isa.sections:
        out.open(f"section {quote(s.title)}")
        _doc(out, s.doc)
        out.close()
    _in_sections(out, isa.instructions, _instruction)
    _in_sections(out, isa.pseudos, _pseudo)
    for ex in isa.examples:
        _example(out, ex)
    out.close()
    return "\n".join(out.lines) + "\n"


def _dvalue(v) -> str:
    if isinstance(v, int):
        return str(v)
    if _is_name(v) or (v.startswith(".") and _is_name(v[1:])):
        return v
    return quote(v)


def _is_name(s: str) -> bool:
    return re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", s) is not None and s not in RESERVED
