"""GNU as macro directives: `.macro`/`.endm`, `.rept`/`.irp`/`.irpc`/`.endr`, the `.if` family,
`.err`/`.error`/`.warning`, `.purgem`, `.exitm`.

They work on text, before any line is assembled, and in every dialect (they place no bytes). The
expander is a generator of the lines to assemble; it runs interleaved with pass 1, so `.if` sees
the `.set` symbols that the lines before it defined, as in GNU as.

Every line the expander hands out gets a *virtual line number*, in assembly order; `origin` maps
it back to the source line it was written on, a column map (for text that `\\arg` substitution
moved) and the expansion it came from, so that a message names the body line and, in notes, each
invocation (GNU as: `Info: macro invoked from here`).
"""
from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from typing import Iterator, Optional

from .expr import parse_number

# A cheap test for whether a file may use the macro layer at all: files that do not stay on the
# assembler's plain loop. False hits (a comment that mentions `.if`) only take the slower loop.
MAY_USE_MACROS = re.compile(r"\.(?:rept|irp|macro|if|else|end[rmi]|exitm|purgem|err|warning)", re.I).search

MAX_NESTING = 100  # open expansions (GNU as: "macros nested too deeply" past 100)
MAX_EXPANDED_LINES = 1 << 18  # lines produced by expansions, in all; past it the assembly stops
MAX_NOTES = 8  # expansion levels named in a message (the outermost is always among them)

_NAME = re.compile(r"[A-Za-z_.$][\w.$]*")
_LABELS = re.compile(r"\s*(?:(?:[A-Za-z_.$][\w.$]*|[0-9]+)\s*:(?!=)\s*)*")
_WORD = re.compile(r"\s*(\S+)")
_ESCAPE = re.compile(r"\\(\(\)|@|[A-Za-z_.$][\w.$]*)")
_WORD_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.$\\\"'")

_OPENERS_R = (".rept", ".irp", ".irpc")
_IFS = frozenset((".if", ".ifdef", ".ifndef", ".ifnotdef", ".ifeq", ".ifne", ".ifge", ".ifgt", ".ifle", ".iflt",
                  ".ifb", ".ifnb", ".ifc", ".ifnc", ".ifeqs", ".ifnes"))
CONTROL = frozenset((".rept", ".irp", ".irpc", ".endr", ".macro", ".endm", ".exitm", ".purgem", ".elseif",
                     ".else", ".endif", ".err", ".error", ".warning")) | _IFS


@dataclass(frozen=True)
class ColMap:
    """Columns of a substituted line back to the line as written: (start in the new text,
    start in the old text, copied literally) per piece; then the parent's map, if any."""
    pieces: tuple
    parent: Optional["ColMap"] = None

    def __call__(self, col: int) -> int:
        out = col
        for start, old, literal in self.pieces:
            if start > col:
                break
            out = old + (col - start) if literal else old
        return self.parent(out) if self.parent is not None else out


@dataclass
class Macro:
    name: str
    params: list  # [(name, default, required, vararg)]
    body: list  # [(text, src line, colmap)]
    line: int  # virtual line of the definition


@dataclass
class _Cond:
    line: int
    col: int
    active: bool
    taken: bool  # a branch of this .if was (or, when the parent is skipped, counts as) taken
    parent_active: bool
    depth: int  # frames open when it started (.exitm closes the ones of its macro)
    else_at: Optional[tuple] = None


@dataclass
class _Frame:
    """An input: the source file, or one expansion (its bodies one after another)."""
    bodies: Iterator
    ctx: Optional[tuple]  # (note text, virtual line, column) of the line that expanded it
    macro: bool = False
    body: list = field(default_factory=list)
    pos: int = 0

    def next(self):
        while self.pos >= len(self.body):
            body = next(self.bodies, None)
            if body is None:
                return None
            self.body, self.pos = body, 0
        entry = self.body[self.pos]
        self.pos += 1
        return entry

    def next_in_body(self):
        """The next line of the current body only (a body being collected ends with it)."""
        if self.pos >= len(self.body):
            return None
        entry = self.body[self.pos]
        self.pos += 1
        return entry


