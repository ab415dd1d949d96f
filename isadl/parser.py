"""Text → IR: the Lark LALR parser and a transformer that builds frozen IR dataclasses.

This step only checks what the grammar can see (syntax, duplicate clauses inside one block);
name resolution and every semantic rule live in isadl.check.
"""
from __future__ import annotations

import contextlib
import functools
import re
import sys
import textwrap
from pathlib import Path

import lark
from lark import Lark, Token, Transformer, v_args
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from . import ir
from .diagnostics import Diagnostic, IsaError, Reporter

GRAMMAR = Path(__file__).with_name("isadl.lark")


# Keywords reserved as names, read from the grammar's NAME terminal (its single source).
RESERVED = frozenset(re.search(r"^NAME: /\(\?!\(\?:([a-z|]+)\)", GRAMMAR.read_text(), re.M).group(1).split("|"))


@functools.cache
def _lark() -> Lark:
    return Lark(GRAMMAR.read_text(), parser="lalr", lexer="contextual", start=["start", "proposal"],
                propagate_positions=True, maybe_placeholders=True)


def unquote(raw: str) -> str:
    """The value of a STRING token: triple-quoted text is dedented and stripped."""
    if raw.startswith('"""'):
        return process_triple(raw[3:-3])
    out, i, body = [], 0, raw[1:-1]
    escapes = {"n": "\n", "t": "\t", "\\": "\\", '"': '"'}
    while i < len(body):
        c = body[i]
        if c == "\\" and i + 1 < len(body):
            out.append(escapes.get(body[i + 1], "\\" + body[i + 1]))
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def process_triple(body: str) -> str:
    return textwrap.dedent(body).strip()


# Human names for the grammar's pattern terminals; literal terminals are shown as written.
_PATTERN_NAMES = {
    "NAME": "a name", "INT": "an integer", "FLOAT": "a number", "STRING": "a string", "DIRECTIVE": "a directive",
    "OR": "'||'", "AND": "'&&'", "CMP": "a comparison", "BOR": "'|'", "XOR": "'^'", "BAND": "'&'",
    "SHIFT": "'<<' or '>>'", "ADDOP": "'+' or '-'", "MULOP": "'*', '/' or '%'", "POW": "'**'", "UNOP": "'!' or '~'",
}
_OPERATORS = {"OR", "AND", "CMP", "BOR", "XOR", "BAND", "SHIFT", "ADDOP", "MULOP", "POW", "UNOP", "QMARK"}
_EXPR_START = {"NAME", "INT", "FLOAT", "LPAR"}


@functools.cache
def _terminal_text() -> dict[str, str]:
    out = {}
    for t in _lark().terminals:
        if t.name in _PATTERN_NAMES:
            out[t.name] = _PATTERN_NAMES[t.name]
        elif t.pattern.type == "str":
            out[t.name] = f"'{t.pattern.value}'"
    return out


def _expected(expected) -> list[str]:
    names = set(expected)
    if _EXPR_START & names and len(_EXPR_START & names) >= 3:
        names = (names - _EXPR_START - _OPERATORS) | {"<expr>"}
    elif names - _OPERATORS:
        names -= _OPERATORS  # after a complete expression, list what may follow it, not every operator
    text = _terminal_text()
    return sorted({"an expression" if n == "<expr>" else text[n] for n in names if n == "<expr>" or n in text})


def _describe_expected(expected) -> str:
    names = _expected(expected)
    if not names or len(names) > 6:
        return ""
    return "; expected " + (names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1])


def _keyword_hint(word: str, expected) -> str:
    keywords = [v.strip("'") for k, v in _terminal_text().items() if k in expected and v[1:2].isalpha()]
    from .diagnostics import did_you_mean
    return did_you_mean(word, keywords)


def _syntax_error(path: str, text: str, exc: UnexpectedInput) -> Diagnostic:
    loc = ir.Loc(path, exc.line if exc.line > 0 else 1, exc.column if exc.column > 0 else 1)
    if isinstance(exc, UnexpectedCharacters):
        if exc.char == '"':
            return Diagnostic(loc, "unterminated string")
        return Diagnostic(loc, f"unexpected character {exc.char!r}")
    if isinstance(exc, UnexpectedEOF) or (isinstance(exc, UnexpectedToken) and exc.token.type == "$END"):
        if not any(line.split("#", 1)[0].strip() for line in text.splitlines()):
            return Diagnostic(ir.Loc(path, 1, 1), "empty file: expected 'isa NAME { ... }'")
        end = ir.Loc(path, text.count("\n") + (0 if text.endswith("\n") else 1),
                     len(text.rsplit("\n", 2)[-2 if text.endswith("\n") else -1]) + 1)
        return Diagnostic(end, "unexpected end of file (missing '}'?)")
    assert isinstance(exc, UnexpectedToken)
    tok = exc.token
    expected = exc.accepts or exc.expected
    what = f"'{tok.value}'" if tok.type != "STRING" else "string"
    hint = _keyword_hint(str(tok.value), expected) if str(tok.value).isidentifier() else ""
    return Diagnostic(loc, f"unexpected {what}" + (hint or _describe_expected(expected)))


