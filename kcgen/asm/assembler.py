"""The generated assembler: assembly text → Program, driven only by the checked Spec.

Pass 1 reads every line once: labels, directives, instructions (pseudo-instructions expanded,
VLIW bundles grouped), sizes and addresses. Pass 2 evaluates the expressions left open
(symbols, `%reloc(...)`, local labels) and encodes. Every error of the file is collected (up to a
cap) with its line and column, GNU style.
"""
from __future__ import annotations

import re
import struct
from dataclasses import dataclass, field
from typing import NamedTuple, Optional, Union

from isadl import ir
from isadl.check import InsnSpec, Spec
from isadl.diagnostics import Diagnostic, IsaError, did_you_mean
from isadl.params import EvalError, compile_expr, names_in
from isadl.syntax import Operand, Template
from isadl.types import IntT

from .expr import ExprError, Node, parse_expr, parse_number
from .fastpath import compile_encoder, compile_lane, compile_matcher, compile_pseudo_lane
from .expr import evaluate as eval_expr
from .program import Program, Section
from .tables import Encoding, bundle_formats, encodings, operand_range, pcrel_base, slot_nops

MAX_ERRORS = 100
# An image that no memory of the ISA holds (an instruction store, as on PLENA) is bounded by the
# pc's address space, and by this: the assembler never builds an image larger than 1 GiB.
MAX_IMAGE = 1 << 30
_PLACEHOLDER = re.compile(r"\{(\w+)\}")
_CONST_RELOC = re.compile(r"%(\w+)\(\s*(-?(?:0[xX][0-9a-fA-F]+|[0-9]+))\s*\)")
_SYMBOL = re.compile(r"[A-Za-z_.$][\w.$]*")
_LABEL = re.compile(r"\s*([A-Za-z_.$][\w.$]*|[0-9]+)\s*:(?!=)")
_DATA_SIZES = {".byte": 1, ".half": 2, ".short": 2, ".hword": 2, ".2byte": 2, ".word": 4, ".long": 4, ".4byte": 4,
               ".int": 4, ".dword": 8, ".quad": 8, ".8byte": 8}
_SPACE = (".zero", ".space", ".skip")
# Directives that place bytes (GNU as names, implemented here or not): a dialect that lacks one is
# offered a directive that places the same bytes, never a look-alike that does something else.
_DATA_LIKE = frozenset(_DATA_SIZES) | frozenset(_SPACE) | {".float", ".double", ".ascii", ".asciz", ".string",
                                                         ".fill", ".incbin"}


class _Fail(NamedTuple):
    """Why a form does not fit a line: lower rank = closer fit (reported first)."""
    rank: int
    column: int
    message: str
    gap: int = 0  # operand groups missing or too many (rank 2)
    syntax: str = ""  # the form's syntax (rank 2: the message ends with it)
    wrong_file: Optional[tuple[str, str, str, str]] = None  # (text, its file, operand, file the operand needs)


def _best_failure(failures: list[_Fail]) -> tuple[int, str]:
    """The column and message of the form that fits a line best: one whose operand count fits
    over one whose count does not; then the one that matched the most operands (the furthest
    column); then the lower rank, a register of the wrong file over other mistakes at that
    operand, the nearest operand count. Forms that fail alike say so together: every register
    file the operand would take, every syntax of that operand count."""
    def key(f: _Fail):
        return f.rank == 2, -f.column, f.rank, f.wrong_file is None, f.gap
    best = min(failures, key=key)
    tied = [f for f in failures if key(f) == key(best)]
    if best.wrong_file is not None:
        text, file = best.wrong_file[:2]
        alike = [f.wrong_file for f in tied if f.wrong_file[:2] == (text, file)]
        names = "/".join(dict.fromkeys(w[2] for w in alike))
        files = " or ".join(dict.fromkeys(w[3] for w in alike))
        return best.column, f"'{text}' is a register of {file}; {names} needs a register of {files}"
    if best.rank == 2:
        head = best.message[:-len(best.syntax) - 1]
        syntaxes = dict.fromkeys(f.syntax for f in tied if f.message[:-len(f.syntax) - 1] == head)
        return best.column, head + " or ".join(syntaxes) + ")"
    return best.column, best.message


class AsmError(IsaError):
    """Errors in an assembly file; str() is the GNU-style report."""


# ---- the matcher: one compiled form per way of writing a mnemonic ------------------------------------------

@dataclass
class _Group:
    """The operands between two top-level commas of a syntax template."""
    text: str  # the template text of this group, for messages
    operands: tuple[Operand, ...]
    single: bool  # the group is exactly one operand
    regex: Optional[re.Pattern]
    optional: bool
    parts_start_with_imm: bool = False  # `{off}({base})`: the offset may be left out


@dataclass
class _Form:
    name: str
    template: Template
    groups: list[_Group]
    required: int  # groups that must be present
    insn: Optional[InsnSpec] = None
    pseudo: Optional[ir.Pseudo] = None
    specs: dict = field(default_factory=dict)  # operand name -> OperandSpec
    simple: tuple = ()  # when every group is one operand: the operands in order (the fast path)
    simple_specs: tuple = ()
    fast: object = None  # generated matcher (kcgen.asm.fastpath), when the form is simple

    def __post_init__(self):
        if self.groups and all(g.single for g in self.groups) and all(
                self.specs.get(g.operands[0].name) is not None for g in self.groups):
            self.simple = tuple(g.operands[0] for g in self.groups)
            self.simple_specs = tuple(self.specs[o.name] for o in self.simple)


def _split_top(text: str, sep: str = ",") -> list[tuple[str, int]]:
    """Split at separators outside () and []; returns (piece, start offset) pairs."""
    out, pos, pending = [], 0, None
    if "(" not in text and "[" not in text and ")" not in text and "]" not in text:
        for raw in text.split(sep):  # no brackets at all: every separator splits
            out.append((raw, pos))
            pos += len(raw) + 1
        return out
    for raw in text.split(sep):  # split at C speed, then re-join pieces cut inside brackets
        piece, begin = (pending[0] + sep + raw, pending[1]) if pending is not None else (raw, pos)
        pos += len(raw) + 1
        depth = _depth(piece) if ("(" in piece or "[" in piece or ")" in piece or "]" in piece) else 0
        if depth < 0:
            break  # a closing bracket first: let the careful scan below decide
        if depth > 0:
            pending = (piece, begin)
            continue
        pending = None
        out.append((piece, begin))
    else:
        if pending is None:
            return out
    out, depth, start = [], 0, 0  # unbalanced brackets: the careful scan, for a precise error later
    for i, ch in enumerate(text):
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif ch == sep and depth == 0:
            out.append((text[start:i], start))
            start = i + 1
    out.append((text[start:], start))
    return out


def _depth(text: str) -> int:
    """Bracket depth at the end of text; -1 as soon as it would go negative."""
    depth = 0
    for ch in text:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
            if depth < 0:
                return -1
    return depth


def _literal_regex(lit: str) -> str:
    out = []
    for ch in lit:
        out.append(r"\s*" if ch.isspace() else r"\s*" + re.escape(ch) + r"\s*")
    return "".join(out)


def _operand_regex(op: Operand, specs: dict) -> str:
    s = specs.get(op.name)
    if s is not None and s.kind == "reg":
        return rf"(?P<{op.name}>[A-Za-z_.$][\w.$]*)"
    if s is not None and s.kind == "enum":
        return rf"(?P<{op.name}>[^,()\[\]\s]+)"
    return rf"(?P<{op.name}>[^,\[\]\s][^,\[\]]*?)"


def _groups(template: Template, specs: dict) -> tuple[list[_Group], int]:
    # Flatten the parts after the mnemonic into a string with operand placeholders, split at commas.
    pieces: list[list] = [[]]
    depth = 0
    for part in template.parts:
        if isinstance(part, Operand):
            pieces[-1].append(part)
            continue
        buf = ""
        for ch in part:
            if ch in "([":
                depth += 1
            elif ch in ")]":
                depth -= 1
            if ch == "," and depth == 0:
                pieces[-1].append(buf)
                pieces.append([])
                buf = ""
            else:
                buf += ch
        if buf:
            pieces[-1].append(buf)
    groups = []
    for parts in pieces:
        ops = tuple(p for p in parts if isinstance(p, Operand))
        lits = "".join(p for p in parts if isinstance(p, str))
        text = "".join(p if isinstance(p, str) else "{" + p.name + "}" for p in parts).strip()
        if not ops and not lits.strip():
            continue
        single = len(ops) == 1 and not lits.strip()
        regex = None
        if not single:
            body = "".join(_literal_regex(p) if isinstance(p, str) else _operand_regex(p, specs) for p in parts)
            regex = re.compile(r"\s*" + body + r"\s*")
        first = next((p for p in parts if not (isinstance(p, str) and not p.strip())), None)
        starts_imm = isinstance(first, Operand) and specs.get(first.name) is not None and \
            specs[first.name].kind == "imm"
        groups.append(_Group(text, ops, single, regex, bool(ops) and all(o.optional for o in ops), starts_imm))
    required = sum(1 for g in groups if not g.optional)
    return groups, required


