"""Static bounds on the work of one instruction: how many loop iterations its semantics may run.

The language bounds every loop statically (isadl.semantics: `for i in 0..min(n, LIMIT)`), so each
instruction does a bounded amount of work. This module computes an upper estimate of it (every
branch taken, every `min` at its static side, every run-time value at the largest value of its
type), in loop iterations. The simulator generator uses it for the wall-clock limit
(kcgen.sim.cgen): how many instructions the run loop executes between two reads of the clock,
and which loops of a long instruction read it themselves.
"""
from __future__ import annotations

from typing import Callable, Optional

from isadl import ir
from isadl.types import IntLitT, IntT

HUGE = 1 << 64  # no useful bound


def _type_max(t) -> int:
    if isinstance(t, IntT):
        return (1 << (t.width - 1)) - 1 if t.signed else (1 << t.width) - 1
    if isinstance(t, IntLitT):
        return (1 << 63) - 1
    return HUGE


class Work:
    """Bounds over one typed body (kcgen.sim.typed.TypedBody) of a checked spec. `fn_work(name)`
    is the work of one call of the semantics function `name` (0 for builtins)."""

    def __init__(self, spec, body, fn_work: Callable[[str], int] = lambda name: 0):
        self.spec = spec
        self.body = body
        self.fn_work = fn_work
        self.env: dict[str, int] = {}  # loop variable in scope -> its largest value

    # ---- values ---------------------------------------------------------------------------------
    def upper(self, e: ir.Expr) -> int:
        """An upper bound of the value of the integer expression e."""
        got = self._upper(e)
        if got is None:
            try:
                got = _type_max(self.body.type(e))
            except KeyError:
                got = HUGE
        return max(min(got, HUGE), 0)

    def _const(self, e: ir.Expr) -> Optional[int]:
        if isinstance(e, ir.Num):
            return e.value
        if isinstance(e, ir.Name) and e.id in self.spec.params and e.id not in self.env and \
                e.id not in self.body.operands:
            return self.spec.params[e.id]
        return None

    def _upper(self, e: ir.Expr) -> Optional[int]:
        c = self._const(e)
        if c is not None:
            return c
        if isinstance(e, ir.Name):
            return self.env.get(e.id)
        if isinstance(e, ir.Call) and e.func in ("min", "max") and e.args:
            ups = [self.upper(a) for a in e.args]
            return min(ups) if e.func == "min" else max(ups)
        if isinstance(e, ir.Cond):
            return max(self.upper(e.then), self.upper(e.orelse))
        if isinstance(e, ir.Binary):
            if e.op == "+":
                return self.upper(e.left) + self.upper(e.right)
            if e.op == "*":
                return self.upper(e.left) * self.upper(e.right)
            if e.op == "<<":
                shift = self.upper(e.right)
                return self.upper(e.left) << shift if shift < 64 else None
            if e.op in ("-", "/", ">>"):
                return self.upper(e.left)
            if e.op == "&":
                return min(self.upper(e.left), self.upper(e.right))
            if e.op == "%":
                return self.upper(e.right)
        if isinstance(e, ir.Slice):
            lo, hi = self._const(e.lo), self._const(e.hi)
            if lo is not None and hi is not None and 0 <= hi - lo < 64:
                return (1 << (hi - lo + 1)) - 1
        return None

    def trips(self, lo: ir.Expr, hi: ir.Expr) -> int:
        """The most iterations of a loop over lo..hi (a start that is not a constant counts as 0)."""
        start = self._const(lo)
        return max(0, self.upper(hi) - max(start or 0, 0))

    def bind(self, var: str, hi: ir.Expr) -> Optional[int]:
        """Put a loop variable in scope (its largest value); returns what to give `unbind`."""
        saved = self.env.get(var)
        self.env[var] = max(self.upper(hi) - 1, 0)
        return saved

    def unbind(self, var: str, saved: Optional[int]) -> None:
        if saved is None:
            self.env.pop(var, None)
        else:
            self.env[var] = saved

    # ---- work -----------------------------------------------------------------------------------
    def stmts(self, stmts) -> int:
        return sum(self.stmt(s) for s in stmts)

    def stmt(self, s) -> int:
        if isinstance(s, ir.For):
            return self.expr(s.lo) + self.expr(s.hi) + self.trips(s.lo, s.hi) * self.per_iteration(s)
        if isinstance(s, ir.If):
            return self.expr(s.cond) + max(self.stmts(s.then), self.stmts(s.orelse))
        if isinstance(s, ir.Let):
            return self.expr(s.value)
        if isinstance(s, ir.Assign):
            return self.expr(s.target) + self.expr(s.value)
        if isinstance(s, ir.CallStmt):
            return self.expr(s.call)
        if isinstance(s, ir.Require):
            return self.expr(s.cond)
        return 0

    def per_iteration(self, s: ir.For) -> int:
        """The work of one iteration of a `for` (at least 1)."""
        saved = self.bind(s.var, s.hi)
        try:
            return 1 + self.stmts(s.body)
        finally:
            self.unbind(s.var, saved)

    def reduce_iteration(self, e: ir.Reduce) -> int:
        saved = self.bind(e.var, e.hi)
        try:
            return 1 + self.expr(e.body)
        finally:
            self.unbind(e.var, saved)

    def expr(self, e) -> int:
        if isinstance(e, ir.Reduce):
            return self.expr(e.lo) + self.expr(e.hi) + self.trips(e.lo, e.hi) * self.reduce_iteration(e)
        if isinstance(e, ir.Call):
            return sum(self.expr(a) for a in e.args) + self.fn_work(e.func)
        if isinstance(e, ir.Cond):
            return self.expr(e.cond) + max(self.expr(e.then), self.expr(e.orelse))
        return sum(self.expr(k) for k in _kids(e))


def _kids(e) -> list:
    if isinstance(e, ir.Index):
        return [e.base, e.index]
    if isinstance(e, ir.Slice):
        return [e.base, e.hi, e.lo]
    if isinstance(e, ir.Unary):
        return [e.operand]
    if isinstance(e, ir.Binary):
        return [e.left, e.right]
    return []