def parse_text(text: str, path: str = "<string>") -> tuple[ir.ISA, ...]:
    """Parse isadl source into unresolved ISAs (one per `isa` block). Raises IsaError."""
    isas, _, reporter = _parse(text, path, "start")
    reporter.raise_if_failed()
    return tuple(isas)


def _parse(text: str, path: str, start: str):
    """(transformed tree, builder, reporter) of `text` from grammar rule `start`; syntax errors and
    too-deep nesting raise IsaError, located."""
    reporter = Reporter({path: text})
    try:
        tree = _lark().parse(text, start=start)
    except UnexpectedInput as exc:
        raise IsaError([_syntax_error(path, text, exc)], {path: text}) from None
    builder = _Builder(path, reporter)
    try:
        with deep_recursion():
            return builder.transform(tree), builder, reporter
    except lark.exceptions.VisitError as exc:
        if isinstance(exc.orig_exc, RecursionError):
            raise too_deep(path, {path: text}) from None
        raise exc.orig_exc  # an internal error, not the user's
    except RecursionError:
        raise too_deep(path, {path: text}) from None


# What a co-design proposal may declare: only additions (docs/codesign.md). Item kind -> what it is.
PROPOSAL_ITEMS = {"instructions": "instruction", "pseudos": "pseudo-instruction", "section": "section",
                  "states": "state", "memories": "memory", "regfiles": "register file", "regclasses": "register class",
                  "enums": "enum", "functions": "function", "floats": "float format", "mxs": "mx format",
                  "formats": "format", "params": "parameter", "constraints": "constraint"}
_PROPOSAL_REFUSED = {"timing": "a timing section changes the base's cycle model",
                     "version": "'version' changes the base's identity", "word": "'word' changes the instruction width",
                     "endian": "'endian' changes the byte order", "doc": "ISA-level doc text changes the base's documentation",
                     "dialect": "a dialect changes the base's assembler", "abi": "an abi changes the base's kernel interface",
                     "hwloop": "an hwloop section changes the base's hardware loops",
                     "slots": "a slot changes the base's bundles", "bundle": "a bundle changes the base's encodings",
                     "example": "ISA-level examples belong to the base (give examples inside the instruction)"}


def parse_proposal(text: str, path: str, name: str, extends: str) -> ir.ISA:
    """A co-design proposal: the items of an ISA body (grammar rule `proposal`), never an `isa`
    header, as the unresolved overlay `isa NAME extends EXTENDS`. Only items that add are admitted:
    `override param`, `timing` and the other items that change the base are located errors, so are
    syntax errors (`} isa x extends y {` is one). Raises IsaError."""
    items, builder, reporter = _parse(text, path, "proposal")
    kept = []
    for item in _Builder._flatten(items):
        kind, value, meta = item
        loc = builder.loc(meta)
        if kind == "formats" and value.bundle:
            reporter.error(loc, "a proposal only adds: a bundle changes the base's encodings")
        elif kind == "params" and value.override:
            reporter.error(value.loc, f"a proposal only adds: 'override param {value.name}' changes a parameter of the "
                                      f"base; its parameters and timing are fixed")
        elif kind not in PROPOSAL_ITEMS:
            why = _PROPOSAL_REFUSED.get(kind, f"'{kind}' is not an addition")
            reporter.error(loc, f"a proposal only adds instructions and the state, memories, register files, enums "
                                f"and functions they need: {why}")
        else:
            kept.append(item)
    reporter.raise_if_failed()
    head = [Token("NAME", name, line=1, column=1), None, Token("NAME", extends, line=1, column=1)]
    return builder.make_isa(head + kept)


RECURSION_LIMIT = 20000


@contextlib.contextmanager
def deep_recursion():
    """Expressions are trees walked recursively; allow deep ones (a 3000-term sum) while we walk them."""
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, RECURSION_LIMIT))
    try:
        yield
    finally:
        sys.setrecursionlimit(old)


def too_deep(path: str, sources: dict[str, str]) -> IsaError:
    return IsaError([Diagnostic(ir.Loc(path, 0, 0), "an expression is nested too deeply to process; split it up")],
                    sources)


def parse_file(path: str | Path) -> tuple[ir.ISA, ...]:
    p = Path(path)
    try:
        text = p.read_text()
    except OSError as exc:
        raise IsaError([Diagnostic(ir.Loc(str(path), 0, 0), f"cannot read file: {exc.strerror}")]) from None
    return parse_text(text, str(path))