# ---- pass-1 records ---------------------------------------------------------------------------------------

@dataclass(slots=True)
class _Op:
    enc: Encoding
    values: dict  # operand name -> int | expression node (shared with the memo: never mutated)
    cols: Optional[dict]  # operand name -> 0-based column; None: recomputed from `src` when an error needs it
    relocs: list  # reloc operator names used by this op's operands
    final: dict = field(default_factory=dict)  # pass 2: operand values as encoded (pcrel: the target)
    src: Optional[tuple] = None  # (statement text, column, form) for recomputing columns
    word: Optional[int] = None  # encoded already in pass 1 (numbers only, nothing pc-relative)


@dataclass(slots=True)
class _Item:
    section: str
    offset: int
    size: int
    line: int
    col: int
    text: str
    ops: list  # [_Op] for instructions; [] for data
    bundle: object = None  # FormatLayout for VLIW bundles
    data: Optional[list] = None  # [(node_or_int, size, col)] for data directives
    float_data: bool = False
    seq: int = 0
    raw: Optional[bytes] = None  # .space/.zero/.skip and alignment padding: this pattern, repeated over size


@dataclass
class _Symbol:
    section: Optional[str]  # None: an absolute value (.equ)
    value: Union[int, Node]
    line: int
    col: int


class Assembler:
    """Assembles text for one checked ISA. Build once per target, reuse for every program."""

    def __init__(self, spec: Spec):
        self.spec = spec
        isa = spec.isa
        self.word_bytes = spec.word // 8
        self.endian = isa.endian or "little"
        self.encs = encodings(spec)
        self.pcrel_next = pcrel_base(spec) == "next"
        opts = {o.name: o.values for o in isa.dialect.options} if isa.dialect else {}
        self.comments = tuple(opts.get("comment", ("#",)))
        labels = set(opts.get("labels", ("named",)))
        self.named_labels = "named" in labels
        self.numeric_labels = "numeric" in labels
        self.insensitive = tuple(opts.get("case", ())) == ("insensitive",)
        self.imm_prefix = (opts.get("immediate_prefix") or ("",))[0]
        self.bundle_sep = (opts.get("bundle_separator") or ("",))[0]
        self.directive_order = tuple(opts.get("directives", ()))
        self.directives = set(self.directive_order)
        self.ignored = set(opts.get("ignore_directives", ()))
        self.relocs = {r.name: r for r in isa.dialect.relocs} if isa.dialect else {}
        self.regnames = {self._norm(k): v for k, v in spec.regnames.items()}
        self.regs_by_file: dict[str, list[str]] = {}
        for name, (file, _) in spec.regnames.items():
            self.regs_by_file.setdefault(file, []).append(name)
        self.enum_values = {e.name: {self._norm(i.name): i.value for i in e.items} for e in isa.enums}
        self.forms: dict[str, list[_Form]] = {}
        for e in self.encs.values():
            self._add_form(_Form(e.name, e.insn.template, *_groups(e.insn.template, e.insn.operands),
                                 insn=e.insn, specs=e.insn.operands))
        pseudo_ir = {p.name: p for p in isa.pseudos}
        for name, tpl in spec.pseudos.items():
            specs = spec.pseudo_operands[name]
            self._add_form(_Form(name, tpl, *_groups(tpl, specs), pseudo=pseudo_ir[name], specs=specs))
        self.when = {id(e): compile_expr(e.when, spec.params) for p in isa.pseudos for e in p.expansions
                     if e.when is not None}
        self.reloc_fns = {r.name: compile_expr(r.value, spec.params) for r in self.relocs.values()}
        self.pc_free_relocs = {r.name for r in self.relocs.values()
                               if not r.paired and all(n.id != "pc" for n in names_in(r.value))}
        self.warn_fns = {name: [(compile_expr(w.cond, spec.params), w.message) for w in s.insn.warnings]
                         for name, s in spec.instructions.items() if s.insn.warnings}
        self.plans = {name: tuple(_plan(b) for b in e.bindings) for name, e in self.encs.items()}
        self.pc_relative = {name for name, e in self.encs.items() if any(b.operand.kind == "pcrel" for b in e.bindings)}
        self.encoders = {name: compile_encoder(name, e.insn.match, self.plans[name], self.pcrel_next)
                         for name, e in self.encs.items()}
        for forms in self.forms.values():
            for form in forms:
                form.fast = compile_matcher(form, self.regnames, self.enum_values, self.insensitive, self.imm_prefix)
        self.memo: dict[str, list] = {}
        self.bundles = bundle_formats(spec)
        self.nops = slot_nops(spec, self.encs)
        self.hwloop = isa.hwloop
        t = isa.timing  # an exposed VLIW pipeline: warn on reads before a result is written (kcgen.sim.hazards)
        self.exposed = t is not None and t.model == "vliw" and any(
            p.name == "exposed" and spec.params_eval(p.value) for p in t.props)
        self.const_reloc_rx = _CONST_RELOC
        self._fast_lane = True  # private switch: False sends every line through the generic path (tests)
        self.lanes, self.lane_guard = self._lanes()
        self.value_lanes = self._lanes(values=True)[0] if self.lanes else {}
        self.loop_depth = spec.params_eval(isa.hwloop.depth) if isa.hwloop and isa.hwloop.depth is not None else None
        self.entry = spec.params_eval(isa.abi.entry) if isa.abi and isa.abi.entry is not None else 0
        self.memories = _byte_memories(spec)
        self.room, self.room_text = _image_room(self.memories, self.entry, spec.context.pc_type.width)

    MEMO_LIMIT = 1 << 18

    def nop_bytes(self) -> bytes:
        """The encoding of `nop` (an instruction or pseudo of that name), or b"" if the ISA has none."""
        if not hasattr(self, "_nop"):
            self._nop = b""
            if self._norm("nop") in self.forms and not self.bundles:
                try:
                    program = _Run(self, "nop", "<nop>").run()
                    self._nop = bytes(program.text.data)
                except AsmError:
                    pass
        return self._nop

    def _lanes(self, values: bool = False) -> tuple[dict, object]:
        """The line lanes (kcgen.asm.fastpath) by mnemonic, and a search for the characters that
        keep a line off them (comments, labels, quotes): such lines need the generic path.
        `values`: lanes that return what the source map records instead of bytes."""
        if self.bundles or self.bundle_sep or not all(self.comments):
            return {}, None
        if any(v[1].__class__ is not int for v in self.regnames.values()) or any(
                v.__class__ is not int for e in self.enum_values.values() for v in e.values()):
            return {}, None
        loop_insns = {self.hwloop.start, self.hwloop.end} if self.hwloop else set()
        lanes = {}
        for key, forms in self.forms.items():
            if key.startswith(".") or not all(
                    f.pseudo is None and f.name not in self.pc_relative and f.name not in self.warn_fns
                    and f.name not in loop_insns for f in forms):
                continue
            fn = compile_lane(key, forms, self, values)
            if fn is not None:
                lanes[key] = fn
        insn_lanes = dict(lanes)
        for key, forms in self.forms.items():
            if not key.startswith(".") and len(forms) == 1 and forms[0].pseudo is not None:
                fn = compile_pseudo_lane(key, forms[0], self, insn_lanes, values)
                if fn is not None:
                    lanes[key] = fn
        stops = {":", '"', "'"} | {c[0] for c in self.comments}
        return lanes, re.compile("[" + "".join(re.escape(c) for c in sorted(stops)) + "]").search

    def fold_reloc(self, m: re.Match) -> str:
        """%name(NUMBER) with an operator that does not depend on pc: its value, as text."""
        name = m.group(1)
        if name not in self.pc_free_relocs:
            return m.group(0)
        r = self.relocs[name]
        return str(self.reloc_fns[name]({r.arg: int(m.group(2), 0)}))

    def remember(self, stmt: str, ops: list) -> None:
        if len(self.memo) >= self.MEMO_LIMIT:
            self.memo.clear()
        self.memo[stmt] = ops

    def _norm(self, s: str) -> str:
        return s.lower() if self.insensitive else s

    def _add_form(self, form: _Form) -> None:
        self.forms.setdefault(self._norm(form.template.mnemonic), []).append(form)

    def assemble(self, text: str, path: str = "<input>") -> Program:
        return _Run(self, text, path).run()


