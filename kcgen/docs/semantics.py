"""Semantics statements → readable, indented lines (the isadl statement syntax, one statement a line)."""
from __future__ import annotations

from isadl import ir
from isadl.printer import type_ref

from .pretty import expr

INDENT = "  "


def quote(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t") + '"'


def lines(stmts: tuple[ir.Stmt, ...], depth: int = 0) -> list[str]:
    out: list[str] = []
    for s in stmts:
        _stmt(out, s, depth)
    return out


def text(stmts: tuple[ir.Stmt, ...]) -> str:
    return "\n".join(lines(stmts))


def _stmt(out: list[str], s: ir.Stmt, depth: int) -> None:
    pad = INDENT * depth
    if isinstance(s, ir.Let):
        ann = f": {type_ref(s.type)}" if s.type else ""
        out.append(f"{pad}{'var' if s.mutable else 'let'} {s.name}{ann} = {expr(s.value)}")
    elif isinstance(s, ir.Assign):
        out.append(f"{pad}{expr(s.target)} = {expr(s.value)}")
    elif isinstance(s, ir.If):
        head = f"{pad}if {expr(s.cond)} {{"
        cur = s
        while True:
            out.append(head)
            for t in cur.then:
                _stmt(out, t, depth + 1)
            if len(cur.orelse) == 1 and isinstance(cur.orelse[0], ir.If):
                cur = cur.orelse[0]
                head = f"{pad}}} else if {expr(cur.cond)} {{"
                continue
            if cur.orelse:
                out.append(f"{pad}}} else {{")
                for t in cur.orelse:
                    _stmt(out, t, depth + 1)
            out.append(f"{pad}}}")
            break
    elif isinstance(s, ir.For):
        out.append(f"{pad}for {s.var} in {expr(s.lo)}..{expr(s.hi)} {{")
        for t in s.body:
            _stmt(out, t, depth + 1)
        out.append(f"{pad}}}")
    elif isinstance(s, ir.Require):
        out.append(f"{pad}require {expr(s.cond)} : {quote(s.message)}")
    elif isinstance(s, ir.Trap):
        out.append(f"{pad}trap {quote(s.message)}")
    elif isinstance(s, ir.Halt):
        out.append(f"{pad}halt")
    elif isinstance(s, ir.CallStmt):
        out.append(f"{pad}{expr(s.call)}")
    else:  # a statement kind added to the language later: show it rather than fail
        out.append(f"{pad}{type(s).__name__}")


def inline(stmts: tuple[ir.Stmt, ...]) -> str:
    """All statements on one line: ``x[11] = 5; for i in 0..4 { vsram[i] = 0.5 }``."""
    return "; ".join(_flat(s) for s in stmts)


def _flat(s: ir.Stmt) -> str:
    if isinstance(s, ir.If):
        out = f"if {expr(s.cond)} {{ {inline(s.then)} }}"
        if len(s.orelse) == 1 and isinstance(s.orelse[0], ir.If):
            return out + " else " + _flat(s.orelse[0])
        return out + (f" else {{ {inline(s.orelse)} }}" if s.orelse else "")
    if isinstance(s, ir.For):
        return f"for {s.var} in {expr(s.lo)}..{expr(s.hi)} {{ {inline(s.body)} }}"
    out: list[str] = []
    _stmt(out, s, 0)
    return out[0] if out else ""
