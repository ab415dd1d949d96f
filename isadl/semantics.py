"""Type checker for the semantics language (instruction bodies, functions, examples, timing).

It reports, with locations: unknown names, type errors, writes to things that cannot be written
(parameters, operands, `let` bindings, read-only state, hard-wired zero registers) and loops
whose trip count is not bounded by a static value.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional

from . import ir
from .diagnostics import did_you_mean
from .types import (BOOL, FLOATLIT, INT, VOID, FloatLitT, FloatT, IntLitT, IntT, Type, VecT,
                    is_float, is_int, is_numeric, is_scalar)

MATH_UNARY = ("exp", "log", "sqrt", "recip", "tanh", "erf")
REDUCTIONS = ("sum", "prod", "max", "min", "and", "or", "xor")


@dataclass
class RegInfo:
    type: Type
    count: int
    zero: frozenset[int]
    readonly: bool


@dataclass
class StorageInfo:  # state or memory
    dims: tuple[int, ...]
    type: Type
    readonly: bool
    memory: bool = False


@dataclass
class OperandInfo:
    type: Type
    regfile: str = ""  # register operands: the file they index
    static: bool = True  # operands are instruction-word constants


@dataclass
class Context:
    """Everything a semantics body can name, built once per ISA by isadl.check."""
    params: dict[str, int]
    regfiles: dict[str, RegInfo]
    storage: dict[str, StorageInfo]
    floats: dict[str, int]
    mxs: set[str]
    functions: dict[str, ir.Function]
    resolve_type: Callable[[ir.TypeRef], Optional[Type]]
    pc_type: Type = IntT(False, 32)
    error: Callable[[ir.Loc, str], None] = print
    broken: set[str] = field(default_factory=set)  # parameters whose definitions failed (already reported)


@dataclass
class _Var:
    type: Type
    mutable: bool
    static: bool  # a compile-time-bounded value (loop variable, static let)
    kind: str = "let"


@dataclass
class Checker:
    ctx: Context
    operands: dict[str, OperandInfo] = field(default_factory=dict)
    scopes: list[dict[str, _Var]] = field(default_factory=lambda: [{}])
    calling: tuple[str, ...] = ()

    # ---- helpers ---------------------------------------------------------------------------
    def err(self, node, message: str) -> None:
        self.ctx.error(getattr(node, "loc", ir.NOWHERE), message)

    def lookup_var(self, name: str) -> Optional[_Var]:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        return None

    def known_names(self):
        names = set(self.ctx.params) | set(self.ctx.regfiles) | set(self.ctx.storage) | set(self.operands)
        for s in self.scopes:
            names |= set(s)
        return names | {"pc", "true", "false", "inf", "nan"}

    # ---- statements ---------------------------------------------------------------------------
    def block(self, stmts) -> None:
        self.scopes.append({})
        for s in stmts:
            self.stmt(s)
        self.scopes.pop()

    def stmt(self, s: ir.Stmt) -> None:
        if isinstance(s, ir.Let):
            self.let(s)
        elif isinstance(s, ir.Assign):
            self.assign(s)
        elif isinstance(s, ir.If):
            self.condition(s.cond, "if")
            self.block(s.then)
            self.block(s.orelse)
        elif isinstance(s, ir.For):
            self.loop_bounds(s.lo, s.hi, s)
            self.scopes.append({s.var: _Var(INT, False, True, "loop variable")})
            self.block(s.body)
            self.scopes.pop()
        elif isinstance(s, ir.Require):
            self.condition(s.cond, "require")
            if not s.message.strip():
                self.err(s, "require needs a message saying what went wrong")
        elif isinstance(s, ir.Trap):
            if not s.message.strip():
                self.err(s, "trap needs a message")
        elif isinstance(s, ir.Halt):
            pass
        elif isinstance(s, ir.CallStmt):
            t = self.expr(s.call, statement=True)
            if t is not None and t != VOID:
                name = s.call.func if isinstance(s.call, ir.Call) else s.call.op  # a reduction as a statement
                self.err(s, f"the result of {name}() is unused")

    def let(self, s: ir.Let) -> None:
        vt = self.expr(s.value)
        declared = self.ctx.resolve_type(s.type) if s.type else None
        if s.type and declared is None:
            self.err(s.type, f"unknown type '{s.type.name}'")
            vt = None
        if declared is not None:
            if vt is not None:
                self.coerce(vt, declared, s.value, f"'{s.name}'")
            t = declared
        else:
            t = vt
            if isinstance(vt, (IntLitT, FloatLitT)):
                kind = "var" if s.mutable else "let"
                example = "u32" if isinstance(vt, IntLitT) else "f32"
                self.err(s, f"cannot infer the type of '{s.name}' from a literal; "
                            f"annotate it: {kind} {s.name}: {example} = ...")
                t = None
        if self.lookup_var(s.name) or s.name in self.operands or s.name in self.ctx.params:
            self.err(s, f"'{s.name}' is already defined")
        static = not s.mutable and self.is_static(s.value)
        self.scopes[-1][s.name] = _Var(t if t is not None else INT, s.mutable, static, "var" if s.mutable else "let")

    def condition(self, e: ir.Expr, what: str) -> None:
        t = self.expr(e)
        if t is not None and t != BOOL:
            self.err(e, f"{what} condition must be bool, got {t}")

    def loop_bounds(self, lo: ir.Expr, hi: ir.Expr, node) -> None:
        for b in (lo, hi):
            t = self.expr(b)
            if t is not None and not is_int(t):
                self.err(b, f"loop bound must be an integer, got {t}")
        if not self.is_bounded(hi):
            culprit = self.runtime_part(hi)
            text = _show(culprit) if culprit is not None else _show(hi)
            self.err(hi, f"unbounded loop: '{text}' is only known at run time; "
                         f"bound it with min({text}, LIMIT)")

    # ---- static-ness -------------------------------------------------------------------------
    def is_static(self, e: ir.Expr) -> bool:
        return self.runtime_part(e) is None

    def runtime_part(self, e: ir.Expr) -> Optional[ir.Expr]:
        """The first sub-expression whose value is only known at run time, or None."""
        if isinstance(e, (ir.Num, ir.FloatLit)):
            return None
        if isinstance(e, ir.Name):
            v = self.lookup_var(e.id)
            if v is not None:
                return None if v.static else e
            if e.id in self.ctx.params or e.id in self.ctx.broken or e.id in self.operands or \
                    e.id in ("true", "false"):
                return None
            return e
        if isinstance(e, ir.Call) and e.func in self.ctx.functions:
            return next((r for r in map(self.runtime_part, e.args) if r is not None), None)
        if isinstance(e, (ir.Index, ir.Reduce)) or (isinstance(e, ir.Call) and e.func == "load"):
            return e
        kids = e.args if isinstance(e, ir.Call) else _kids(e)
        return next((r for r in map(self.runtime_part, kids) if r is not None), None)

    def is_bounded(self, e: ir.Expr) -> bool:
        """Whether an upper bound of e is statically known (min() with one static side counts)."""
        if self.is_static(e):
            return True
        if isinstance(e, ir.Call) and e.func == "min":
            return any(self.is_bounded(a) for a in e.args)
        if isinstance(e, ir.Binary) and e.op in ("+", "*", "/", ">>", "&"):
            if e.op == "&":
                return self.is_bounded(e.left) or self.is_bounded(e.right)
            if e.op in ("/", ">>"):
                return self.is_bounded(e.left)
            return self.is_bounded(e.left) and self.is_bounded(e.right)
        if isinstance(e, ir.Cond):
            return self.is_bounded(e.then) and self.is_bounded(e.orelse)
        if isinstance(e, ir.Slice):
            return True  # a bit slice is at most 2**width - 1, and widths are constant
        return False

    # ---- assignment ----------------------------------------------------------------------------
    def assign(self, s: ir.Assign) -> None:
        target_t = self.lvalue(s.target)
        vt = self.expr(s.value)
        if target_t is not None and vt is not None:
            self.coerce(vt, target_t, s.value, f"'{_show(s.target)}'")

    def lvalue(self, t: ir.Expr) -> Optional[Type]:
        root = t
        path = []
        while isinstance(root, ir.Index):
            path.append(root)
            root = root.base
        if isinstance(root, ir.Slice):
            self.err(t, "cannot assign to a bit slice; compute the whole value")
            return None
        if not isinstance(root, ir.Name):
            self.err(t, f"cannot assign to '{_show(t)}'")
            return None
        name = root.id
        var = self.lookup_var(name)
        if var is not None:
            if not var.mutable:
                self.err(t, f"cannot assign to {var.kind} '{name}'" + ("; declare it with var" if var.kind == "let" else ""))
                return None
            return self.expr(t)
        if name in self.operands:
            self.err(t, f"cannot assign to operand '{name}'")
            return None
        if name in self.ctx.params:
            self.err(t, f"cannot assign to parameter '{name}'")
            return None
        if name == "pc":
            if path:
                self.err(t, "pc cannot be indexed")
                return None
            return self.ctx.pc_type
        if name in self.ctx.regfiles:
            reg = self.ctx.regfiles[name]
            if reg.readonly:
                self.err(t, f"cannot write read-only register file '{name}'")
                return None
            if path:
                idx = path[-1].index
                if isinstance(idx, ir.Num) and idx.value in reg.zero:
                    self.err(t, f"cannot write {name}[{idx.value}]: it is hard-wired to zero")
                    return None
        elif name in self.ctx.storage:
            st = self.ctx.storage[name]
            if st.readonly:
                self.err(t, f"cannot write read-only {'memory' if st.memory else 'state'} '{name}'")
                return None
        elif name in ("true", "false", "inf", "nan"):
            self.err(t, f"cannot assign to '{name}'")
            return None
        tt = self.expr(t)
        if isinstance(tt, VecT) and name in self.ctx.storage and not self.ctx.storage[name].memory:
            pass
        return tt

    def coerce(self, vt: Type, target: Type, node, what: str) -> bool:
        if vt == target:
            return True
        if isinstance(vt, IntLitT) and isinstance(target, IntT):
            if isinstance(node, ir.Num) and not (target.min <= node.value <= target.max):
                self.err(node, f"integer literal {node.value} does not fit in {target}")
                return False
            return True
        if isinstance(vt, IntLitT) and isinstance(target, IntLitT):
            return True
        if isinstance(vt, FloatLitT) and isinstance(target, FloatT):
            return True
        if isinstance(vt, IntLitT) and isinstance(target, FloatT) and isinstance(node, ir.Num):
            return True  # `acc = 0` for a float accumulator
        if isinstance(vt, IntT) and isinstance(target, IntT) and vt.signed == target.signed and vt.width <= target.width:
            return True
        hint = f"; convert with {_conv(target)}(...)" if is_scalar(target) and is_scalar(vt) else ""
        self.err(node, f"type mismatch: cannot assign {vt} to {what} of type {target}{hint}")
        return False

    # ---- expressions ----------------------------------------------------------------------------------
    def expr(self, e: ir.Expr, statement: bool = False) -> Optional[Type]:
        method = getattr(self, "e_" + type(e).__name__)
        return method(e) if not isinstance(e, ir.Call) else self.e_Call(e, statement)

    def e_Num(self, e):
        return INT

    def e_FloatLit(self, e):
        return FLOATLIT

    def e_Name(self, e: ir.Name):
        var = self.lookup_var(e.id)
        if var is not None:
            return var.type
        if e.id in self.operands:
            return self.operands[e.id].type
        if e.id in self.ctx.params:
            return INT
        if e.id in self.ctx.broken:
            return None
        if e.id in ("true", "false"):
            return BOOL
        if e.id in ("inf", "nan"):
            return FLOATLIT
        if e.id == "pc":
            return self.ctx.pc_type
        if e.id in self.ctx.regfiles:
            self.err(e, f"register file '{e.id}' must be indexed: {e.id}[...]")
            return None
        if e.id in self.ctx.storage:
            st = self.ctx.storage[e.id]
            if st.memory or st.dims:
                self.err(e, f"'{e.id}' must be indexed: {e.id}[...]")
                return None
            return st.type
        self.err(e, f"unknown name '{e.id}'{did_you_mean(e.id, self.known_names())}")
        return None

    def e_Index(self, e: ir.Index):
        root, path = ir.index_path(e)  # reg files and multi-dimensional state index from the root
        if isinstance(root, ir.Name) and root.id in self.ctx.regfiles and not self.lookup_var(root.id):
            reg = self.ctx.regfiles[root.id]
            self.index_type(path[0], root.id)
            return self._sub(reg.type, path[1:], e)
        if isinstance(root, ir.Name) and root.id in self.ctx.storage and not self.lookup_var(root.id):
            st = self.ctx.storage[root.id]
            dims = st.dims if st.dims else ((1,) if st.memory else ())
            for p in path[:len(dims)]:
                self.index_type(p, None)
            if len(path) < len(dims):
                self.err(e, f"'{root.id}' has {len(dims)} dimensions; index all of them")
                return None
            return self._sub(st.type, path[len(dims):], e)
        base_t = self.expr(root)
        if base_t is None:
            return None
        return self._sub(base_t, path, e)

    def _sub(self, t: Type, path, node) -> Optional[Type]:
        for p in path:
            if not isinstance(t, VecT):
                self.err(node, f"cannot index a value of type {t}" +
                         ("; use a bit slice x[hi:lo] or bit(x, i)" if is_int(t) else ""))
                return None
            self.index_type(p, None)
            t = t.elem
        return t

    def index_type(self, idx: ir.Expr, regfile: Optional[str]) -> None:
        t = self.expr(idx)
        if t is not None and not is_int(t):
            self.err(idx, f"index must be an integer, got {t}")
        if isinstance(idx, ir.Name) and idx.id in self.operands and not self.lookup_var(idx.id):
            op = self.operands[idx.id]
            if op.regfile and op.regfile != regfile:
                where = f"file '{regfile}'" if regfile else "this"
                self.err(idx, f"'{idx.id}' is a register index of file '{op.regfile}'; it cannot index {where}")

    def e_Slice(self, e: ir.Slice):
        t = self.expr(e.base)
        for b in (e.hi, e.lo):
            bt = self.expr(b)
            if bt is not None and not is_int(bt):
                self.err(b, "bit slice bounds must be integers")
                return None
            if not self.is_static(b):
                self.err(b, "bit slice bounds must be constants")
                return None
        if t is None:
            return None
        if not isinstance(t, IntT):
            self.err(e, f"cannot take a bit slice of {t}")
            return None
        try:
            hi, lo = self.const(e.hi), self.const(e.lo)
        except _NotConst:
            return IntT(False, t.width)  # depends on an operand/loop variable; width bounded by t
        if lo > hi:
            self.err(e, f"bit slice [{hi}:{lo}] is reversed; write [{lo}:{hi}]")
            return None
        if not (0 <= lo and hi < t.width):
            self.err(e, f"bit slice [{hi}:{lo}] is outside {t} (bits {t.width - 1}..0)")
            return None
        return IntT(False, hi - lo + 1)

    def const(self, e: ir.Expr) -> int:
        from .params import EvalError, evaluate

        def lookup(n: ir.Name) -> int:
            if n.id in self.ctx.params:
                return self.ctx.params[n.id]
            raise _NotConst()
        try:
            return evaluate(e, lookup)
        except EvalError:
            raise _NotConst() from None

    def e_Unary(self, e: ir.Unary):
        t = self.expr(e.operand)
        if t is None:
            return None
        if e.op == "!":
            if t != BOOL:
                self.err(e, f"'!' needs a bool, got {t}")
                return None
            return BOOL
        if e.op == "~":
            if not is_int(t):
                self.err(e, f"'~' needs an integer, got {t}")
                return None
            return t
        if not is_numeric(t):
            self.err(e, f"'-' needs a number, got {t}")
            return None
        return t

    def e_Binary(self, e: ir.Binary):
        lt, rt = self.expr(e.left), self.expr(e.right)
        if lt is None or rt is None:
            return None
        op = e.op
        if op in ("&&", "||"):
            for side, t in ((e.left, lt), (e.right, rt)):
                if t != BOOL:
                    self.err(side, f"'{op}' needs bool operands, got {t}")
                    return None
            return BOOL
        if op == "**":
            if not (isinstance(lt, IntLitT) and isinstance(rt, IntLitT) and self.is_static(e)):
                self.err(e, "'**' is only for constant integers (parameters and literals)")
                return None
            return INT
        if op in ("<<", ">>"):
            if not is_int(lt) or not is_int(rt):
                self.err(e, f"'{op}' needs integers, got {lt} and {rt}")
                return None
            return lt
        if op in ("&", "|", "^") and lt == BOOL and rt == BOOL:
            return BOOL
        if op in ("&", "|", "^", "%") and not (is_int(lt) and is_int(rt)):
            self.err(e, f"'{op}' needs integers, got {lt} and {rt}")
            return None
        if op in ("==", "!=") and lt == BOOL and rt == BOOL:
            return BOOL
        t = self.unify(lt, rt, e)
        if t is None:
            return None
        if op in ("==", "!=", "<", "<=", ">", ">="):
            return BOOL
        return t

    def unify(self, a: Type, b: Type, node: ir.Binary) -> Optional[Type]:
        op = node.op
        if not is_numeric(a) or not is_numeric(b):
            bad = a if not is_numeric(a) else b
            self.err(node, f"'{op}' needs numbers, got {bad}")
            return None
        if is_int(a) and is_int(b):
            if isinstance(a, IntLitT):
                self._fits(node.left, b)
                return b
            if isinstance(b, IntLitT):
                self._fits(node.right, a)
                return a
            if a.signed != b.signed:
                self.err(node, f"cannot mix {a} and {b} in '{op}'; convert one with {_conv(a)}(...) or {_conv(b)}(...)")
                return None
            return a if a.width >= b.width else b
        if is_float(a) and is_float(b):
            if isinstance(a, FloatLitT):
                return b
            if isinstance(b, FloatLitT) or a == b:
                return a
            self.err(node, f"cannot mix {a} and {b} in '{op}'; convert one with {a}(...) or {b}(...)")
            return None
        # one int, one float: allow integer literals in float context (x * 2)
        if is_float(a) and isinstance(b, IntLitT) and isinstance(node.right, ir.Num):
            return a
        if is_float(b) and isinstance(a, IntLitT) and isinstance(node.left, ir.Num):
            return b
        self.err(node, f"cannot mix {a} and {b} in '{op}'; convert with {_conv(a if is_float(a) else b)}(...)")
        return None

    def _fits(self, node, t: Type) -> None:
        if isinstance(node, ir.Num) and isinstance(t, IntT) and not (t.min <= node.value <= t.max) \
                and not (not t.signed and 0 <= node.value < (1 << t.width)):
            # allow e.g. `x & 0xFFFFFFFF` on i32 (bit patterns), but not values wider than the type
            if node.value >= (1 << t.width) or node.value < t.min:
                self.err(node, f"integer literal {node.value} does not fit in {t}")

    def e_Cond(self, e: ir.Cond):
        self.condition(e.cond, "'?'")
        a, b = self.expr(e.then), self.expr(e.orelse)
        if a is None or b is None:
            return None
        if a == b:
            return a
        if a == BOOL or b == BOOL or isinstance(a, VecT) or isinstance(b, VecT):
            self.err(e, f"the branches of '?' have different types: {a} and {b}")
            return None
        return self.unify(a, b, ir.Binary("?:", e.then, e.orelse, e.loc))

    def e_Reduce(self, e: ir.Reduce):
        if e.op not in REDUCTIONS:
            self.err(e, f"unknown reduction '{e.op}'; reductions are {', '.join(REDUCTIONS)}")
            return None
        self.expr(e.lo)
        self.loop_bounds(e.lo, e.hi, e)
        self.scopes.append({e.var: _Var(INT, False, True, "loop variable")})
        t = self.expr(e.body)
        self.scopes.pop()
        if t is None:
            return None
        if e.op in ("and", "or", "xor"):
            if not (is_int(t) or t == BOOL):
                self.err(e, f"'{e.op}' reduction needs integers or bools, got {t}")
                return None
        elif not is_numeric(t):
            self.err(e, f"'{e.op}' reduction needs numbers, got {t}")
            return None
        if isinstance(t, IntLitT) and e.op in ("sum", "prod"):
            return INT
        return t

    # ---- calls ------------------------------------------------------------------------------------
    def e_Call(self, e: ir.Call, statement: bool = False):
        f = e.func
        if f in self.ctx.functions:
            return self.user_call(e)
        scalar = self.ctx.resolve_type(ir.TypeRef(f)) if not self._shadowed(f) else None
        if scalar is not None:  # a conversion T(x)
            if not self.arity(e, 1):
                return None
            t = self.expr(e.args[0])
            if t is not None and not is_scalar(t):
                self.err(e.args[0], f"cannot convert {t} to {f}; use bitcast() for vectors")
                return None
            return scalar
        handler = getattr(self, "b_" + f, None)
        if handler is None:
            known = set(self.ctx.functions) | {n[2:] for n in dir(self) if n.startswith("b_")} | set(MATH_UNARY)
            if f in MATH_UNARY:
                return self.b_math(e)
            self.err(e, f"unknown function '{f}'{did_you_mean(f, known)}")
            return None
        if f == "store" and not statement:
            self.err(e, "store() is a statement and has no value")
            return None
        return handler(e)

    def _shadowed(self, name: str) -> bool:
        return self.lookup_var(name) is not None or name in self.operands

    def arity(self, e: ir.Call, n: int) -> bool:
        if len(e.args) != n:
            self.err(e, f"{e.func}() takes {n} argument{'s' if n != 1 else ''}, got {len(e.args)}")
            return False
        return True

    def user_call(self, e: ir.Call):
        fn = self.ctx.functions[e.func]
        if e.func in self.calling:
            self.err(e, f"function '{e.func}' calls itself; functions cannot be recursive")
            return None
        if not self.arity(e, len(fn.params)):
            return None
        for a, p in zip(e.args, fn.params):
            at, pt = self.expr(a), self.ctx.resolve_type(p.type)
            if at is not None and pt is not None:
                self.coerce(at, pt, a, f"parameter '{p.name}' of {e.func}()")
        return self.ctx.resolve_type(fn.result)

    def b_math(self, e):
        if not self.arity(e, 1):
            return None
        t = self.expr(e.args[0])
        if t is not None and not is_float(t):
            self.err(e.args[0], f"{e.func}() needs a float, got {t}; convert with f32(...)")
            return None
        return t

    def _same_numeric(self, e, n):
        if not self.arity(e, n):
            return None
        ts = [self.expr(a) for a in e.args]
        if any(t is None for t in ts):
            return None
        t = ts[0]
        for a, u in zip(e.args[1:], ts[1:]):
            t = self.unify(t, u, ir.Binary(f"{e.func}()", e.args[0], a, e.loc))
            if t is None:
                return None
        return t

    def b_min(self, e):
        return self._same_numeric(e, 2)

    def b_max(self, e):
        return self._same_numeric(e, 2)

    def b_abs(self, e):
        return self._same_numeric(e, 1)

    def b_fma(self, e):
        t = self._same_numeric(e, 3)
        if t is not None and not is_float(t):
            self.err(e, f"fma() needs floats, got {t}")
            return None
        return t

    # ---- IEEE 754 arithmetic on bit patterns (ieee_*): RISC-V rounding modes and flags -------------
    def _ieee_bits(self, e, arg) -> Optional[IntT]:
        t = self.expr(arg)
        if t is None:
            return None
        if not isinstance(t, IntT) or t.width not in (32, 64):
            self.err(arg, f"{e.func}() needs the bits of a binary32 or binary64 value (a 32- or 64-bit integer "
                          f"such as u32 or u64), got {t}; bitcast() a float first")
            return None
        return t

    def _ieee_mode(self, e, arg) -> None:
        t = self.expr(arg)
        if t is not None and not is_int(t):
            self.err(arg, f"the rounding mode of {e.func}() is an integer (0 rne, 1 rtz, 2 rdn, 3 rup, 4 rmm), got {t}")

    def _ieee_same(self, e, n: int, mode: bool) -> Optional[IntT]:
        if not self.arity(e, n + mode):
            return None
        ts = [self._ieee_bits(e, a) for a in e.args[:n]]
        if mode:
            self._ieee_mode(e, e.args[n])
        if any(t is None for t in ts):
            return None
        if any(t.width != ts[0].width for t in ts):
            self.err(e, f"{e.func}() operands differ in width: {', '.join(str(t) for t in ts)}")
            return None
        return ts[0]

    def b_ieee_add(self, e):
        return self._ieee_same(e, 2, True)

    b_ieee_sub = b_ieee_mul = b_ieee_div = b_ieee_add

    def b_ieee_sqrt(self, e):
        return self._ieee_same(e, 1, True)

    def b_ieee_fma(self, e):
        return self._ieee_same(e, 3, True)

    def b_ieee_min(self, e):
        return self._ieee_same(e, 2, False)

    b_ieee_max = b_ieee_min

    def b_ieee_eq(self, e):
        return BOOL if self._ieee_same(e, 2, False) is not None else None

    b_ieee_lt = b_ieee_le = b_ieee_eq

    def _ieee_target(self, e, want_float: bool) -> Optional[IntT]:
        t = self._type_arg(e, 2)
        if t is None:
            return None
        if not isinstance(t, IntT) or t.width not in (32, 64) or (want_float and t.signed):
            what = "u32 or u64 (binary32 or binary64 bits)" if want_float else "i32, u32, i64 or u64"
            self.err(e.args[2], f"the result type of {e.func}() must be {what}, got {t}")
            return None
        return t

    def _ieee_convert(self, e, want_float: bool):
        if not self.arity(e, 3):
            return None
        src = self._ieee_bits(e, e.args[0])
        self._ieee_mode(e, e.args[1])
        t = self._ieee_target(e, want_float)
        return t if src is not None else None

    def b_ieee_to_int(self, e):
        return self._ieee_convert(e, False)

    def b_ieee_convert(self, e):
        return self._ieee_convert(e, True)

    def b_ieee_from_int(self, e):
        if not self.arity(e, 3):
            return None
        x = self.expr(e.args[0])
        self._ieee_mode(e, e.args[1])
        t = self._ieee_target(e, True)
        if x is not None and not (isinstance(x, IntT) and x.width <= 64):
            self.err(e.args[0], f"ieee_from_int() converts a sized integer (its type says signed or not), got {x}")
            return None
        return t

    def _width_arg(self, e, pos) -> Optional[int]:
        try:
            n = self.const(e.args[pos])
        except _NotConst:
            self.err(e.args[pos], f"the width argument of {e.func}() must be a constant")
            return None
        if not 1 <= n <= 64:
            self.err(e.args[pos], f"width {n} is outside 1..64")
            return None
        return n

    def _ext(self, e, signed):
        if not self.arity(e, 2):
            return None
        t = self.expr(e.args[0])
        n = self._width_arg(e, 1)
        if t is None or n is None:
            return None
        if not isinstance(t, IntT):
            self.err(e.args[0], f"{e.func}() needs a sized integer, got {t}")
            return None
        if n < t.width:
            self.err(e, f"{e.func}() to {n} bits would narrow {t}; use a bit slice")
            return None
        return IntT(signed, n)

    def b_sext(self, e):
        return self._ext(e, True)

    def b_zext(self, e):
        return self._ext(e, False)

    def _type_arg(self, e, pos) -> Optional[Type]:
        a = e.args[pos]
        ref = _as_typeref(a)
        t = self.ctx.resolve_type(ref) if ref else None
        if t is None:
            self.err(a, f"argument {pos + 1} of {e.func}() must be a type, such as u32 or bf16[16]")
        return t

    def _value_and_type(self, e) -> Optional[tuple[Type, Type]]:
        """The (value type, target type) of a call f(value, TYPE), or None after an error."""
        if not self.arity(e, 2):
            return None
        t = self.expr(e.args[0])
        target = self._type_arg(e, 1)
        return (t, target) if t is not None and target is not None else None

    def b_bitcast(self, e):
        types = self._value_and_type(e)
        if types is None:
            return None
        t, target = types
        if isinstance(t, (IntLitT, FloatLitT)):
            self.err(e.args[0], "bitcast() needs a sized value, not a literal")
            return None
        if t.bits != target.bits:
            self.err(e, f"bitcast() from {t} ({t.bits} bits) to {target} ({target.bits} bits): sizes differ")
            return None
        return target

    def b_sat(self, e):
        types = self._value_and_type(e)
        if types is None:
            return None
        t, target = types
        if not is_numeric(t) or not is_numeric(target):
            self.err(e, f"sat() converts between numbers, got {t} to {target}")
            return None
        return target

    def b_bit(self, e):
        if not self.arity(e, 2):
            return None
        t, i = self.expr(e.args[0]), self.expr(e.args[1])
        if t is not None and not is_int(t):
            self.err(e.args[0], f"bit() needs an integer, got {t}")
        if i is not None and not is_int(i):
            self.err(e.args[1], f"bit index must be an integer, got {i}")
        if isinstance(t, IntT):
            try:
                k = self.const(e.args[1])
            except _NotConst:
                k = None
            if k is not None and not 0 <= k < t.width:
                self.err(e.args[1], f"bit {k} is outside {t} (bits {t.width - 1}..0)")
        return BOOL

    def _int_unary(self, e):
        if not self.arity(e, 1):
            return None
        t = self.expr(e.args[0])
        if t is not None and not isinstance(t, IntT):
            self.err(e.args[0], f"{e.func}() needs a sized integer, got {t}")
            return None
        return t

    b_clz = b_ctz = b_popcount = _int_unary

    def b_ldexp(self, e):
        if not self.arity(e, 2):
            return None
        f, k = self.expr(e.args[0]), self.expr(e.args[1])
        if f is not None and not is_float(f):
            self.err(e.args[0], f"ldexp() needs a float, got {f}")
            return None
        if k is not None and not is_int(k):
            self.err(e.args[1], f"ldexp() exponent must be an integer, got {k}")
            return None
        return f

    def b_ilogb(self, e):
        t = self.b_math(e)
        return IntT(True, 32) if t is not None else None

    def b_isnan(self, e):
        return BOOL if self.b_math(e) is not None else None

    b_isinf = b_isnan

    def _memory_arg(self, e) -> Optional[StorageInfo]:
        m = e.args[0]
        if not isinstance(m, ir.Name) or m.id not in self.ctx.storage or not self.ctx.storage[m.id].memory:
            self.err(m, f"the first argument of {e.func}() must be a memory")
            return None
        return self.ctx.storage[m.id]

    def b_load(self, e):
        if not self.arity(e, 3):
            return None
        mem = self._memory_arg(e)
        t = self._type_arg(e, 1)
        self.index_type(e.args[2], None)
        if mem is None or t is None:
            return None
        if t.bits % mem.type.bits:
            self.err(e.args[1], f"{t} is not a whole number of {mem.type} elements")
            return None
        return t

    def b_store(self, e):
        if not self.arity(e, 4):
            return None
        mem = self._memory_arg(e)
        t = self._type_arg(e, 1)
        self.index_type(e.args[2], None)
        vt = self.expr(e.args[3])
        if mem is None or t is None:
            return None
        if mem.readonly:
            self.err(e.args[0], f"cannot write read-only memory '{e.args[0].id}'")
        if t.bits % mem.type.bits:
            self.err(e.args[1], f"{t} is not a whole number of {mem.type} elements")
        if vt is not None:
            self.coerce(vt, t, e.args[3], "the stored value")
        return VOID

    def _mx_arg(self, e) -> bool:
        a = e.args[0]
        if not isinstance(a, ir.Name) or a.id not in self.ctx.mxs:
            self.err(a, f"the first argument of {e.func}() must be an mx format")
            return False
        return True

    def _args_as(self, e, types) -> None:
        """Check e.args[1:] (after the mx format) against the given types."""
        for a, want in zip(e.args[1:], types):
            t = self.expr(a)
            if t is not None:
                self.coerce(t, want, a, f"an argument of {e.func}()")

    def b_mx_decode(self, e):
        if not self.arity(e, 3) or not self._mx_arg(e):
            return None
        self._args_as(e, (U8, U8))
        return F32

    def b_mx_scale(self, e):
        if not self.arity(e, 2) or not self._mx_arg(e):
            return None
        self._args_as(e, (F32,))
        return U8

    def b_mx_encode(self, e):
        if not self.arity(e, 3) or not self._mx_arg(e):
            return None
        self._args_as(e, (F32, U8))
        return U8


U8, F32 = IntT(False, 8), FloatT("f32", 32)


class _NotConst(Exception):
    pass


def _kids(e):
    from .params import _children
    return _children(e)


def _conv(t: Type) -> str:
    return str(t) if not isinstance(t, (IntLitT, FloatLitT)) else ("i64" if isinstance(t, IntLitT) else "f32")


def _as_typeref(e: ir.Expr) -> Optional[ir.TypeRef]:
    dims = []
    while isinstance(e, ir.Index):
        dims.append(e.index)
        e = e.base
    if isinstance(e, ir.Name):
        return ir.TypeRef(e.id, tuple(reversed(dims)), e.loc)
    return None


def _show(e: ir.Expr) -> str:
    from .printer import expr
    return expr(e)
