"""Typed semantics: the checker's types, remembered per expression, for the code generators.

isadl's Checker decides the type of every expression while it checks; the generators need the
same answers (which width an addition wraps at, which float format a sum rounds to). Rather than
re-derive the rules, `Typer` runs the checker once more over checked semantics and records each
expression's type by node identity. Checked semantics cannot fail here; if they do, that is a bug
in isadl, reported as such.
"""
from __future__ import annotations

import dataclasses
from typing import Optional

from isadl import ir
from isadl.check import Spec
from isadl.semantics import Checker, Context, _Var
from isadl.types import FloatLitT, IntLitT, Type


class TypingBug(Exception):
    """Checked semantics failed to type: isadl and the generators disagree."""


def _internal(loc: ir.Loc, message: str) -> None:
    raise TypingBug(f"{loc}: {message} (semantics passed isadl's checks; this is a kcgen bug)")


class Typer(Checker):
    """A Checker that records `types[id(expr)]` for every expression it visits."""

    def __init__(self, ctx: Context, operands=None):
        super().__init__(dataclasses.replace(ctx, error=_internal), dict(operands or {}))
        self.types: dict[int, Type] = {}

    def expr(self, e: ir.Expr, statement: bool = False) -> Optional[Type]:
        t = super().expr(e, statement)
        self.types[id(e)] = t
        return t

    def lvalue(self, t: ir.Expr) -> Optional[Type]:
        tt = super().lvalue(t)
        self.types[id(t)] = tt
        return tt


@dataclasses.dataclass
class TypedBody:
    """One body of semantics with the type of each expression and of each local."""
    stmts: tuple
    types: dict[int, Type]
    operands: dict  # name -> OperandInfo

    def type(self, e: ir.Expr) -> Type:
        return self.types[id(e)]


def type_instruction(spec: Spec, name: str) -> TypedBody:
    s = spec.instructions[name]
    ops = spec.semantic_operands(s.operands)
    t = Typer(spec.context, ops)
    t.block(s.insn.semantics)
    for e in (s.insn.cycles, s.insn.latency):
        if e is not None:
            t.expr(e)
    return TypedBody(s.insn.semantics, t.types, ops)


def type_function(spec: Spec, fn: ir.Function) -> TypedBody:
    t = Typer(spec.context)
    for p in fn.params:
        t.scopes[-1][p.name] = _Var(spec.context.resolve_type(p.type), False, False, "parameter")
    t.expr(fn.body)
    return TypedBody((fn.body,), t.types, {})


def type_example(spec: Spec, ex: ir.Example) -> TypedBody:
    t = Typer(spec.context)
    t.block(ex.given)
    for e in ex.expect:
        t.expr(e)
    return TypedBody(ex.given, t.types, {})


def local_type(body: TypedBody, spec: Spec, s: ir.Let) -> Type:
    """The type of a `let`/`var`: as declared, else its value's."""
    if s.type is not None:
        return spec.context.resolve_type(s.type)
    t = body.type(s.value)
    if isinstance(t, (IntLitT, FloatLitT)):
        raise TypingBug(f"{s.loc}: untyped local '{s.name}' passed the checker")
    return t