def parse_int(text: str) -> int:
    """An isadl integer literal: decimal (leading zeros allowed), 0x hex or 0b binary, `_` separators."""
    digits = text.replace("_", "")
    if digits[:2].lower() == "0x":
        return int(digits[2:], 16)
    if digits[:2].lower() == "0b":
        return int(digits[2:], 2)
    if len(digits) > 1 and digits[0] == "0":
        raise ValueError("leading zero")  # C and GNU as read 010 as octal: refuse the ambiguity
    return int(digits, 10)


def _flag(node) -> bool:
    return node is not None


class _Builder(Transformer):
    """Parse tree → IR. Each method receives its children already transformed."""

    def __init__(self, path: str, reporter: Reporter):
        super().__init__()
        self.path = path
        self.reporter = reporter

    def _int(self, tok: Token) -> int:
        try:
            return parse_int(tok)
        except ValueError:
            digits = tok.replace("_", "")
            hint = "; a leading 0 is ambiguous (octal in C and GNU as)" if digits[:1] == "0" and digits[1:2].isdigit() else ""
            self.reporter.error(self.loc(tok), f"malformed integer '{tok}'{hint}")
            return 0

    def loc(self, meta_or_tok) -> ir.Loc:
        return ir.Loc(self.path, getattr(meta_or_tok, "line", 0) or 0, getattr(meta_or_tok, "column", 0) or 0)

    def _once(self, seen: dict, key: str, where: str, meta) -> bool:
        if key in seen:
            self.reporter.error(self.loc(meta), f"duplicate '{key}' in {where}")
            return False
        seen[key] = True
        return True

    # ---- top level --------------------------------------------------------------------
    def start(self, children):
        return children

    def proposal(self, children):
        return children

    @v_args(meta=True)
    def isa(self, meta, children):
        return self.make_isa(children)

    def make_isa(self, children):
        name, title, extends, *items = children
        fields: dict = {k: [] for k in ("params", "constraints", "floats", "mxs", "regfiles", "regclasses",
                                        "states", "memories", "formats", "slots", "enums", "instructions",
                                        "pseudos", "functions", "examples", "sections")}
        singles: dict = {}
        singles_loc: dict = {}
        docs = []
        where = f"isa {name}"
        for kind, value, imeta in self._flatten(items):
            kind = {"example": "examples"}.get(kind, kind)
            if kind == "doc":
                docs.append(value)
            elif kind in self._SINGLES:
                if kind not in singles:
                    if kind == "word":
                        value, singles_loc[kind] = value
                    singles[kind] = value
                else:
                    self.reporter.error(self.loc(imeta), f"duplicate '{kind}' in {where}")
            elif kind == "section":
                title_, sdoc, members = value
                self._add_section(fields["sections"], title_, sdoc, imeta)
                for mkind, member in members:
                    fields[mkind].append(member)
            else:
                fields[kind].append(value)
        return ir.ISA(
            name=str(name), title=unquote(title) if title else "", extends=str(extends) if extends else "",
            version=singles.get("version", ""), word=singles.get("word"), endian=singles.get("endian", ""),
            doc="\n\n".join(docs), timing=singles.get("timing"), dialect=singles.get("dialect"),
            abi=singles.get("abi"), hwloop=singles.get("hwloop"),
            **{k: tuple(v) for k, v in fields.items()}, loc=self.loc(name),
            word_loc=singles_loc.get("word", ir.NOWHERE), extends_loc=self.loc(extends) if extends else ir.NOWHERE)

    _SINGLES = ("version", "word", "endian", "timing", "dialect", "abi", "hwloop")

    def _add_section(self, sections: list, title: str, doc: str, meta) -> None:
        for i, s in enumerate(sections):
            if s.title == title:
                if doc:
                    sections[i] = ir.Section(title, "\n\n".join(x for x in (s.doc, doc) if x), s.loc)
                return
        sections.append(ir.Section(title, doc, self.loc(meta)))

    @staticmethod
    def _flatten(items):
        for item in items:
            if item is None or isinstance(item, Token):  # ';' separators
                continue
            yield item

    # Each item returns (kind, value, meta).
    @v_args(meta=True)
    def version(self, meta, c):
        return ("version", unquote(c[0]), meta)

    @v_args(meta=True)
    def word(self, meta, c):
        return ("word", (self._int(c[0]), self.loc(c[0])), meta)

    @v_args(meta=True)
    def endian(self, meta, c):
        return ("endian", str(c[0]), meta)

    @v_args(meta=True)
    def doc(self, meta, c):
        return ("doc", unquote(c[0]), meta)

    @v_args(meta=True)
    def param(self, meta, c):
        name, value, doc = c
        return ("params", ir.Param(str(name), value, unquote(doc) if doc else "", False, self.loc(name)), meta)

    @v_args(meta=True)
    def override(self, meta, c):
        name, value, doc = c
        return ("params", ir.Param(str(name), value, unquote(doc) if doc else "", True, self.loc(name)), meta)

    @v_args(meta=True)
    def constraint(self, meta, c):
        return ("constraints", ir.Constraint(c[0], unquote(c[1]), self.loc(meta)), meta)

    # ---- numeric formats -------------------------------------------------------------------
    @v_args(meta=True)
    def float_fmt(self, meta, c):
        name, args, doc = c
        return ("floats", ir.FloatFormat(str(name), args, unquote(doc) if doc else "", self.loc(name)), meta)

    @v_args(meta=True)
    def mx_fmt(self, meta, c):
        name, args, doc = c
        return ("mxs", ir.MxFormat(str(name), args, unquote(doc) if doc else "", self.loc(name)), meta)

    def kwargs(self, c):
        return tuple(c)

    def kw_value(self, c):
        key, val = c
        value = self._int(val) if val.type == "INT" else str(val)
        return ir.KwArg(str(key), value, self.loc(key))

    def kw_flag(self, c):
        return ir.KwArg(str(c[0]), None, self.loc(c[0]))

    # ---- storage -------------------------------------------------------------------------------
    @v_args(meta=True)
    def type(self, meta, c):
        return ir.TypeRef(str(c[0]), tuple(c[1:]), self.loc(c[0]))

    @v_args(meta=True)
    def regs(self, meta, c):
        name, count, type_, *items = c
        opts: dict = {"aliases": [], "zero": [], "group": [], "doc": []}
        singles: dict = {}
        locs: dict = {"zero": []}
        for kind, value, imeta in self._flatten(items):
            if kind == "zero":
                locs["zero"].append(self.loc(imeta))
            elif kind in ("asm", "group"):
                locs.setdefault(kind, self.loc(imeta))
            if kind in ("asm", "readonly", "group"):
                if not self._once(singles, kind, f"regs {name}", imeta):
                    continue
            if kind == "aliases":
                opts["aliases"].extend(value)
            elif kind == "group":
                opts["group"] = value
            elif kind in ("zero", "doc"):
                opts[kind].append(value)
            else:
                singles[kind] = value
        return ("regfiles", ir.RegFile(
            str(name), count, type_, asm=singles.get("asm", ""), aliases=tuple(opts["aliases"]),
            zero=tuple(opts["zero"]), readonly=singles.get("readonly", False), group=tuple(opts["group"]),
            doc="\n\n".join(opts["doc"]), loc=self.loc(name), asm_loc=locs.get("asm", ir.NOWHERE),
            zero_locs=tuple(locs["zero"]), group_loc=locs.get("group", ir.NOWHERE)), meta)

    @v_args(meta=True)
    def reg_asm(self, meta, c):
        return ("asm", unquote(c[0]), _TokMeta(c[0].line, c[0].column))

    @v_args(meta=True)
    def reg_alias(self, meta, c):
        return ("aliases", c, meta)

    def alias(self, c):
        name, target = c
        return ir.Alias(str(name), self._int(target) if target.type == "INT" else str(target), self.loc(name),
                        self.loc(target))

    @v_args(meta=True)
    def reg_zero(self, meta, c):
        return ("zero", str(c[0]), c[0])

    @v_args(meta=True)
    def reg_readonly(self, meta, c):
        return ("readonly", True, meta)

    @v_args(meta=True)
    def reg_group(self, meta, c):
        return ("group", tuple(c), meta)

    @v_args(meta=True)
    def regclass(self, meta, c):
        name, file, lo, hi, doc = c
        return ("regclasses", ir.RegClass(str(name), str(file), lo, hi, unquote(doc) if doc else "",
                                          self.loc(name), self.loc(file)), meta)

    @v_args(meta=True)
    def state(self, meta, c):
        name, *rest = c
        doc, ieee_flags, untimed, readonly, init, type_ = (rest.pop() for _ in range(6))
        return ("states", ir.State(str(name), tuple(rest), type_, init, _flag(readonly),
                                   unquote(doc) if doc else "", self.loc(name), untimed=_flag(untimed),
                                   ieee_flags=_flag(ieee_flags)), meta)

    def state_init(self, c):
        return c[0]

    @v_args(meta=True)
    def readonly(self, meta, c):
        return ("readonly", True, meta)

    @v_args(meta=True)
    def untimed(self, meta, c):
        return ("untimed", True, meta)

    @v_args(meta=True)
    def ieee_flags(self, meta, c):
        return ("ieee_flags", True, meta)

    @v_args(meta=True)
    def memory(self, meta, c):
        name, elem, size, *items = c
        singles: dict = {}
        docs = []
        for kind, value, imeta in self._flatten(items):
            if kind == "doc":
                docs.append(value)
            elif self._once(singles, kind, f"memory {name}", imeta):
                singles[kind] = value
        return ("memories", ir.Memory(str(name), str(elem), size, singles.get("base"), singles.get("align"),
                                      singles.get("readonly", False), "\n\n".join(docs), self.loc(name)), meta)

    @v_args(meta=True)
    def mem_base(self, meta, c):
        return ("base", c[0], meta)

    @v_args(meta=True)
    def mem_align(self, meta, c):
        return ("align", c[0], meta)

    # ---- encodings ---------------------------------------------------------------------------
    @v_args(meta=True)
    def format(self, meta, c):
        name, width, *fields = c
        return ("formats", ir.Format(str(name), self._int(width) if width else None,
                                     tuple(f for f in fields if isinstance(f, ir.Field)), False, self.loc(name),
                                     self.loc(width) if width else ir.NOWHERE), meta)

    @v_args(meta=True)
    def bundle(self, meta, c):
        name, width, *fields = c
        return ("formats", ir.Format(str(name), self._int(width), tuple(f for f in fields if isinstance(f, ir.Field)),
                                     True, self.loc(name), self.loc(width)), meta)

    def field_plain(self, c):
        name, bits, value = c
        return ir.Field("plain", str(name), bits=bits, value=self._int(value) if value else None, loc=self.loc(name),
                        value_loc=self.loc(value) if value else ir.NOWHERE)

    def field_scattered(self, c):
        name, *pieces = c
        return ir.Field("scattered", str(name), pieces=tuple(pieces), loc=self.loc(name))

    @v_args(meta=True)
    def piece(self, meta, c):
        return ir.Piece(c[0], c[1], self.loc(meta))

    @v_args(meta=True)
    def field_fixed(self, meta, c):
        return ir.Field("fixed", "", bits=c[0], value=self._int(c[1]), loc=self.loc(meta), value_loc=self.loc(c[1]))

    @v_args(meta=True)
    def field_ignore(self, meta, c):
        return ir.Field("ignore", "", bits=c[0], loc=self.loc(meta))

    @v_args(meta=True)
    def bits(self, meta, c):
        hi, lo = c
        h = self._int(hi)
        return ir.Bits(h, self._int(lo) if lo is not None else h, self.loc(meta))

    @v_args(meta=True)
    def slot(self, meta, c):
        name, width, nop, doc = c
        return ("slots", ir.Slot(str(name), self._int(width), str(nop) if nop else "", unquote(doc) if doc else "",
                                 self.loc(name), self.loc(nop) if nop else ir.NOWHERE), meta)

    @v_args(meta=True)
    def enum(self, meta, c):
        name, numbers, *items = c
        doc = items.pop()
        return ("enums", ir.Enum(str(name), tuple(i for i in items if isinstance(i, ir.EnumItem)),
                                 unquote(doc) if doc else "", self.loc(name), str(numbers) if numbers else ""), meta)

    def enum_item(self, c):
        name, value = c
        spelled = unquote(name) if name.type == "STRING" else str(name)
        return ir.EnumItem(spelled, self._int(value), self.loc(name))

    # ---- timing ----------------------------------------------------------------------------------
    @v_args(meta=True)
    def timing(self, meta, c):
        model, *items = c
        units, props, docs, structures = [], [], [], []
        for item in self._flatten(items):
            if isinstance(item, ir.Unit):
                units.append(item)
            elif isinstance(item, ir.TimingProp):
                props.append(item)
            elif isinstance(item, ir.Structure):
                structures.append(item)
            else:
                docs.append(item[1])
        return ("timing", ir.Timing(str(model), tuple(units), tuple(props), "\n\n".join(docs), self.loc(model),
                                    tuple(x for x in structures if x.kind == "cache"),
                                    tuple(x for x in structures if x.kind == "predictor")), meta)

    def _structure(self, kind: str, c) -> ir.Structure:
        name, *items = c
        props = [i for i in self._flatten(items) if isinstance(i, ir.TimingProp)]
        docs = [i[1] for i in self._flatten(items) if not isinstance(i, ir.TimingProp)]
        return ir.Structure(kind, str(name), tuple(props), "\n\n".join(docs), self.loc(name))

    def cache(self, c):
        return self._structure("cache", c)

    def predictor(self, c):
        return self._structure("predictor", c)

    def unit(self, c):
        name, *opts = c
        doc = opts.pop()
        kw: dict = {}
        for key, value in opts:
            kw[key] = value
        return ir.Unit(str(name), kw.get("count"), kw.get("is_async", False), kw.get("queue"),
                       kw.get("pipelined", False), unquote(doc) if doc else "", self.loc(name))

    def unit_count(self, c):
        return ("count", c[0])

    def unit_async(self, c):
        return ("is_async", True)

    def unit_queue(self, c):
        return ("queue", c[0])

    def unit_pipelined(self, c):
        return ("pipelined", True)

    def timing_prop(self, c):
        return ir.TimingProp(str(c[0]), c[1], self.loc(c[0]))

    # ---- instructions ---------------------------------------------------------------------------
    @v_args(meta=True)
    def instruction(self, meta, c):
        name, *items = c
        singles: dict = {}
        docs, examples, warns = [], [], []
        locs: dict = {}
        for kind, value, imeta in self._flatten(items):
            if kind == "doc":
                docs.append(value)
            elif kind == "example":
                examples.append(value)
            elif kind == "warn":
                warns.append(value)
            elif self._once(singles, kind, f"instruction {name}", imeta):
                singles[kind] = value
                locs[kind] = self.loc(imeta)
        if "syntax" not in singles:
            self.reporter.error(self.loc(name), f"instruction {name} has no 'syntax'")
        return ("instructions", ir.Instruction(
            str(name), singles.get("syntax", ""), singles.get("encoding"), slot=singles.get("slot", ""),
            unit=singles.get("unit", ""), cycles=singles.get("cycles"), latency=singles.get("latency"),
            semantics=singles.get("semantics", ()), doc="\n\n".join(docs), examples=tuple(examples),
            warnings=tuple(warns), bypass=singles.get("bypass", ("", 1))[0], bypass_cycles=singles.get("bypass", ("", 1))[1],
            bypass_loc=locs.get("bypass", ir.NOWHERE),
            loc=self.loc(name), syntax_loc=locs.get("syntax", ir.NOWHERE), unit_loc=locs.get("unit", ir.NOWHERE),
            slot_loc=locs.get("slot", ir.NOWHERE)), meta)

    @v_args(meta=True)
    def syntax(self, meta, c):
        # The location of a syntax string points at its opening quote + 1 (first character).
        tok = c[0]
        return ("syntax", unquote(tok), _TokMeta(tok.line, tok.column + 1))

    @v_args(meta=True)
    def encoding(self, meta, c):
        name, *bindings = c
        return ("encoding", ir.Encoding(str(name), tuple(b for b in bindings if b is not None), self.loc(name)), meta)

    def binding(self, c):
        return ir.Binding(str(c[0]), c[1], self.loc(c[0]))

    @v_args(meta=True)
    def insn_slot(self, meta, c):
        return ("slot", str(c[0]), c[0])

    @v_args(meta=True)
    def insn_unit(self, meta, c):
        return ("unit", str(c[0]), c[0])

    @v_args(meta=True)
    def insn_bypass(self, meta, c):
        return ("bypass", (str(c[0]), int(c[1]) if c[1] is not None else 1), c[0])

    @v_args(meta=True)
    def cycles(self, meta, c):
        return ("cycles", c[0], meta)

    @v_args(meta=True)
    def latency(self, meta, c):
        return ("latency", c[0], meta)

    @v_args(meta=True)
    def warn(self, meta, c):
        return ("warn", ir.Warn(c[0], unquote(c[1]), self.loc(meta)), meta)

    @v_args(meta=True)
    def semantics(self, meta, c):
        return ("semantics", c[0], meta)

    @v_args(meta=True)
    def pseudo(self, meta, c):
        name, syntax, *items = c
        exps, docs, examples = [], [], []
        for item in self._flatten(items):
            if isinstance(item, ir.Expansion):
                exps.append(item)
            elif item[0] == "doc":
                docs.append(item[1])
            else:
                examples.append(item[1])
        if not exps:
            self.reporter.error(self.loc(name), f"pseudo {name} has no 'expands'")
        return ("pseudos", ir.Pseudo(str(name), unquote(syntax), tuple(exps), "\n\n".join(docs), tuple(examples),
                                     loc=self.loc(name), syntax_loc=ir.Loc(self.path, syntax.line, syntax.column + 1)),
                meta)

    @v_args(meta=True)
    def expansion(self, meta, c):
        when, *lines = c
        return ir.Expansion(when, tuple(unquote(s) for s in lines), self.loc(meta),
                            tuple(ir.Loc(self.path, s.line, s.column + 1) for s in lines))

    @v_args(meta=True)
    def function(self, meta, c):
        name, *rest = c
        doc, body, result = rest.pop(), rest.pop(), rest.pop()
        params = tuple(p for p in rest if p is not None)
        return ("functions", ir.Function(str(name), params, result, body, unquote(doc) if doc else "",
                                         self.loc(name)), meta)

    def fparam(self, c):
        return ir.FuncParam(str(c[0]), c[1], self.loc(c[0]))

    @v_args(meta=True)
    def section(self, meta, c):
        title, *items = c
        docs, members = [], []
        for kind, value, imeta in self._flatten(items):
            if kind == "doc":
                docs.append(value)
            else:
                members.append((kind, _with_section(value, unquote(title))))
        return ("section", (unquote(title), "\n\n".join(docs), members), meta)

    # ---- dialect / abi / hwloop / examples ----------------------------------------------------------
    @v_args(meta=True)
    def dialect(self, meta, c):
        opts, relocs, docs = [], [], []
        for item in self._flatten(c):
            if isinstance(item, ir.DialectOpt):
                opts.append(item)
            elif isinstance(item, ir.Reloc):
                relocs.append(item)
            else:
                docs.append(item[1])
        return ("dialect", ir.Dialect(tuple(opts), tuple(relocs), "\n\n".join(docs), self.loc(meta)), meta)

    def dialect_opt(self, c):
        name, *values = c
        return ir.DialectOpt(str(name), tuple(v for v, _ in values), self.loc(name), tuple(loc for _, loc in values))

    def dvalue(self, c):
        tok = c[0]
        if tok.type == "STRING":
            return unquote(tok), self.loc(tok)
        if tok.type == "INT":
            return self._int(tok), self.loc(tok)
        return str(tok), self.loc(tok)

    def reloc(self, c):
        name, arg, value, paired = c
        return ir.Reloc(str(name), str(arg), value, str(paired) if paired else "", self.loc(name),
                        self.loc(paired) if paired else ir.NOWHERE)

    @v_args(meta=True)
    def abi(self, meta, c):
        kw: dict = {"regions": [], "doc": [], "preserve": []}
        seen: dict = {}
        for kind, value, imeta in self._flatten(c):
            if kind in ("regions", "doc"):
                kw[kind].append(value)
            elif kind == "preserve":  # may be split over several lines (integer and float registers)
                for item in value:
                    kw[kind].extend(item)
            elif self._once(seen, kind, "abi", imeta):
                if kind == "args":
                    value, kw["arg_locs"] = tuple(str(x) for x in value), tuple(self.loc(x) for x in value)
                if kind == "stack":
                    kw["stack_loc"] = self.loc(value[0])
                    value = (str(value[0]), value[1])
                kw[kind] = value
                if kind in ("args", "end"):
                    kw[kind + "_loc"] = self.loc(imeta)
        kw["regions"] = tuple(kw["regions"])
        kw["preserve"], kw["preserve_locs"], kw["preserve_ranges"] = (tuple(x) for x in zip(*kw["preserve"])) \
            if kw["preserve"] else ((), (), ())
        kw["doc"] = "\n\n".join(kw["doc"])
        return ("abi", ir.Abi(**kw, loc=self.loc(meta)), meta)

    @v_args(meta=True)
    def abi_entry(self, meta, c):
        return ("entry", c[0], meta)

    @v_args(meta=True)
    def abi_args(self, meta, c):
        return ("args", tuple(c), meta)

    @v_args(meta=True)
    def abi_preserve(self, meta, c):
        return ("preserve", tuple(c), meta)

    def reg_range(self, c):
        """[(name, loc, range text or "")]: a range is expanded here (it counts names); its last name is
        located at its own token, the others at the range."""
        first, last = c
        if last is None:
            return [(str(first), self.loc(first), "")]
        names = ir.name_range(str(first), str(last))
        text = f"{first}-{last}"
        if isinstance(names, str):
            self.reporter.error(self.loc(first), f"abi preserve: {names}")
            return []
        return [(n, self.loc(last) if n == str(last) else self.loc(first), text) for n in names]

    @v_args(meta=True)
    def abi_end_halt(self, meta, c):
        return ("end", ("halt", str(c[0])), meta)

    @v_args(meta=True)
    def abi_end(self, meta, c):
        return ("end", tuple(str(x) for x in c if x is not None), meta)

    @v_args(meta=True)
    def abi_stack(self, meta, c):
        return ("stack", (c[0], c[1]), meta)

    @v_args(meta=True)
    def abi_region(self, meta, c):
        name, mem, lo, hi, role, doc = c
        return ("regions", ir.AbiRegion(str(name), str(mem), lo, hi, str(role), unquote(doc) if doc else "",
                                        self.loc(name)), meta)

    @v_args(meta=True)
    def hwloop(self, meta, c):
        kw: dict = {"doc": []}
        seen: dict = {}
        for kind, value, imeta in self._flatten(c):
            if kind == "doc":
                kw["doc"].append(value)
            elif self._once(seen, kind, "hwloop", imeta):
                kw[kind] = value
                if kind in ("start", "end", "registers"):
                    kw[kind + "_loc"] = self.loc(imeta)
        if "registers" in kw:  # register-driven loops (count, start, end state items): no instruction pair
            for req in ("start", "end"):
                if req in kw:
                    self.reporter.error(kw[req + "_loc"], f"hwloop: '{req} INSTRUCTION' and 'registers' exclude each other")
        else:
            for req in ("start", "end"):
                if req not in kw:
                    self.reporter.error(self.loc(meta), f"hwloop needs '{req} INSTRUCTION' (or 'registers COUNT, START, END')")
                    kw[req] = ""
        kw["doc"] = "\n\n".join(kw["doc"])
        return ("hwloop", ir.HwLoop(**kw, loc=self.loc(meta)), meta)

    @v_args(meta=True)
    def hw_start(self, meta, c):
        return ("start", str(c[0]), c[0])

    @v_args(meta=True)
    def hw_end(self, meta, c):
        return ("end", str(c[0]), c[0])

    @v_args(meta=True)
    def hw_depth(self, meta, c):
        return ("depth", c[0], meta)

    @v_args(meta=True)
    def hw_registers(self, meta, c):
        return ("registers", tuple(str(x) for x in c), c[0])

    @v_args(meta=True)
    def example(self, meta, c):
        code, *items = c
        kw: dict = {"doc": []}
        seen: dict = {}
        for kind, value, imeta in self._flatten(items):
            if kind == "doc":
                kw["doc"].append(value)
            elif self._once(seen, kind, "example", imeta):
                kw[kind] = value
        kw["doc"] = "\n\n".join(kw["doc"])
        return ("example", ir.Example(unquote(code), **kw, loc=self.loc(meta)), meta)

    @v_args(meta=True)
    def given(self, meta, c):
        return ("given", c[0], meta)

    @v_args(meta=True)
    def expect(self, meta, c):
        return ("expect", tuple(x for x in c if x is not None and not isinstance(x, Token)), meta)

    # ---- semantics ----------------------------------------------------------------------------------
    def block(self, c):
        return tuple(s for s in c if s is not None and not isinstance(s, Token))

    @v_args(meta=True)
    def let(self, meta, c):
        return ir.Let(str(c[0]), c[1], c[2], False, self.loc(meta))

    @v_args(meta=True)
    def var(self, meta, c):
        return ir.Let(str(c[0]), c[1], c[2], True, self.loc(meta))

    @v_args(meta=True)
    def assign(self, meta, c):
        return ir.Assign(c[0], c[1], self.loc(meta))

    @v_args(meta=True)
    def if_stmt(self, meta, c):
        cond, then, orelse = c
        if isinstance(orelse, ir.If):
            orelse = (orelse,)
        return ir.If(cond, then, orelse or (), self.loc(meta))

    @v_args(meta=True)
    def for_stmt(self, meta, c):
        return ir.For(str(c[0]), c[1], c[2], c[3], self.loc(meta))

    @v_args(meta=True)
    def require(self, meta, c):
        return ir.Require(c[0], unquote(c[1]), self.loc(meta))

    @v_args(meta=True)
    def trap(self, meta, c):
        return ir.Trap(unquote(c[0]), self.loc(meta))

    @v_args(meta=True)
    def halt(self, meta, c):
        return ir.Halt(self.loc(meta))

    @v_args(meta=True)
    def call_stmt(self, meta, c):
        return ir.CallStmt(c[0], self.loc(meta))

    # ---- expressions -----------------------------------------------------------------------------------
    @v_args(meta=True)
    def cond(self, meta, c):
        return ir.Cond(c[0], c[1], c[2], self.loc(meta))

    def binop(self, c):
        left, op, right = c
        return ir.Binary(str(op), left, right, self.loc(op))

    def unop(self, c):
        op, operand = c
        if op == "+":
            return operand
        if op == "-" and isinstance(operand, ir.Num):  # fold so that -5 prints and reparses as itself
            return ir.Num(-operand.value, self.loc(op))
        return ir.Unary(str(op), operand, self.loc(op))

    @v_args(meta=True)
    def index(self, meta, c):
        return ir.Index(c[0], c[1], self.loc(meta))

    @v_args(meta=True)
    def slice(self, meta, c):
        return ir.Slice(c[0], c[1], c[2], self.loc(meta))

    @v_args(meta=True)
    def call(self, meta, c):
        name, *args = c
        return ir.Call(str(name), tuple(a for a in args if a is not None), self.loc(name))

    def reduce(self, c):
        op, var, lo, hi, body = c
        return ir.Reduce(str(op), str(var), lo, hi, body, self.loc(op))

    def int_lit(self, c):
        return ir.Num(self._int(c[0]), self.loc(c[0]))

    def float_lit(self, c):
        return ir.FloatLit(repr(float(c[0].replace("_", ""))), self.loc(c[0]))

    def name(self, c):
        return ir.Name(str(c[0]), self.loc(c[0]))


class _TokMeta:
    def __init__(self, line, column):
        self.line, self.column = line, column


def _with_section(item, title):
    import dataclasses
    return dataclasses.replace(item, section=title)