def split_args(text: str, col: int) -> list[tuple[str, int]]:
    """Arguments of a macro call or of .irp: separated by commas, or by blanks between two
    words (GNU as drops blanks next to operators and brackets: `m 1 + 2` is one argument);
    a "quoted" argument loses its quotes. (argument, column) pairs."""
    out, cur, start, depth, i, n = [], [], None, 0, 0, len(text)
    while i < n:
        ch = text[i]
        if ch == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            if start is None:
                start = i
            cur.append(text[i + 1:j])
            i = j + 1
            continue
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth <= 0:
            out.append(("".join(cur), col + (start if start is not None else i)))
            cur, start = [], None
            i += 1
            continue
        if ch.isspace():
            j = i
            while j < n and text[j].isspace():
                j += 1
            if cur and j < n and depth <= 0 and text[i - 1] in _WORD_CHARS and text[j] in _WORD_CHARS:
                out.append(("".join(cur), col + start))
                cur, start = [], None
            i = j
            continue
        if start is None:
            start = i
        cur.append(ch)
        i += 1
    if cur or out or start is not None:
        out.append(("".join(cur), col + (start if start is not None else n)))
    return out


def substitute(text: str, values: dict, counter: Optional[int]) -> tuple[str, Optional[tuple]]:
    """`\\name` -> its value (names not in `values` stay as written), `\\()` -> nothing, `\\@` ->
    the macro counter (in macros only: None leaves it). The new text and its column pieces."""
    if "\\" not in text:
        return text, None
    out, pieces, pos, new = [], [], 0, 0
    for m in _ESCAPE.finditer(text):
        token = m.group(1)
        if token == "()":
            value = ""
        elif token == "@":
            if counter is None:
                continue
            value = str(counter)
        elif token in values:
            value = values[token]
        else:
            continue
        lit = text[pos:m.start()]
        pieces.append((new, pos, True))
        out.append(lit)
        new += len(lit)
        pieces.append((new, m.start(), False))
        out.append(value)
        new += len(value)
        pos = m.end()
    if not pieces:
        return text, None
    pieces.append((new, pos, True))
    out.append(text[pos:])
    return "".join(out), tuple(pieces)


def _string(text: str) -> Optional[str]:
    """The contents of one "double-quoted" string (escapes as in C), or None."""
    t = text.strip()
    if len(t) < 2 or t[0] != '"' or t[-1] != '"':
        return None
    try:
        return t[1:-1].encode("latin-1", "backslashreplace").decode("unicode_escape")
    except UnicodeDecodeError:
        return t[1:-1]