class _Run:
    """One assembly of one file."""

    def __init__(self, asm: Assembler, text: str, path: str):
        self.a = asm
        self.text = text
        self.path = path
        self.diags: list[Diagnostic] = []
        self.warnings: list[Diagnostic] = []
        self.section = ".text"
        self.sizes: dict[str, int] = {".text": 0}
        self.aligns: dict[str, int] = {".text": 1}
        self.items: list[_Item] = []
        self.symbols: dict[str, _Symbol] = {}  # the latest definition of each
        self.history: dict[str, list[_Symbol]] = {}  # every definition of a symbol redefined by .set/.equ
        self.symbol_uses = 0  # values taken from symbols in pass 1 (a statement that took one is not memoized)
        self.locals: dict[int, list[tuple[int, str, int]]] = {}  # n -> [(seq, section, offset)]
        self.globals: set[str] = set()
        self.loops: list[tuple[int, int]] = []  # open hardware loops: (line, col)
        self.reloc_items: list[_Item] = []
        self.seen: set[Diagnostic] = set()
        self.expansion_col: Optional[int] = None
        self.globl_at: dict[str, tuple[int, int]] = {}  # items whose operands use %reloc(...) (targets of %pcrel_lo)
        self.seq = 0
        self.line_no = 0
        self.line = ""
        self.lines: list[str] = []
        self.bufs: dict[str, bytearray] = {".text": bytearray()}  # section bytes written in pass 1 (lanes)
        self.laned: dict[str, list[int]] = {".text": []}  # per section: line, offset, line, offset, ... of laned lines
        self.align_at: dict[str, tuple[int, int]] = {}  # section -> (line, col) of the directive that set its alignment
        self.overflowed = False  # the image outgrew the memories (reported once; nothing that size is built)

    # ---- diagnostics ---------------------------------------------------------------------------
    def error(self, col: int, message: str, line: Optional[int] = None) -> None:
        if self.expansion_col is not None and line is None:
            col = self.expansion_col  # inside a pseudo's expansion: point at the pseudo-instruction
        d = Diagnostic(ir.Loc(self.path, line or self.line_no, col + 1), message)
        if len(self.diags) < MAX_ERRORS and d not in self.seen:
            self.seen.add(d)  # one report per place and message (a symbol used twice in an expansion)
            self.diags.append(d)

    def warn(self, col: int, message: str, line: Optional[int] = None) -> None:
        self.warnings.append(Diagnostic(ir.Loc(self.path, line or self.line_no, col + 1), message, "warning"))

    # ---- pass 1 ----------------------------------------------------------------------------------------
    def run(self) -> Program:
        self.lines = lines = self.text.split("\n")
        lanes = self.a.lanes if self.a._fast_lane else None
        guard, fold = self.a.lane_guard, self.a.insensitive
        sizes, bufs, laned = self.sizes, self.bufs, self.laned
        for no, raw in enumerate(lines, 1):
            if lanes and guard(raw) is None:
                # A whole line `mnemonic operands` (no label, comment or string): its lane encodes
                # it straight into the section, or says None and the generic path takes it.
                stmt = raw.strip()
                if not stmt:
                    continue
                parts = stmt.split(None, 1)
                lane = lanes.get(parts[0].lower() if fold else parts[0])
                if lane is not None:
                    data = lane(parts[1] if len(parts) > 1 else "")
                    if data is not None:
                        section = self.section
                        offset = sizes[section]
                        buf = bufs[section]
                        if len(buf) < offset:  # items of the generic path before this one are written in pass 2
                            buf.extend(bytes(offset - len(buf)))
                        buf += data
                        sizes[section] = offset + len(data)
                        laned[section] += (no, offset)
                        continue
            self.line_no, self.line = no, raw
            self.statement_line(raw)
        self.line_no, self.line = len(lines), lines[-1]
        for name, amount in self.aligns.items():  # a section ends aligned, like its start (GNU as)
            if amount > 1:
                line, col = self.align_at.get(name, (self.line_no, 0))
                self.pad(name, amount, col, line, f"aligning the end of section {name} to {amount} bytes")
        for line, col in self.loops:
            self.error(col, f"hardware loop opened here is never closed with {self.a.hwloop.end}", line)
        program = self.pass2()
        if self.diags:
            raise AsmError(self.diags + self.warnings, {self.path: self.text})
        if self.a.exposed:
            from kcgen.sim.hazards import stale_reads  # noqa: PLC0415 - kcgen.sim imports this module
            self.warnings += stale_reads(self.a.spec, program, self.path, self.text)
        program.warnings = self.warnings
        return program

    def strip_comment(self, raw: str) -> str:
        cut = len(raw)
        for c in self.a.comments:
            i = raw.find(c)
            while 0 <= i < cut and (_in_string(raw, i) or raw[i - 1:i] == "'" == raw[i + len(c):i + len(c) + 1]):
                i = raw.find(c, i + 1)  # inside "..." or a character constant such as '#'
            if 0 <= i < cut:
                cut = i
        return raw[:cut]

    def statement_line(self, raw: str) -> None:
        body = self.strip_comment(raw)
        pos = 0
        while True:  # labels
            m = _LABEL.match(body, pos)
            if not m:
                break
            self.define_label(m.group(1), m.start(1))
            pos = m.end()
        rest = body[pos:]
        if not rest.strip():
            return
        col = pos + len(rest) - len(rest.lstrip())
        stmt = rest.strip()
        if stmt.startswith("."):
            self.directive(stmt, col)
        elif self.a.bundle_sep and self.a.bundle_sep in stmt:
            self.bundle(stmt, col)
        else:
            ops = self.instruction(stmt, col)
            if ops:
                self.place_ops(ops, col)

    def define_label(self, name: str, col: int) -> None:
        if name.isdigit():
            if not self.a.numeric_labels:
                self.error(col, f"numeric local label '{name}:' is not allowed in this assembly dialect")
                return
            self.seq += 1  # items after this label (same line included) see it as `Nb`, earlier ones as `Nf`
            self.locals.setdefault(int(name), []).append((self.seq, self.section, self.sizes[self.section]))
            return
        if not self.a.named_labels:
            self.error(col, "labels are not allowed in this assembly dialect")
            return
        if name in self.symbols:
            prev = self.symbols[name]
            self.error(col, f"duplicate label '{name}' (first defined at line {prev.line})")
            return
        if self.a._norm(name) in self.a.regnames or self.a._norm(name) in self.a.forms:
            self.error(col, f"'{name}' is a register or mnemonic and cannot be a label")
            return
        self.symbols[name] = _Symbol(self.section, self.sizes[self.section], self.line_no, col)

    # ---- instructions ----------------------------------------------------------------------------------
    def instruction(self, stmt: str, col: int, depth: int = 0) -> list[_Op]:
        """Parse one instruction or pseudo (expanded); returns its ops, or [] after an error."""
        memo = self.a.memo.get(stmt)
        if memo is not None:  # the same text always means the same operands (numbers and registers only)
            return [_Op(enc, values, None, [], final, (stmt, col, form), word) for enc, values, form, word, final in memo]
        parts = stmt.split(None, 1)
        mnemonic = parts[0]
        operand_text = parts[1] if len(parts) > 1 else ""
        op_col = col + (stmt.index(operand_text, len(mnemonic)) if operand_text else len(stmt))
        forms = self.a.forms.get(self.a._norm(mnemonic))
        if forms is None:
            hint = did_you_mean(mnemonic.lower(), {m.lower(): m for m in self.a.forms})
            if hint:
                lowered = {m.lower(): m for m in self.a.forms}
                guess = hint.split("'")[1]
                hint = f"; did you mean '{lowered.get(guess, guess)}'?"
            self.error(col, f"unknown instruction '{mnemonic}'{hint}")
            return []
        pieces = _split_top(operand_text) if operand_text.strip() else []
        for form in forms:
            if form.fast is not None and form.pseudo is not None and form.simple and depth == 0:
                got = form.fast(pieces)
                values = got[0] if got is not None else None
                if got is not None and got[1] and all(
                        s.kind != "imm" or s.lo <= values[o.name] <= s.hi for o, s in zip(form.simple, form.simple_specs)):
                    texts = {op.name: piece.strip() for op, (piece, _) in zip(form.simple, pieces)}
                    ops = self.expand(form, values, {}, texts, col, depth)
                    if ops and all(v.__class__ is int for op in ops for v in op.values.values()):
                        self.a.remember(stmt, [(op.enc, op.values, None, op.word, op.final) for op in ops])
                    if ops or self.diags:
                        return ops
            if form.fast is not None and form.pseudo is None:
                got = form.fast(pieces)
                if got is not None:
                    values, pure = got
                    enc = self.a.encs[form.name]
                    op = _Op(enc, values, None, [], src=(stmt, col, form))
                    if pure:
                        if form.name not in self.a.pc_relative:
                            done = self.a.encoders[form.name](values, 0, 0)
                            if done is not None:
                                op.word, op.final = done
                        self.a.remember(stmt, [(enc, values, form, op.word, op.final)])
                    return [op]
        failures = []
        uses = self.symbol_uses
        for form in forms:
            result = self.match(form, pieces, op_col)
            if not isinstance(result, _Fail):
                values, cols, texts = result
                if form.pseudo is not None:
                    ops = self.expand(form, values, cols, texts, col, depth)
                    if ops and depth == 0 and self.symbol_uses == uses and all(
                            v.__class__ is int for op in ops for v in op.values.values()):
                        self.a.remember(stmt, [(op.enc, op.values, None, op.word, op.final) for op in ops])
                    return ops
                return [self.make_op(form, values, cols, (stmt, col, form))]
            failures.append(result)
        self.error(*_best_failure(failures))
        return []

    def match(self, form: _Form, pieces, op_col):
        """Operand values of a form, or (rank, column, message) saying why it does not fit."""
        n = len(pieces)
        if not form.required <= n <= len(form.groups):
            want = str(form.required) if form.required == len(form.groups) else f"{form.required} to {len(form.groups)}"
            last = pieces[-1] if pieces else ("", 0)
            got_col = op_col + last[1] + len(last[0]) - len(last[0].lstrip())
            gap = form.required - n if n < form.required else n - len(form.groups)
            return _Fail(2, got_col, f"'{form.template.mnemonic}' expects {want} operand group"
                                f"{'s' if want != '1' else ''}, got {n} (syntax: {form.template.text})",
                         gap, form.template.text)
        values: dict = {}
        cols: dict = {}
        texts: dict = {}
        if form.simple:
            return self.match_simple(form, pieces, op_col, n, values, cols, texts)
        for (piece, off), group in zip(pieces, form.groups):
            stripped = piece.strip()
            pcol = op_col + off + len(piece) - len(piece.lstrip())
            if not stripped:
                return _Fail(1, pcol, f"missing operand {group.text}")
            if group.single:
                op = group.operands[0]
                err = self.operand(form, op, stripped, pcol, values, cols, texts)
                if err:
                    return err
                continue
            m = group.regex.fullmatch(piece)
            if m is None and stripped.startswith("(") and group.parts_start_with_imm:
                m = group.regex.fullmatch("0" + stripped)  # `lw a0, (a1)` means 0(a1), as in GNU as
                if m is not None:
                    piece, off = "0" + stripped, off + len(piece) - len(piece.lstrip()) - 1
            if m is None and group.text.startswith("(") and re.match(r"0+\s*\(", stripped):
                # `vle8.v v1, 0(a0)`: an offset of zero before a base that takes none, as GNU as accepts
                zero = len(stripped) - len(stripped.lstrip("0"))
                piece, off = stripped[zero:], off + len(piece) - len(piece.lstrip()) + zero
                m = group.regex.fullmatch(piece)
            if m is None:
                return _Fail(1, pcol, f"expected {group.text}, got '{stripped}'")
            for op in group.operands:
                err = self.operand(form, op, m.group(op.name).strip(), op_col + off + m.start(op.name), values, cols, texts)
                if err:
                    return err
        for group in form.groups[n:]:
            for op in group.operands:
                values[op.name] = form.specs[op.name].default if form.specs.get(op.name) else op.default
                cols[op.name] = op_col
        return values, cols, texts

    def match_simple(self, form: _Form, pieces, op_col: int, n: int, values, cols, texts):
        """`match` for templates whose operands are separated by commas only (most of them)."""
        regnames, norm = self.a.regnames, self.a._norm
        for (piece, off), op, spec in zip(pieces, form.simple, form.simple_specs):
            text = piece.strip()
            col = op_col + off + (len(piece) - len(piece.lstrip()) if text else 0)
            if spec.kind == "reg":
                reg = regnames.get(norm(text))
                if reg is not None and reg[0] == spec.regfile and spec.offset <= reg[1] < spec.offset + spec.count:
                    values[op.name] = reg[1]
                    cols[op.name] = col
                    texts[op.name] = text
                    continue
            elif spec.kind == "imm" and not self.a.imm_prefix:
                v = parse_number(text)
                if v is not None:
                    values[op.name] = v
                    cols[op.name] = col
                    texts[op.name] = text
                    continue
            if not text:
                return _Fail(1, col, f"missing operand {op.name}")
            err = self.operand(form, op, text, col, values, cols, texts)
            if err:
                return err
        for op in form.simple[n:]:
            values[op.name] = form.specs[op.name].default if form.specs.get(op.name) else op.default
            cols[op.name] = op_col
        return values, cols, texts

    def operand(self, form: _Form, op: Operand, text: str, col: int, values, cols, texts):
        spec = form.specs.get(op.name)
        cols[op.name] = col
        texts[op.name] = text
        if spec is None:
            return _Fail(0, col, f"operand {op.name} has an invalid kind")
        if spec.kind == "reg":
            reg = self.a.regnames.get(self.a._norm(text))
            if reg is None:
                names = self.a.regs_by_file.get(spec.regfile, [])
                kind = "register" if re.fullmatch(r"[A-Za-z_.$][\w.$]*", text) else "a register"
                if kind == "register":
                    return _Fail(0, col, f"unknown register '{text}'{did_you_mean(text, names)}")
                return _Fail(0, col, f"expected a register of {spec.regfile}, got '{text}'")
            file, idx = reg
            if file != spec.regfile:
                return _Fail(0, col, f"'{text}' is a register of {file}; {op.name} needs a register of {spec.regfile}",
                             wrong_file=(text, file, op.name, spec.regfile))
            if not spec.offset <= idx < spec.offset + spec.count:
                return _Fail(0, col, f"'{text}' is not allowed here: {op.name} takes {spec.regfile}{spec.offset}.."
                                f"{spec.regfile}{spec.offset + spec.count - 1}")
            values[op.name] = idx
            return None
        if spec.kind == "enum":
            v = self.a.enum_values[spec.regfile].get(self.a._norm(text))
            enum = next(e for e in self.a.spec.isa.enums if e.name == spec.regfile)
            if v is None and enum.numbers:  # an open enum: any number of its width
                v = parse_number(text)
                if v is not None and not 0 <= v <= spec.hi:
                    return _Fail(0, col, f"{spec.regfile} {v} is out of range: {enum.numbers} takes 0..{spec.hi}")
            if v is None:
                options = ", ".join(i.name for i in enum.items)
                numbers = f" or a number 0..{spec.hi}" if enum.numbers else ""
                return _Fail(0, col, f"'{text}' is not a valid {spec.regfile} (one of: {options}{numbers})")
            values[op.name] = v
            return None
        if self.a.imm_prefix and text.startswith(self.a.imm_prefix):
            text = text[len(self.a.imm_prefix):].lstrip()
            col += 1
        n = parse_number(text)
        if n is not None:
            # A number written for a pc-relative operand is the offset itself (as LLVM MC reads it).
            values[op.name] = ("pcoff", n) if spec.kind == "pcrel" else n
            return None
        if _SYMBOL.fullmatch(text):
            if self.a._norm(text) in self.a.regnames:
                return _Fail(0, col, f"expected an immediate for {op.name}, got register '{text}'")
            known = self.symbols.get(text)
            if spec.kind == "imm" and known is not None and known.section is None and isinstance(known.value, int):
                values[op.name] = known.value  # an earlier .equ: a value already, as GNU as sees it
                self.symbol_uses += 1
            else:
                values[op.name] = ("sym", text, 0)  # the common label operand, without the expression parser
            return None
        try:
            node = parse_expr(text)
        except ExprError as exc:
            return _Fail(0, col + exc.column, str(exc))
        except RecursionError:
            return _Fail(0, col, "expression nested too deeply")
        if spec.kind == "imm":  # known already (numbers, earlier .equ): a value, as GNU as sees it
            try:
                node = eval_expr(node, self.pass1_symbol, _no_local, self.sizes[self.section], _no_reloc)
            except (_Unknown, ExprError):
                pass
        values[op.name] = node
        return None

    def make_op(self, form: _Form, values: dict, cols: dict, src: tuple) -> _Op:
        enc = self.a.encs[form.name]
        relocs = []
        for v in values.values():
            if isinstance(v, tuple):
                relocs.extend(_relocs_in(v))
        return _Op(enc, values, cols, relocs, src=src)

    def expand(self, form: _Form, values, cols, texts, col: int, depth: int) -> list[_Op]:
        if depth > 8:
            self.error(col, f"pseudo-instruction {form.name} expands too deeply")
            return []
        known = {k: v for k, v in values.items() if isinstance(v, int)}
        for name, v in known.items():
            spec = form.specs.get(name)
            if spec is not None and spec.kind == "imm" and spec.signed and spec.width == 64 and 1 << 63 <= v < 1 << 64:
                # GNU as reads a constant as a 64-bit word: li a0, 0xffffffffffffffff is li a0, -1
                known[name] = values[name] = v - (1 << 64)
        for name, v in known.items():  # the pseudo's own operand ranges (li's i32)
            spec = form.specs.get(name)
            if spec is not None and spec.kind == "imm" and not spec.lo <= v <= spec.hi:
                self.error(cols.get(name, col), f"immediate {v} is out of range for {name}: "
                                                f"{'i' if spec.signed else 'u'}{spec.width} takes {spec.lo}..{spec.hi}")
                return []
        for exp in form.pseudo.expansions:
            if exp.when is not None:
                if len(known) < len(values):
                    continue  # a symbol's value is not known yet: take the general expansion
                try:
                    if not self.a.when[id(exp)](known):
                        continue
                except (EvalError, KeyError):
                    continue
            ops: list[_Op] = []
            constant = len(known) == len(values)
            numbers = {k: str(v) for k, v in known.items() if form.specs[k].kind == "imm"}
            for line in exp.lines:
                if constant:  # numbers in, numbers out: fold %hi(123) and friends now
                    text = _PLACEHOLDER.sub(lambda m: numbers.get(m.group(1)) or texts.get(m.group(1), ""), line)
                    text = _CONST_RELOC.sub(self.a.fold_reloc, text)
                else:
                    text = _PLACEHOLDER.sub(lambda m: texts.get(m.group(1), str(values.get(m.group(1), ""))), line)
                outer, self.expansion_col = self.expansion_col, col if self.expansion_col is None else self.expansion_col
                try:
                    sub = self.instruction(text.strip(), col, depth + 1)
                finally:
                    self.expansion_col = outer
                for op in sub:  # columns of the expanded text mean nothing to the reader: use the pseudo's
                    op.cols = _expansion_columns(line, op, cols, col)
                    op.src = None
                if not sub:
                    return []
                ops.extend(sub)
            return ops
        return []

    def place_ops(self, ops: list[_Op], col: int) -> None:
        if self.a.bundles:
            self.place_bundle(ops, col)
            return
        for op in ops:
            if self.a.hwloop is not None:
                self.check_loop(op, col)
            size = op.enc.width // 8
            item = _Item(self.section, self.sizes[self.section], size, self.line_no, col, self.line.strip(), [op],
                         seq=self.seq)
            self.items.append(item)
            if op.relocs:
                self.reloc_items.append(item)
            self.sizes[self.section] += size

    def bundle(self, stmt: str, col: int) -> None:
        ops: list[_Op] = []
        for piece, off in _split_top(stmt, self.a.bundle_sep):
            if not piece.strip():
                continue
            pcol = col + off + len(piece) - len(piece.lstrip())
            got = self.instruction(piece.strip(), pcol)
            if not got:
                return
            ops.extend(got)
        self.place_bundle(ops, col)

    def place_bundle(self, ops: list[_Op], col: int) -> None:
        used: dict[str, _Op] = {}
        for op in ops:
            slot = op.enc.slot
            if slot in used:
                self.error(op.src[1] if op.src else col, f"slot conflict: {used[slot].enc.insn.template.mnemonic} and "
                                            f"{op.enc.insn.template.mnemonic} both need the {slot} slot")
                return
            used[slot] = op
        fmt = next((b for b in self.a.bundles if set(used) <= set(b.fields)), None)
        if fmt is None:
            self.error(col, f"no bundle format holds the slots {', '.join(sorted(used))} together")
            return
        for op in ops:
            self.check_loop(op, col)
        size = fmt.width // 8
        self.items.append(_Item(self.section, self.sizes[self.section], size, self.line_no, col, self.line.strip(),
                                ops, bundle=fmt, seq=self.seq))
        self.sizes[self.section] += size

    def check_loop(self, op: _Op, col: int) -> None:
        h = self.a.hwloop
        if h is None:
            return
        if op.enc.name == h.start:
            self.loops.append((self.line_no, col))
            if self.a.loop_depth is not None and len(self.loops) > self.a.loop_depth:
                self.error(col, f"hardware loops nest {len(self.loops)} deep; this machine supports {self.a.loop_depth}")
        elif op.enc.name == h.end:
            if not self.loops:
                self.error(col, f"{op.enc.insn.template.mnemonic} without a matching {h.start}")
            else:
                self.loops.pop()

    # ---- directives ------------------------------------------------------------------------------------
    def directive(self, stmt: str, col: int) -> None:
        parts = stmt.split(None, 1)
        name, args = parts[0], (parts[1] if len(parts) > 1 else "")
        arg_col = col + (stmt.index(args, len(name)) if args else len(stmt))
        if name in self.a.ignored:
            return
        if name not in self.a.directives:
            known = self.a.directives | self.a.ignored
            if not known:
                self.error(col, f"directives are not allowed in this assembly dialect ('{name}')")
            else:
                hint = self.data_hint(name) if name in _DATA_LIKE else did_you_mean(name, known)
                self.error(col, f"unknown directive '{name}'{hint}")
            return
        if name in (".text", ".data", ".bss", ".rodata"):
            self.switch(name)
        elif name == ".section":
            sec = args.split(",")[0].strip()
            if not sec:
                self.error(arg_col, ".section needs a name")
            else:
                self.switch(sec)
        elif name in (".globl", ".global"):
            for sym, off in _split_top(args):
                if sym.strip():
                    self.globals.add(sym.strip())
                    self.globl_at.setdefault(sym.strip(), (self.line_no, arg_col + off + len(sym) - len(sym.lstrip())))
        elif name in (".align", ".p2align", ".balign"):
            self.align(name, args, arg_col)
        elif name in _DATA_SIZES or name in (".float", ".double"):
            self.data(name, args, arg_col)
        elif name in (".zero", ".space", ".skip"):
            self.space(name, args, arg_col)
        elif name in (".equ", ".set"):
            self.equ(args, arg_col)
        else:
            self.error(col, f"directive '{name}' is declared by the ISA but not supported by the assembler")

    def data_hint(self, name: str) -> str:
        """For a data directive the dialect lacks: its equivalent (same size, or another name for
        reserving space), else the data directives the dialect has."""
        order = self.a.directive_order
        if name in _SPACE:
            same = [d for d in order if d in _SPACE]
        else:
            same = [d for d in order if name in _DATA_SIZES and _DATA_SIZES.get(d) == _DATA_SIZES[name]]
        if same:
            return f"; did you mean '{same[0]}'?"
        data = [d for d in order if d in _DATA_LIKE]
        return f"; this dialect's data directives are {', '.join(data)}" if data else \
            "; this dialect has no data directives"

    def switch(self, name: str) -> None:
        self.section = name
        self.sizes.setdefault(name, 0)
        self.aligns.setdefault(name, 1)
        self.bufs.setdefault(name, bytearray())
        self.laned.setdefault(name, [])

    def constant(self, text: str, col: int, what: str) -> Optional[int]:
        """A value needed in pass 1 (sizes, alignments): numbers and already-defined .equ symbols."""
        try:
            node = parse_expr(text)
        except ExprError as exc:
            self.error(col + exc.column, str(exc))
            return None
        try:
            return eval_expr(node, self.pass1_symbol, _no_local, self.sizes[self.section], _no_reloc)
        except _Unknown as exc:
            self.error(col + exc.column, f"{what} must be a constant known here; '{exc.name}' is not")
        except ExprError as exc:
            self.error(col + exc.column, str(exc))
        return None

    def pass1_symbol(self, name: str, col: int) -> int:
        s = self.symbols.get(name)
        if s is not None and s.section is None and isinstance(s.value, int):
            self.symbol_uses += 1
            return s.value
        raise _Unknown(name, col)

    def align(self, name: str, args: str, col: int) -> None:
        n = self.constant(args.split(",")[0], col, "an alignment")
        if n is None:
            return
        amount = n if name == ".balign" else 1 << n if 0 <= n < 32 else -1
        if amount <= 0 or amount & (amount - 1):
            self.error(col, f"{name} {n}: alignment must be a power of two" if name == ".balign"
                       else f"{name} {n}: the power of two must be between 0 and 31")
            return
        if not self.pad(self.section, amount, col, what=f"{name} {n}"):
            return
        if amount > self.aligns[self.section]:
            self.aligns[self.section] = amount
            self.align_at[self.section] = (self.line_no, col)

    def pad(self, section: str, amount: int, col: int, line: Optional[int] = None, what: str = "") -> bool:
        """Pad `section` to a multiple of `amount`; False (reported) when the image has no room for it."""
        pad = -self.sizes[section] % amount
        if pad:
            if not self.room(section, pad, col, what, line):
                return False
            nop = self.a.nop_bytes() if section == ".text" else b""
            # Code is padded with the ISA's `nop` (as GNU as does) where it fits; anything else with zeros.
            fill = nop if nop and pad % len(nop) == 0 else b"\0"
            line = line or self.line_no
            text = self.lines[line - 1].strip() if 0 < line <= len(self.lines) else ""
            self.items.append(_Item(section, self.sizes[section], pad, line, col, text, [], raw=fill))
            self.sizes[section] += pad
        return True

    def room(self, section: str, n: int, col: int, what: str, line: Optional[int] = None) -> bool:
        """Whether `section` may grow by n bytes: the whole image (every section, from the entry
        address) must fit in the memory the program is loaded into. Checked before anything of
        that size is built; reported once (what follows an overflow only follows from it)."""
        total = n
        for size in self.sizes.values():
            total += size
        if total <= self.a.room:
            return True
        if not self.overflowed:
            self.overflowed = True
            self.error(col, f"{what}: section {section} would grow to {self.sizes[section] + n} bytes and the "
                            f"program image to at least {total} bytes from {self.a.entry:#x}, more than "
                            f"{self.a.room_text}", line)
        return False

    def data(self, name: str, args: str, col: int) -> None:
        size = _DATA_SIZES.get(name, 4 if name == ".float" else 8)
        values = []
        for piece, off in _split_top(args):
            text = piece.strip()
            pcol = col + off + len(piece) - len(piece.lstrip())
            if not text:
                self.error(pcol, f"{name} needs a value")
                return
            if name in (".float", ".double"):
                try:
                    values.append((float(text), size, pcol))
                except ValueError:
                    self.error(pcol, f"{name} needs a floating-point number, got '{text}'")
                    return
                continue
            n = parse_number(text)
            if n is None:
                try:
                    n = parse_expr(text)
                except ExprError as exc:
                    self.error(pcol + exc.column, str(exc))
                    return
            values.append((n, size, pcol))
        if not self.room(self.section, size * len(values), col, name):
            return
        self.items.append(_Item(self.section, self.sizes[self.section], size * len(values), self.line_no, col,
                                self.line.strip(), [], data=values, float_data=name in (".float", ".double"),
                                seq=self.seq))
        self.sizes[self.section] += size * len(values)

    def space(self, name: str, args: str, col: int) -> None:
        pieces = _split_top(args)
        n = self.constant(pieces[0][0], col, "a size")
        fill = self.constant(pieces[1][0], col + pieces[1][1], "a fill value") if len(pieces) > 1 else 0
        if n is None or fill is None:
            return
        if n < 0:
            self.error(col, f"negative size {n}")
            return
        if not n or not self.room(self.section, n, col, f"{name} {n}"):
            return
        self.items.append(_Item(self.section, self.sizes[self.section], n, self.line_no, col, self.line.strip(), [],
                                raw=bytes([fill & 0xFF])))
        self.sizes[self.section] += n

    def equ(self, args: str, col: int) -> None:
        pieces = _split_top(args)
        if len(pieces) != 2 or not pieces[0][0].strip():
            self.error(col, "expected NAME, VALUE")
            return
        name = pieces[0][0].strip()
        vcol = col + pieces[1][1] + len(pieces[1][0]) - len(pieces[1][0].lstrip())
        try:
            node = parse_expr(pieces[1][0])
        except ExprError as exc:
            self.error(vcol + exc.column, str(exc))
            return
        before = self.symbols.get(name)
        if before is not None and before.section is not None:
            self.error(col, f"'{name}' is already a label (line {before.line})")
            return
        try:
            value = eval_expr(node, self.pass1_symbol, _no_local, self.sizes[self.section], _no_reloc)
        except (_Unknown, ExprError):
            value = node  # resolved in pass 2
        self.symbols[name] = _Symbol(None, value, self.line_no, col)
        if before is not None:  # a redefinition: earlier uses keep the value then in force (GNU as)
            self.history.setdefault(name, [before]).append(self.symbols[name])

    # ---- pass 2 --------------------------------------------------------------------------------------------
    def pass2(self) -> Program:
        bases = {}
        addr = self.a.entry
        for name in self.sizes:  # sections in order of first use, text first
            align = max(self.aligns.get(name, 1), 16 if name != ".text" else 1)
            addr += -addr % align
            bases[name] = addr
            addr += self.sizes[name]
        self.bases = bases
        if not self.overflowed:
            for name, size in self.sizes.items():
                if size:
                    self.check_placement(name, bases[name], size)
        sections = {}
        for name, size in self.sizes.items():
            buf = self.bufs[name]
            buf.extend(bytes(size - len(buf)))
            sections[name] = Section(name, bases[name], buf)
        self.resolved: dict[str, int] = {}
        symbols = {}
        for name, s in self.symbols.items():
            v = self.symbol_value(name, s.col, s.line)
            if v is not None:
                symbols[name] = v
        for name in self.globals:
            if name not in self.symbols:
                line, gcol = self.globl_at.get(name, (1, 0))
                self.error(gcol, f".globl names undefined symbol '{name}'{did_you_mean(name, self.symbols)}", line)
        placed = []
        order = "little" if self.a.endian == "little" else "big"
        self.reloc_sites = {bases[i.section] + i.offset: i for i in self.reloc_items}
        warn_fns = self.a.warn_fns
        for item in self.items:
            address = bases[item.section] + item.offset
            sec = sections[item.section]
            if item.raw is not None:
                sec.data[item.offset:item.offset + item.size] = item.raw * (item.size // len(item.raw))
                continue
            if item.data is not None:
                self.emit_data(item, address, sec, order)
                continue
            if item.bundle is None:
                op = item.ops[0]
                word = op.word
                if word is None or op.enc.name in warn_fns:
                    self.line_no = item.line
                    word = self.encode(op, address, item)
                    if word is None:
                        continue
                sec.data[item.offset:item.offset + item.size] = word.to_bytes(item.size, order)
            else:
                self.line_no = item.line
                word = item.bundle.fixed_match
                used = {op.enc.slot for op in item.ops}
                ok = True
                for op in item.ops:
                    w = self.encode(op, address, item)
                    if w is None:
                        ok = False
                        continue
                    word = item.bundle.fields[op.enc.slot].insert(word, w)
                for slot in item.bundle.fields:
                    if slot not in used and self.a.nops.get(slot) is not None:
                        word = item.bundle.fields[slot].insert(word, self.a.nops[slot])
                if not ok:
                    continue
                sec.data[item.offset:item.offset + item.size] = word.to_bytes(item.size, order)
            placed.append((address, item.size, item.ops, item.line, item.text))
        a, lines, laned = self.a, self.lines, self.laned
        return Program(self.path, sections, symbols, self.globals, lambda: _records(a, lines, bases, placed, laned),
                       bases[".text"], self.a.endian)

    def check_placement(self, name: str, base: int, size: int) -> None:
        """A section must lie inside one memory that program sections are loaded into (the
        loader's rule, kcgen.sim.simulator): report the line whose bytes first fall outside it."""
        a = self.a
        home = next((m for m in a.memories if m[1] <= base < m[1] + m[2]), None)
        if home is not None:
            mname, mbase, msize = home
            if base + size <= mbase + msize:
                return
            line, col = self.locate(name, mbase + msize - base)
            self.error(col, f"section {name} ({size} bytes at {base:#x}..{base + size - 1:#x}) runs past the end "
                            f"of memory {mname} ({msize} bytes at {mbase:#x}..{mbase + msize - 1:#x})", line)
            return
        if not a.memories or (name == ".text" and not any(m[1] <= a.entry < m[1] + m[2] for m in a.memories)):
            if base + size - a.entry <= a.room:  # an instruction store (or an ISA without memories)
                return
            line, col = self.locate(name, a.room - (base - a.entry))
            self.error(col, f"section {name} is {size} bytes, more than {a.room_text}", line)
            return
        line, col = self.locate(name, 0)
        where = ", ".join(f"{m[0]} at {m[1]:#x}..{m[1] + m[2] - 1:#x}" for m in a.memories)
        self.error(col, f"section {name} ({size} bytes) would be placed at {base:#x}, outside every memory that "
                        f"holds program sections ({where})", line)

    def locate(self, section: str, cap: int) -> tuple[int, int]:
        """(line, column) of the first statement of `section` whose bytes reach past offset `cap`."""
        recs = [(i.offset, i.offset + i.size, i.line, i.col) for i in self.items if i.section == section and i.size]
        flat = self.laned.get(section, [])
        for k in range(0, len(flat), 2):
            raw = self.lines[flat[k] - 1]
            recs.append((flat[k + 1], None, flat[k], len(raw) - len(raw.lstrip())))
        recs.sort(key=lambda r: r[0])
        for k, (offset, end, line, col) in enumerate(recs):
            if end is None:  # a laned line: it ends where the next statement starts
                end = recs[k + 1][0] if k + 1 < len(recs) else self.sizes[section]
            if end > cap:
                return line, col
        return (recs[-1][2], recs[-1][3]) if recs else (1, 0)

    def in_force(self, name: str, line: int) -> Optional[_Symbol]:
        """The definition of `name` that a use on `line` sees: the last one before that line, or
        the first one for a use before any (a forward reference)."""
        versions = self.history.get(name)
        if versions is None:
            return self.symbols.get(name)
        earlier = [s for s in versions if s.line < line]
        return earlier[-1] if earlier else versions[0]

    def symbol_value(self, name: str, col: int, line: Optional[int] = None, stack=(),
                     s: Optional[_Symbol] = None) -> Optional[int]:
        """The value of a definition of `name` (default: the latest, for the symbol table)."""
        latest = self.symbols.get(name)
        s = s or latest
        if s is None:
            return None
        key = name if s is latest else (name, s.line)
        if key in self.resolved:
            return self.resolved[key]
        if s.section is not None:
            v = self.bases[s.section] + s.value
        elif isinstance(s.value, int):
            v = s.value
        else:
            if key in stack:
                self.error(s.col, f"symbol '{name}' is defined in terms of itself", s.line)
                return None
            try:
                v = eval_expr(s.value, lambda n, c: self.lookup(n, c, s.line, stack + (key,)), _no_local, 0, _no_reloc)
            except (_Undefined, ExprError) as exc:
                if isinstance(exc, ExprError):
                    self.error(s.col, str(exc), s.line)
                return None
        self.resolved[key] = v
        return v

    def lookup(self, name: str, col: int, line: int, stack=()) -> int:
        s = self.in_force(name, line)
        v = self.symbol_value(name, col, line, stack, s) if s is not None else None
        if v is None:
            if name not in self.symbols:
                hint = did_you_mean(name, self.symbols)
                self.error(col, f"undefined symbol '{name}'{hint}", line)
            raise _Undefined(name)
        return v

    def local(self, n: int, direction: str, seq: int, col: int, line: int) -> int:
        defs = self.locals.get(n, [])
        if direction == "b":
            cands = [d for d in defs if d[0] <= seq]
            hit = cands[-1] if cands else None
        else:
            hit = next((d for d in defs if d[0] > seq), None)
        if hit is None:
            self.error(col, f"local label {n}{direction} has no {'earlier' if direction == 'b' else 'later'} "
                            f"'{n}:' definition", line)
            raise _Undefined(f"{n}{direction}")
        return self.bases[hit[1]] + hit[2]

    def value(self, v, item: _Item, col: int, address: int, exact: bool = True) -> Optional[int]:
        """Evaluate an operand in pass 2. `exact`: columns inside the expression are the reader's
        (not so for text a pseudo-instruction expanded to: its errors point at the operand)."""
        if isinstance(v, int):
            return v
        if v[0] == "pcoff":  # a numeric pc-relative offset: its target
            return address + (item.size if self.a.pcrel_next else 0) + v[1]
        at = (lambda c: col + c) if exact else (lambda c: col)
        try:
            return eval_expr(v, lambda n, c: self.lookup(n, at(c), item.line),
                             lambda n, d, c: self.local(n, d, item.seq, at(c), item.line), address,
                             lambda r, x, c: self.reloc(r, x, address, item, at(c), exact))
        except _Undefined:
            return None
        except ExprError as exc:
            self.error(col + exc.column, str(exc), item.line)
            return None

    def reloc(self, name: str, inner: Node, address: int, item: _Item, col: int, exact: bool = True) -> int:
        r = self.a.relocs.get(name)
        if r is None:
            self.error(col, f"unknown relocation operator %{name}{did_you_mean(name, self.a.relocs)}", item.line)
            raise _Undefined(name)
        pc = address
        if r.paired:
            # %pcrel_lo(label): the label marks the instruction carrying %pcrel_hi(sym); use its sym and pc.
            target = self.value(inner, item, col, address, exact)
            if target is None:
                raise _Undefined(name)
            site = self.reloc_sites.get(target)
            node = _find_reloc(site, r.paired) if site else None
            if node is None:
                self.error(col, f"%{name} must name a label on an instruction that uses %{r.paired}", item.line)
                raise _Undefined(name)
            x = self.value(node, site, col, target)
            pc = target
        else:
            x = self.value(inner, item, col, address, exact)
        if x is None:
            raise _Undefined(name)
        try:
            return self.a.reloc_fns[name]({r.arg: x, "pc": pc})
        except (EvalError, KeyError) as exc:
            self.error(col, f"%{name}: {exc}", item.line)
            raise _Undefined(name) from None

    def encode(self, op: _Op, address: int, item: _Item) -> Optional[int]:
        if op.word is not None:
            if op.enc.name in self.a.warn_fns:
                self.check_warnings(op, op.final, item)
            return op.word
        values = op.values
        if not all(v.__class__ is int for v in values.values()):
            values = self.resolved_values(values, address, item)
            if values is None:
                return self.encode_slow(op, address, item)
        done = self.a.encoders[op.enc.name](values, address, item.size)  # numbers in range: generated code
        if done is None:
            return self.encode_slow(op, address, item)
        word, op.final = done
        if op.enc.name in self.a.warn_fns:
            self.check_warnings(op, op.final, item)
        return word

    def resolved_values(self, values: dict, address: int, item: _Item) -> Optional[dict]:
        """Operands with plain symbols and pc-relative numbers resolved, or None when anything
        needs the careful path (undefined symbols, local labels, relocations: it reports them)."""
        out = {}
        for k, v in values.items():
            if v.__class__ is int:
                out[k] = v
            elif v[0] == "pcoff":
                out[k] = address + (item.size if self.a.pcrel_next else 0) + v[1]
            elif v[0] == "sym":
                n = self.resolved.get(v[1]) if v[1] not in self.history else None
                if n is None:
                    return None
                out[k] = n
            else:
                return None
        return out

    def columns(self, op: _Op, item: _Item) -> dict:
        """Operand columns for a message: recomputed from the statement text only when needed."""
        if op.cols is None:
            op.cols = {}
            if op.src is not None and op.src[2] is not None:
                stmt, col, form = op.src
                parts = stmt.split(None, 1)
                text = parts[1] if len(parts) > 1 else ""
                op_col = col + (stmt.index(text, len(parts[0])) if text else len(stmt))
                result = self.match(form, _split_top(text) if text.strip() else [], op_col)
                if not isinstance(result, _Fail):
                    op.cols = result[1]
        return op.cols

    def encode_slow(self, op: _Op, address: int, item: _Item) -> Optional[int]:
        enc = op.enc
        word = enc.insn.match
        final = {}
        ok = True
        for b in enc.bindings:
            o = b.operand
            col = self.columns(op, item).get(o.name, item.col)
            v = self.value(op.values.get(o.name), item, col, address, exact=op.src is not None or op.cols is None)
            if v is None:
                ok = False
                continue
            shown = v
            if o.kind == "pcrel":
                base = address + (item.size if self.a.pcrel_next else 0)
                target = v
                v = target - base
                final[o.name] = target
            else:
                final[o.name] = v
            lo, hi = operand_range(o)
            if o.kind == "reg":
                v -= o.offset
            elif not lo <= v <= hi:
                what = "branch offset" if o.kind == "pcrel" else "immediate"
                detail = f" (target {shown:#x})" if o.kind == "pcrel" else ""
                self.error(col, f"{what} {v}{detail} is out of range for {o.name}: "
                                f"{'i' if o.signed else 'u'}{o.width} takes {lo}..{hi}", item.line)
                ok = False
                continue
            if b.field.shift and v & ((1 << b.field.shift) - 1):
                what = "branch target" if o.kind == "pcrel" else "immediate"
                self.error(col, f"misaligned {what}: {o.name} = {v} is not a multiple of {1 << b.field.shift}", item.line)
                ok = False
                continue
            word = b.field.insert(word, v & ((1 << b.field.value_width) - 1))
        op.final = final
        if ok:
            self.check_warnings(op, final, item)
        return word if ok else None

    def check_warnings(self, op: _Op, final: dict, item: _Item) -> None:
        for fn, message in self.a.warn_fns.get(op.enc.name, ()):
            try:
                hit = fn(final)
            except (EvalError, KeyError):
                continue
            if hit:
                self.warn(item.col, f"{op.enc.insn.template.mnemonic}: {message}", item.line)

    def emit_data(self, item: _Item, address: int, sec: Section, order: str) -> None:
        pos = item.offset
        for v, size, col in item.data:
            if item.float_data:
                try:
                    raw = struct.pack(("<" if order == "little" else ">") + ("f" if size == 4 else "d"), v)
                except OverflowError:
                    self.error(col, f"{v} is too large for a {'single' if size == 4 else 'double'}-precision float",
                               item.line)
                    pos += size
                    continue
                sec.data[pos:pos + size] = raw
                pos += size
                continue
            n = self.value(v, item, col, address + (pos - item.offset))
            if n is None:
                pos += size
                continue
            if not -(1 << (8 * size - 1)) <= n < (1 << (8 * size)):
                self.error(col, f"value {n} does not fit in {size} byte{'s' if size > 1 else ''}", item.line)
            sec.data[pos:pos + size] = (n & ((1 << (8 * size)) - 1)).to_bytes(size, order)
            pos += size


def _byte_memories(spec: Spec) -> list[tuple[str, int, int]]:
    """(name, base, size) of every memory program sections may be loaded into: byte-addressed
    (u8 elements) with a declared base, as the simulator's loader takes them; lowest base first."""
    out = []
    for m in spec.isa.memories:
        t = spec.types.get(m.name)
        if m.base is not None and isinstance(t, IntT) and t.width == 8 and not t.signed:
            out.append((m.name, spec.params_eval(m.base), spec.params_eval(m.size)))
    return sorted(out, key=lambda m: m[1])


def _image_room(memories: list, entry: int, pc_bits: int) -> tuple[int, str]:
    """The most bytes a program image may have (sections are placed one after another from the
    entry address), and how to say where they must fit. With a memory at the entry address: up to
    the end of it and of the memories that directly follow it (each section must then fit in one
    of them, checked once the sections are placed). Without one, the text goes to an instruction
    store the ISA does not size: the pc's address space bounds it, and MAX_IMAGE."""
    home = next((m for m in memories if m[1] <= entry < m[1] + m[2]), None)
    if home is None:
        space = max((1 << pc_bits) - entry, 0)
        if space <= MAX_IMAGE:
            return space, f"the {space} bytes the {pc_bits}-bit pc can address from there"
        return MAX_IMAGE, (f"the assembler's limit of {MAX_IMAGE} bytes for a program that no memory holds "
                           f"(an instruction store)")
    run, end = [home], home[1] + home[2]
    for m in memories:
        if m[1] == end:
            run.append(m)
            end += m[2]
    names = " and ".join(m[0] for m in run)
    return end - entry, (f"the {end - entry} bytes of memor{'ies' if len(run) > 1 else 'y'} {names} from there "
                         f"({entry:#x}..{end - 1:#x})")


def _records(asm: Assembler, lines: list[str], bases: dict, general: list, laned: dict) -> list:
    """Program.records: the instructions the generic path placed and those of laned lines (read
    again by the value lanes), in source order."""
    out = [(address, size, tuple((op.enc.name, op.final) for op in ops), line, text)
           for address, size, ops, line, text in general]
    if not any(laned.values()):
        return out
    lanes, fold = asm.value_lanes, asm.insensitive
    for section, flat in laned.items():
        base = bases[section]
        for i in range(0, len(flat), 2):
            no, address = flat[i], base + flat[i + 1]
            text = lines[no - 1].strip()
            parts = text.split(None, 1)
            got = lanes[parts[0].lower() if fold else parts[0]](parts[1] if len(parts) > 1 else "")
            if got is None:  # pragma: no cover - the lanes of one mnemonic disagree
                raise AssertionError(f"line {no}: the value lane refuses what the byte lane took")
            for name, final, size in got:
                out.append((address, size, ((name, final),), no, text))
                address += size
    out.sort(key=lambda r: r[3])  # stable, and a line is either laned or not: source order
    return out


def _plan(b) -> tuple:
    """One operand's encoding step, flattened for Assembler.encode's fast path."""
    o, f = b.operand, b.field
    kind = {"reg": 0, "imm": 1, "pcrel": 2, "enum": 3}[o.kind]
    lo, hi = operand_range(o)
    if o.kind == "reg":
        lo, hi = 0, o.count - 1  # after subtracting the class offset
    return (o.name, kind, lo, hi, o.offset, (1 << f.shift) - 1, (1 << f.value_width) - 1, f.pieces)


class _Unknown(Exception):
    def __init__(self, name: str, column: int):
        super().__init__(name)
        self.name = name
        self.column = column


class _Undefined(Exception):
    pass


def _no_local(n, d, c):
    raise _Unknown(f"{n}{d}", c)


def _no_reloc(r, x, c):
    raise _Unknown(f"%{r}", c)


def _relocs_in(node: Node) -> list[str]:
    kind = node[0]
    if kind == "reloc":
        return [node[1]] + _relocs_in(node[2])
    if kind in ("neg", "not"):
        return _relocs_in(node[1])
    if kind == "bin":
        return _relocs_in(node[2]) + _relocs_in(node[3])
    return []


def _find_reloc(item: _Item, name: str) -> Optional[Node]:
    def walk(node):
        if not isinstance(node, tuple):
            return None
        if node[0] == "reloc":
            return node[2] if node[1] == name else walk(node[2])
        if node[0] in ("neg", "not"):
            return walk(node[1])
        if node[0] == "bin":
            return walk(node[2]) or walk(node[3])
        return None
    for op in item.ops:
        for v in op.values.values():
            hit = walk(v)
            if hit is not None:
                return hit
    return None


def _expansion_columns(line: str, op: _Op, pseudo_cols: dict, default: int) -> dict:
    """Columns for an op expanded from `line` (e.g. "lui {rd}, %hi({imm})"): each operand group
    of the op gets the column of the first pseudo operand written in that group."""
    form = op.src[2] if op.src else None
    parts = line.strip().split(None, 1)
    if form is None or len(parts) < 2:
        return {}
    out = {}
    for (group_text, _), group in zip(_split_top(parts[1]), form.groups):
        ref = _PLACEHOLDER.search(group_text)
        where = pseudo_cols.get(ref.group(1), default) if ref else default
        for operand in group.operands:
            out[operand.name] = where
    return out


def _in_string(raw: str, i: int) -> bool:
    return raw.count('"', 0, i) % 2 == 1

