"""Expressions for readers: isadl.printer's syntax, with parentheses wherever operators of
different kinds mix with bitwise, shift or logical operators, and hex literals as bitwise operands.

``isadl.printer.expr`` prints the fewest parentheses the grammar needs, so the RISC-V
``((x + 0x800) >> 12) & 0xfffff`` comes back as ``x + 2048 >> 12 & 0xfffff``: correct, but easy
to misread (C and Python rank these operators differently). The output here is still valid isadl
and parses to the same IR.
"""
from __future__ import annotations

from isadl import ir
from isadl.printer import expr as canonical

_PREC = {"?": 1, "||": 2, "&&": 3, "==": 4, "!=": 4, "<": 4, "<=": 4, ">": 4, ">=": 4,
         "|": 5, "^": 6, "&": 7, "<<": 8, ">>": 8, "+": 9, "-": 9, "*": 10, "/": 10, "%": 10}
_UNARY, _POW, _POSTFIX = 11, 12, 13
_BITS = {"|", "^", "&", "<<", ">>"}
_LOGIC = {"&&", "||"}


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
    if isinstance(e, ir.Num):
        if hexlit and e.value >= 16:
            return hex(e.value)
        return canonical(e)
    if isinstance(e, (ir.FloatLit, ir.Name)):
        return canonical(e)
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
        if e.op == "-" and (inner.startswith("-") or isinstance(e.operand, ir.Num)):
            inner = f"({expr(e.operand)})"
        return f"{e.op}{inner}"
    if isinstance(e, ir.Binary):
        if e.op == "**":
            return f"{_wrap(e.left, _POSTFIX)} ** {_wrap(e.right, _UNARY)}"
        p = _PREC[e.op]
        right_need = p + 1
        return f"{_operand(e.left, e, p)} {e.op} {_operand(e.right, e, right_need)}"
    if isinstance(e, ir.Cond):
        return f"{_wrap(e.cond, 2)} ? {expr(e.then)} : {expr(e.orelse)}"
    return canonical(e)


def _operand(c: ir.Expr, parent: ir.Binary, need: int) -> str:
    if _PREC[parent.op] == 4:  # comparisons do not chain
        need = 5
    s = expr(c, hexlit=parent.op in ("&", "|", "^"))
    clarify = isinstance(c, ir.Binary) and c.op != parent.op and (
        c.op in _BITS or parent.op in _BITS or (c.op in _LOGIC and parent.op in _LOGIC))
    return f"({s})" if clarify or _prec(c) < need else s


def _wrap(e: ir.Expr, need: int) -> str:
    s = expr(e)
    return f"({s})" if _prec(e) < need else s