class Expander:
    """The macro layer of one assembly (a kcgen.asm.assembler._Run): `lines()` yields the lines to
    assemble, numbered in assembly order."""

    def __init__(self, run):
        self.run = run
        self.origin: list = []  # per virtual line: (source line, ColMap or None, ctx)
        self.frames: list[_Frame] = []
        self.conds: list[_Cond] = []
        self.macros: dict[str, Macro] = {}
        self.counter = 0  # \@: macros expanded so far
        self.expanded = 0  # lines handed out by expansions
        self.stopped = False
        self.weight = 0  # lines the body last collected expands to (an estimate: see collect)

    # ---- where a virtual line came from ------------------------------------------------------------
    def where(self, vline: int, col: int) -> tuple[int, int, tuple]:
        """(source line, column, notes) of a column of a virtual line; notes: (line, col, text)
        of each expansion it is inside, innermost first."""
        if not 0 < vline <= len(self.origin):
            return vline, col, ()
        src, cmap, ctx = self.origin[vline - 1]
        if cmap is not None:
            col = cmap(col)
        chain = []
        while ctx is not None:
            what, at, acol = ctx
            asrc, amap, ctx = self.origin[at - 1]
            chain.append((asrc, amap(acol) if amap is not None else acol, what))
        if len(chain) > MAX_NOTES:
            between = len(chain) - MAX_NOTES
            last = chain[-1]
            chain = chain[:MAX_NOTES - 1] + [(last[0], last[1], f"{last[2]} (the outermost; {between} "
                                                                  f"expansion levels between are not shown)")]
        return src, col, tuple(chain)

    def source_line(self, vline: int) -> int:
        return self.origin[vline - 1][0] if 0 < vline <= len(self.origin) else vline

    # ---- the generator ------------------------------------------------------------------------------
    def lines(self, source: list[str]) -> Iterator[tuple[int, str]]:
        run = self.run
        vlines = run.lines
        origin = self.origin
        self.frames = [_Frame(iter([[(text, (no, None, None)) for no, text in enumerate(source, 1)]]), None)]
        while self.frames and not self.stopped:
            frame = self.frames[-1]
            entry = frame.next()
            if entry is None:
                self.leave(frame)
                continue
            text, where = entry
            vlines.append(text)
            origin.append(where)
            vno = len(vlines)
            if where[2] is not None:
                self.expanded += 1
                if self.expanded > MAX_EXPANDED_LINES:
                    run.line_no, run.line = vno, text
                    self.fatal(0, f"expansions produced more than the assembler's limit of {MAX_EXPANDED_LINES} "
                                  f"expanded lines (a .rept count or a recursion too large?)")
                    break
            if "." not in text and not self.macros:
                if not self.conds or self.conds[-1].active:
                    yield vno, text
                continue
            word, wcol, head = self.control_word(text)
            active = not self.conds or self.conds[-1].active
            if word is None:
                if active:
                    yield vno, text
                continue
            if word in _IFS or word in (".elseif", ".else", ".endif"):
                if head.strip() and active:
                    yield vno, head  # labels before the directive
                run.line_no, run.line = vno, text
                self.conditional(word, text, wcol, vno)
                continue
            if not active:
                continue
            if head.strip():
                yield vno, head
            run.line_no, run.line = vno, text
            self.control(word, text, wcol, vno, frame)
        for c in self.conds if not self.stopped else ():
            run.error(c.col, "this .if is never closed with .endif", c.line)
        self.conds.clear()

    def control_word(self, text: str) -> tuple[Optional[str], int, str]:
        """The macro-layer directive (or macro name) a line starts with, after its labels: (word,
        column, the text before it), or (None, 0, "")."""
        body = self.run.strip_comment(text)
        m = _LABELS.match(body)
        w = _WORD.match(body, m.end())
        if w is None:
            return None, 0, ""
        word = w.group(1).lower()
        if word in CONTROL:
            return word, w.start(1), body[:w.start(1)]
        if self.macros:
            name = word.split(None, 1)[0]
            if name in self.macros and name not in self.run.a.directives:
                return name, w.start(1), body[:w.start(1)]
        return None, 0, ""

    def leave(self, frame: _Frame, exiting: bool = False) -> None:
        """Close an input; `exiting` (.exitm): the .ifs its lines opened close with it."""
        self.frames.pop()
        if frame.ctx is None:
            return  # the end of the file: .ifs still open are reported once, by lines()
        depth = len(self.frames)
        while self.conds and self.conds[-1].depth > depth:
            c = self.conds.pop()
            if exiting:
                continue
            where = "macro body" if frame.macro else "repeated body"
            self.run.error(c.col, f"this .if is not closed with .endif before the end of its {where}", c.line)

    def fatal(self, col: int, message: str) -> None:
        self.run.error(col, message)
        self.stopped = True

    # ---- conditionals -------------------------------------------------------------------------------
    def conditional(self, word: str, text: str, col: int, vno: int) -> None:
        run = self.run
        args, acol = self.arguments(text, col, word)
        if word in _IFS:
            parent = not self.conds or self.conds[-1].active
            hit = self.test(word, args, acol, col) if parent else False
            self.conds.append(_Cond(vno, col, bool(hit), bool(hit) or not parent, parent, len(self.frames)))
            return
        if not self.conds:
            run.error(col, f"{word} without .if")
            return
        c = self.conds[-1]
        if word == ".endif":
            self.conds.pop()
            return
        if c.else_at is not None:
            run.error(col, f"{word} after .else (line {self.source_line(c.else_at[0])}) of the same .if")
            return
        if word == ".else":
            c.else_at = (vno, col)
            c.active = not c.taken
            c.taken = True
            return
        hit = self.test(".if", args, acol, col) if not c.taken else False  # .elseif
        c.active = bool(hit)
        c.taken = c.taken or bool(hit)

    def test(self, word: str, args: str, acol: int, col: int) -> bool:
        run = self.run
        if word in (".ifdef", ".ifndef", ".ifnotdef"):
            name = args.strip()
            if not _NAME.fullmatch(name):
                run.error(acol, f"{word} needs a symbol name, got '{name}'" if name else f"{word} needs a symbol name")
                return False
            return (name in run.symbols) == (word == ".ifdef")
        if word in (".ifb", ".ifnb"):
            return (not args.strip()) == (word == ".ifb")
        if word in (".ifc", ".ifnc"):
            a, b = self.two_strings(args, acol, word, "'")
            return a is not None and (a == b) == (word == ".ifc")
        if word in (".ifeqs", ".ifnes"):
            a, b = self.two_strings(args, acol, word, '"')
            return a is not None and (a == b) == (word == ".ifeqs")
        if not args.strip():
            run.error(acol, f"{word} needs an expression")
            return False
        v = run.constant(args, acol, f"the condition of {word}")
        if v is None:
            return False
        return {".if": v != 0, ".ifne": v != 0, ".ifeq": v == 0, ".ifge": v >= 0, ".ifgt": v > 0,
                ".ifle": v <= 0, ".iflt": v < 0}[word]

    def two_strings(self, args: str, acol: int, word: str, quote: str) -> tuple:
        """The two strings of .ifc (may be 'quoted') or .ifeqs (must be "quoted")."""
        parts, i, n = [], 0, len(args)
        for _ in range(2):
            while i < n and args[i].isspace():
                i += 1
            if i < n and args[i] == quote:
                j = args.find(quote, i + 1)
                if j < 0:
                    self.run.error(acol + i, f"{word}: unterminated string")
                    return None, None
                parts.append(args[i + 1:j])
                i = j + 1
            elif quote == '"':
                self.run.error(acol + i, f'{word} needs two "quoted" strings separated by a comma')
                return None, None
            else:
                j = args.find(",", i) if not parts else n
                j = n if j < 0 else j
                parts.append(args[i:j].rstrip())
                i = j
            while i < n and args[i].isspace():
                i += 1
            if not parts[1:] and (i >= n or args[i] != ","):
                self.run.error(acol + i, f"{word} needs two strings separated by a comma")
                return None, None
            i += 1
        return parts[0], parts[1]

    # ---- the other directives -----------------------------------------------------------------------
    def arguments(self, text: str, col: int, word: str) -> tuple[str, int]:
        body = self.run.strip_comment(text)
        rest = body[col + len(word):]
        stripped = rest.lstrip()
        return stripped.rstrip(), col + len(word) + len(rest) - len(stripped)

    def control(self, word: str, text: str, col: int, vno: int, frame: _Frame) -> None:
        run = self.run
        args, acol = self.arguments(text, col, word)
        if word in self.macros and word not in CONTROL:
            self.invoke(self.macros[word], args, acol, col, vno)
        elif word == ".rept":
            body = self.collect(frame, _OPENERS_R, ".endr", col, ".rept")
            count = run.constant(args, acol, "a .rept count") if args else None
            if not args:
                run.error(acol, ".rept needs a count")
            if body is None or count is None:
                return
            if count < 0:
                run.error(acol, f".rept count {count} is negative")
                return
            ctx = ("in the .rept repeated here", vno, col)
            if body and count and self.room(count * self.weight, col, f".rept {count}"):
                self.push(itertools.repeat(self.rebased(body, ctx), count), ctx)
        elif word in (".irp", ".irpc"):
            body = self.collect(frame, _OPENERS_R, ".endr", col, word)
            m = _NAME.match(args)
            if body is None:
                return
            if m is None:
                run.error(acol, f"{word} needs a symbol name first: {word} NAME, VALUES")
                return
            sym, rest = m.group(0), args[m.end():]
            lead = len(rest) - len(rest.lstrip())
            rest = rest.lstrip()
            if rest.startswith(","):
                rest = rest[1:]
                lead += 1
            vcol = acol + m.end() + lead
            if word == ".irp":
                values = [v for v, _ in split_args(rest, vcol)] or [""]
            else:
                values = list("".join(v for v, _ in split_args(rest, vcol))) or [""]
            if body and self.room(len(values) * self.weight, col, word):
                ctx = (f"in the {word} repeated here", vno, col)
                self.push((self.instance(body, {sym: v}, None, ctx) for v in values), ctx)
        elif word == ".endr":
            run.error(col, ".endr without .rept, .irp or .irpc")
        elif word == ".macro":
            self.define(args, acol, col, vno, frame)
        elif word == ".endm":
            run.error(col, ".endm without .macro")
        elif word == ".exitm":
            while self.frames and len(self.frames) > 1:
                f = self.frames[-1]
                self.leave(f, exiting=True)
                if f.macro:
                    return
            run.error(col, ".exitm outside a macro")
        elif word == ".purgem":
            for name, ncol in split_args(args, acol):
                if self.macros.pop(name.lower(), None) is None:
                    run.error(ncol, f".purgem: no macro named '{name}'")
        elif word == ".err":
            run.error(col, ".err encountered")
        elif word in (".error", ".warning"):
            message = _string(args) if args else f"{word} directive invoked in source file"
            if message is None:
                run.error(acol, f'{word} takes a "quoted" message')
            elif word == ".error":
                run.error(col, message)
            else:
                run.warn(col, message)

    def room(self, lines: int, col: int, what: str) -> bool:
        if self.expanded + lines <= MAX_EXPANDED_LINES:
            return True
        so_far = f" ({self.expanded} expanded before it)" if self.expanded else ""
        self.fatal(col, f"{what} would expand to {lines} lines, past the assembler's limit of "
                        f"{MAX_EXPANDED_LINES} expanded lines{so_far}")
        return False

    def push(self, bodies, ctx: tuple, macro: bool = False) -> None:
        if len(self.frames) > MAX_NESTING:
            self.fatal(ctx[2], f"macros nested too deeply: more than {MAX_NESTING} expansions open "
                               f"(a macro that invokes itself without end?)")
            return
        self.frames.append(_Frame(bodies, ctx, macro))

    @staticmethod
    def rebased(body: list, ctx: tuple) -> list:
        return [(text, (src, cmap, ctx)) for text, (src, cmap, _) in body]

    @staticmethod
    def instance(body: list, values: dict, counter: Optional[int], ctx: tuple) -> list:
        out = []
        for text, (src, cmap, _) in body:
            new, pieces = substitute(text, values, counter)
            out.append((new, (src, ColMap(pieces, cmap) if pieces is not None else cmap, ctx)))
        return out

    def collect(self, frame: _Frame, openers, closer: str, col: int, what: str) -> Optional[list]:
        """The lines up to the matching `closer` (nested openers counted), taken from the input.
        `self.weight`: how many lines the body expands to, counting nested .rept/.irp/.irpc whose
        count is written as a number (so that nested repeats too large are refused at once)."""
        nest = [[1, 0]]  # per open repeat: its count, the lines of its body so far
        body = []
        while True:
            entry = frame.next_in_body()
            if entry is None:
                self.run.error(col, f"{what} is never closed with {closer}")
                return None
            head = self.bare_word(entry[0])
            if head == closer:
                count, lines = nest.pop()
                if not nest:
                    self.weight = lines
                    return body
                nest[-1][1] += count * lines
            else:
                nest[-1][1] += 1  # the line itself
                if head in openers:
                    nest.append([self.count_of(head, entry[0]), 0])
            body.append(entry)

    def count_of(self, word: str, text: str) -> int:
        """The repeat count of a nested .rept/.irp/.irpc line, when written plainly; else 1."""
        args = self.run.strip_comment(text).split(word, 1)[-1] if word in text else ""
        if word == ".rept":
            n = parse_number(args.strip())
            return n if n is not None and n > 0 else 1
        if word == ".irp":
            return max(len(split_args(args, 0)) - 1, 1)
        return 1

    def bare_word(self, text: str) -> Optional[str]:
        if "." not in text:
            return None
        body = self.run.strip_comment(text)
        w = _WORD.match(body, _LABELS.match(body).end())
        return w.group(1).lower() if w else None

    # ---- macros ---------------------------------------------------------------------------------------
    def define(self, args: str, acol: int, col: int, vno: int, frame: _Frame) -> None:
        run = self.run
        body = self.collect(frame, (".macro",), ".endm", col, ".macro")
        m = _NAME.match(args)
        if m is None:
            run.error(acol, ".macro needs a name: .macro NAME [PARAMETER[=DEFAULT][:req|:vararg], ...]")
            return
        name = m.group(0)
        rest = args[m.end():]
        pcol = acol + m.end() + len(rest) - len(rest.lstrip())
        rest = rest.lstrip()
        if rest.startswith(","):
            rest = rest[1:]
            pcol += 1
        params = []
        for text, pc in split_args(rest, pcol):
            p = re.fullmatch(r"([A-Za-z_.$][\w.$]*)\s*(?::\s*(req|vararg))?\s*(?:=(.*))?", text.strip(), re.S)
            if p is None:
                run.error(pc, f"malformed parameter '{text.strip()}' of macro '{name}': "
                              f"NAME, NAME=DEFAULT, NAME:req or NAME:vararg")
                return
            if any(q[0] == p.group(1) for q in params):
                run.error(pc, f"macro '{name}' has two parameters named '{p.group(1)}'")
                return
            if params and params[-1][3]:
                run.error(pc, f"the :vararg parameter '{params[-1][0]}' of macro '{name}' must be the last")
                return
            params.append((p.group(1), (p.group(3) or "").strip(), p.group(2) == "req", p.group(2) == "vararg"))
        if name.lower() in self.macros:
            run.error(acol, f"macro '{name}' is already defined (line {self.source_line(self.macros[name.lower()].line)})")
            return
        if body is not None:
            self.macros[name.lower()] = Macro(name, params, body, vno)

    def invoke(self, macro: Macro, args: str, acol: int, col: int, vno: int) -> None:
        run = self.run
        values: dict[str, str] = {p[0]: p[1] for p in macro.params}
        given: set[str] = set()
        names = [p[0] for p in macro.params]
        pieces = split_args(args, acol) if args else []
        position = 0
        ok = True
        for k, (text, pc) in enumerate(pieces):
            kw = re.match(r"\s*([A-Za-z_.$][\w.$]*)\s*=(?!=)", text)
            if kw is not None:
                if kw.group(1) not in names:
                    run.error(pc, f"macro '{macro.name}' has no parameter named '{kw.group(1)}'"
                                  f" (its parameters: {', '.join(names) or 'none'})")
                    ok = False
                    continue
                values[kw.group(1)] = text[kw.end():].strip()
                given.add(kw.group(1))
                continue
            if position >= len(names):
                run.error(pc, f"macro '{macro.name}' takes {len(names)} argument{'s' if len(names) != 1 else ''}, "
                              f"got more")
                ok = False
                break
            name, _, _, vararg = macro.params[position]
            if vararg:  # the rest of the line, as written
                values[name] = args[pc - acol:].strip()
                given.add(name)
                break
            if text.strip():
                values[name] = text
                given.add(name)
            position += 1
        for name, _, required, _ in macro.params:
            if required and name not in given:
                run.error(col, f"missing value for required parameter '{name}' of macro '{macro.name}'")
                ok = False
        if not ok:
            return
        ctx = (f"in macro '{macro.name}' invoked here", vno, col)
        counter = self.counter
        self.counter += 1
        if macro.body and self.room(len(macro.body), col, f"macro '{macro.name}'"):
            self.push(iter([self.instance(macro.body, values, counter, ctx)]), ctx, macro=True)
