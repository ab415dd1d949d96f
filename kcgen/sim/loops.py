"""Loop nests compiled twice: a fast version checked once, before the nest, and the checked one.

A *region* is a `for` statement, or a statement holding a reduction, met outside any other region.
Every index of a memory, register file or state array inside it (a *site*) whose value is affine
in the region's loop variables (`act + i * MLEN + k`) is analysed: over the box of loop-variable
values, the exact (unwrapped) index ranges over [lo, hi], computed before the nest in 128-bit
arithmetic. When every such range lies inside its array, the fast version runs: the indices are
computed as `base + 64 * i + k` with no per-element bounds check. Otherwise the checked version
runs, element by element as the rules say, so a trap reports exactly what it always did.

Why the unchecked index equals the checked one: the semantics compute an index with +, -, * and
shifts by constants, wrapping each result to its type (mod 2^w). When every wrap of a
loop-dependent value is at least as wide as the index's own type (width W), the computed index is
congruent to the exact one mod 2^W; both lie in the type's range when the exact value lies in
[0, size) (size <= 2^W, or 2^(W-1) for a signed type), so they are equal. A narrower wrap inside
(a `u8` loop counter in a `u32` address) makes the site non-affine: it stays checked.

Two more things the fast version does, each only when it is provably the same:
- *ready times hoisted*: a tracked memory's element read waits for its 64-element block. A read
  executed on every iteration whose indices leave no gap of more than 64 elements touches every
  block from lo >> 6 to hi >> 6, so the wait is taken once, over that block range, before the nest.
- *reductions interchanged*: `for i, for j: X[i][j] = X[i][j] + sum(k: body)` computes sixteen
  independent sums. When the body is pure (no trap once its indices are proven, no write in the
  region reads back into it), all sums of the innermost loops are computed before them in an
  array, k outermost, so they run side by side (and gcc vectorises them). Each sum still adds its
  terms in order k = lo, lo + 1, ...: the results are bit for bit the same.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from isadl import ir
from isadl.types import BoolT, IntLitT, IntT, Type, VecT

COEF_LIMIT = 1 << 56  # |coefficient| bound: products with 64-bit values stay far inside 128 bits
ACC_LIMIT = 1024  # elements of one interchanged reduction's accumulator array
BLOCK = 64

# calls whose value is a pure function of their arguments (no trap, no state)
PURE_CALLS = {"min", "max", "abs", "fma", "ldexp", "ilogb", "isnan", "isinf", "bit", "clz", "ctz",
              "popcount", "sext", "zext", "sat", "bitcast", "exp", "log", "sqrt", "recip", "tanh", "erf",
              "mx_decode", "mx_scale", "mx_encode"}


def width_of(t: Type) -> Optional[tuple[int, bool]]:
    """(width, signed) of an integer type; None for anything else."""
    if isinstance(t, IntLitT):
        return 64, True
    if isinstance(t, IntT):
        return t.width, t.signed
    return None


@dataclass
class Affine:
    """const + sum(atoms[code] * value of code) + sum(coefs[var] * var), exactly (no wrapping)."""
    const: int = 0
    atoms: dict = field(default_factory=dict)  # C code of a loop-invariant integer -> coefficient
    coefs: dict = field(default_factory=dict)  # loop variable (semantics name) -> coefficient

    def scaled(self, c: int) -> "Affine":
        return Affine(self.const * c, {a: v * c for a, v in self.atoms.items()},
                      {a: v * c for a, v in self.coefs.items()})

    def plus(self, o: "Affine", sign: int = 1) -> "Affine":
        atoms, coefs = dict(self.atoms), dict(self.coefs)
        for a, v in o.atoms.items():
            atoms[a] = atoms.get(a, 0) + sign * v
        for a, v in o.coefs.items():
            coefs[a] = coefs.get(a, 0) + sign * v
        return Affine(self.const + sign * o.const, {a: v for a, v in atoms.items() if v},
                      {a: v for a, v in coefs.items() if v})

    def sane(self) -> bool:
        return abs(self.const) < (1 << 100) and all(abs(v) < COEF_LIMIT for v in (*self.atoms.values(), *self.coefs.values()))


@dataclass
class LoopVar:
    name: str
    lo: Optional[int]  # compile-time bounds, when known
    hi: Optional[int]
    lo_c: Optional[str]  # C (int64) of the bounds, loop-invariant; None: not invariant
    hi_c: Optional[str]

    @property
    def const(self) -> bool:
        return self.lo is not None and self.hi is not None


@dataclass
class Site:
    expr: ir.Expr  # the index expression; id(expr) keys the site
    size: int
    aff: Affine
    read_mem: Optional[str]  # a tracked memory element this index reads (for hoisting its wait)
    unconditional: bool  # evaluated on every iteration of every loop around it in the region


@dataclass
class Interchange:
    node: ir.Reduce
    loops: list  # the innermost enclosing `for` statements whose sums are computed together
    anchor: Optional[ir.For]  # precompute at the start of this loop's body (None: before the region)


class Region:
    """The analysis of one region (see the module docstring)."""

    def __init__(self, gen, stmt):
        self.g = gen
        self.stmt = stmt
        self.vars: dict[str, LoopVar] = {}
        self.sites: list[Site] = []
        self.reduces: list[tuple] = []  # (Reduce, enclosing fors, unconditional)
        self.ok = True
        self.proven: set = set()
        body = [stmt]
        from .cgen import _walk, _written_storage
        self.written = _written_storage(body)
        # what a statement other than a loop writes, it writes after evaluating everything it reads
        self.written_before = self.written if isinstance(stmt, ir.For) else set()
        self.lets, self.assigned = set(), set()
        names = []
        for n in _walk(body):
            if isinstance(n, ir.Let):
                if n.name in self.lets:
                    self.ok = False
                self.lets.add(n.name)
            elif isinstance(n, ir.Assign):
                root, path = ir.index_path(n.target)
                if isinstance(root, ir.Name) and (root.id in gen.locals or root.id in self.lets):
                    self.assigned.add(root.id)
            elif isinstance(n, ir.For):
                names.append(n.var)
            elif isinstance(n, ir.Reduce):
                names.append(n.var)
        self.loopnames = set(names)
        if len(names) != len(self.loopnames) or self.loopnames & (set(gen.locals) | self.lets):
            self.ok = False  # a loop variable shadows another name: not worth the care
        if not self.ok:
            return
        self.walk_stmt(stmt, [], True)

    # ---- classification of expressions ------------------------------------------------------------
    def variant(self, e) -> bool:
        from .cgen import _walk_expr
        return any(isinstance(n, ir.Name) and (n.id in self.loopnames or n.id in self.lets or n.id in self.assigned)
                   for n in _walk_expr(e))

    def const_int(self, e) -> Optional[int]:
        """The value of a constant integer expression of literals and parameters (+ - * <<), if it
        fits its type."""
        v = self._const(e)
        if v is None:
            return None
        w = width_of(self.g.body.type(e))
        if w is None:
            return None
        bits, signed = w
        lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1))) if signed else (0, 1 << bits)
        return v if lo <= v < hi else None

    def _const(self, e) -> Optional[int]:
        if isinstance(e, ir.Num):
            return e.value
        if isinstance(e, ir.Name):
            n = e.id
            if n in self.g.spec.params and n not in self.g.locals and n not in self.g.body.operands and \
                    n not in self.loopnames and n not in self.lets:
                return self.g.spec.params[n]
            return None
        if isinstance(e, ir.Unary) and e.op == "-":
            v = self._const(e.operand)
            return None if v is None else -v
        if isinstance(e, ir.Binary) and e.op in ("+", "-", "*", "<<"):
            a, b = self._const(e.left), self._const(e.right)
            if a is None or b is None:
                return None
            if e.op == "<<":
                return a << b if 0 <= b < 64 else None
            return a + b if e.op == "+" else (a - b if e.op == "-" else a * b)
        return None

    def pure(self, e, invariant: bool) -> bool:
        """No trap, no side effect, reads nothing the region writes; `invariant`: and no loop variable
        or memory element either (a value computed once, before the nest)."""
        if isinstance(e, (ir.Num, ir.FloatLit)):
            return True
        if isinstance(e, ir.Name):
            n = e.id
            if n in self.loopnames or n in self.lets or n in self.assigned:
                return not invariant and n in self.loopnames
            if n in self.g.locals or n in self.g.body.operands or n in self.g.spec.params:
                return True
            if n in ("true", "false", "inf", "nan"):
                return True
            st = self.g.L.stores.get(n)
            return st is not None and st.kind == "state" and n not in (self.written_before if invariant else self.written) \
                and n not in self.g.L.groups
        if isinstance(e, ir.Unary):
            return self.pure(e.operand, invariant)
        if isinstance(e, ir.Binary):
            if e.op in ("/", "%"):
                d = self._const(e.right)
                if not d:
                    return False
            return self.pure(e.left, invariant) and self.pure(e.right, invariant)
        if isinstance(e, ir.Slice):
            return all(self.pure(x, invariant) for x in (e.base, e.hi, e.lo))
        if isinstance(e, ir.Cond):
            return all(self.pure(x, invariant) for x in (e.cond, e.then, e.orelse))
        if isinstance(e, ir.Call):
            f = e.func
            conv = f not in self.g.functions and f not in self.g.locals and \
                self.g.spec.context.resolve_type(ir.TypeRef(f)) is not None and not hasattr(self.g, "b_" + f)
            if not (conv or f in PURE_CALLS):
                return False
            if f == "bitcast" and any(isinstance(self.g.body.type(x), VecT) for x in e.args[:1]):
                return False
            args = e.args[1:] if f in ("mx_decode", "mx_scale", "mx_encode") else e.args
            return all(self.pure(a, invariant) for a in args)
        if isinstance(e, ir.Index) and invariant:  # a register named by an operand: no check, no wait
            root, path = ir.index_path(e)
            if not (isinstance(root, ir.Name) and root.id not in self.g.locals and root.id in self.g.L.stores):
                return False
            st = self.g.L.stores[root.id]
            return st.kind == "reg" and root.id not in self.written_before and len(path) == 1 and \
                not isinstance(st.type, VecT) and self.g.operand_in_range(path[0], st)
        if isinstance(e, ir.Index) and not invariant:
            root, path = ir.index_path(e)
            if not (isinstance(root, ir.Name) and root.id not in self.g.locals and root.id in self.g.L.stores):
                return False
            st = self.g.L.stores[root.id]
            if root.id in self.written or isinstance(st.type, VecT):
                return False
            if len(path) != (len(st.shape)):
                return False
            return all(id(ix) in self.proven or (st.kind == "reg" and k == 0 and self.g.operand_in_range(ix, st))
                       for k, ix in enumerate(path)) and all(self.pure(ix, False) for ix in path)
        return False

    def affine(self, e, W: int) -> Optional[Affine]:
        """e as an exact affine form, or None."""
        t = self.g.body.type(e)
        w = width_of(t)
        if w is None:
            return None
        if not self.variant(e):
            c = self.const_int(e)
            if c is not None:
                return Affine(c)
            if not self.pure(e, True):
                return None
            pre, code = self.g.sub_expr(e, None)
            if pre:
                return None
            return Affine(0, {code: 1})
        if w[0] < W:
            return None  # a loop-dependent value wrapped narrower than the index: not affine
        if isinstance(e, ir.Name):
            return Affine(0, {}, {e.id: 1}) if e.id in self.vars and self.vars[e.id].lo_c is not None else None
        if isinstance(e, ir.Binary):
            if e.op in ("+", "-"):
                a, b = self.affine(e.left, W), self.affine(e.right, W)
                return a.plus(b, 1 if e.op == "+" else -1) if a is not None and b is not None else None
            if e.op == "*":
                for x, y in ((e.left, e.right), (e.right, e.left)):
                    c = self.const_int(y)
                    if c is not None:
                        a = self.affine(x, W)
                        return a.scaled(c) if a is not None else None
                return None
            if e.op == "<<":
                c = self.const_int(e.right)
                if c is not None and 0 <= c < w[0]:
                    a = self.affine(e.left, W)
                    return a.scaled(1 << c) if a is not None else None
            return None
        if isinstance(e, ir.Unary) and e.op == "-":
            a = self.affine(e.operand, W)
            return a.scaled(-1) if a is not None else None
        if isinstance(e, ir.Call) and len(e.args) == 1 and width_of(self.g.body.type(e.args[0])) is not None:
            conv = e.func in ("sext", "zext") or (e.func not in self.g.functions and
                                                   self.g.spec.context.resolve_type(ir.TypeRef(e.func)) is not None)
            if conv:
                return self.affine(e.args[0], W)
        return None

    # ---- the walk ----------------------------------------------------------------------------------
    def bound(self, e) -> tuple[Optional[int], Optional[str]]:
        c = self.const_int(e)
        if c is not None:
            return c, str(c)
        if self.variant(e) or not self.pure(e, True):
            return None, None
        pre, code = self.g.sub_expr(e, IntLitT())
        return (None, None) if pre else (None, code)

    def add_var(self, name, lo_e, hi_e):
        lo, lo_c = self.bound(lo_e)
        hi, hi_c = self.bound(hi_e)
        if lo_c is None or hi_c is None:
            lo_c = hi_c = None
        self.vars[name] = LoopVar(name, lo, hi, lo_c, hi_c)

    def walk_stmt(self, s, fors, uncond):
        if isinstance(s, ir.For):
            self.walk_expr(s.lo, fors, uncond, None)
            self.walk_expr(s.hi, fors, uncond, None)
            self.add_var(s.var, s.lo, s.hi)
            v = self.vars[s.var]
            nonempty = v.const and v.lo < v.hi
            for b in s.body:
                self.walk_stmt(b, fors + [s], uncond and nonempty)
        elif isinstance(s, ir.If):
            self.walk_expr(s.cond, fors, uncond, None)
            for b in s.then + s.orelse:
                self.walk_stmt(b, fors, False)
        elif isinstance(s, ir.Assign):
            self.walk_expr(s.value, fors, uncond, None)
            self.walk_target(s.target, fors, uncond)
        elif isinstance(s, (ir.Let,)):
            self.walk_expr(s.value, fors, uncond, None)
        elif isinstance(s, ir.Require):
            self.walk_expr(s.cond, fors, uncond, None)
        elif isinstance(s, ir.CallStmt):
            self.walk_expr(s.call, fors, uncond, None)

    def walk_target(self, t, fors, uncond):
        root, path = ir.index_path(t)
        if isinstance(root, ir.Name) and root.id not in self.g.locals and root.id in self.g.L.stores:
            self.index_sites(root.id, path, fors, uncond, read=False)
        else:
            for ix in path:
                self.walk_expr(ix, fors, uncond, None)

    def index_sites(self, name, path, fors, uncond, read):
        st = self.g.L.stores[name]
        dims = list(st.shape)
        for k, ix in enumerate(path):
            self.walk_expr(ix, fors, uncond, None)
            if k >= len(dims) or isinstance(st.type, VecT):
                continue
            if st.kind == "reg" and k == 0 and self.g.operand_in_range(ix, st):
                continue
            w = width_of(self.g.body.type(ix))
            if w is None:
                continue
            W, signed = w
            if dims[k] > (1 << (W - 1 if signed else W)):
                continue
            aff = self.affine(ix, W)
            if aff is None or not aff.sane():
                continue
            mem = name if (read and st.kind == "mem" and name in self.g.tracked) else None
            self.sites.append(Site(ix, dims[k], aff, mem, uncond))

    def walk_expr(self, e, fors, uncond, in_reduce):
        if isinstance(e, ir.Index):
            root, path = ir.index_path(e)
            if isinstance(root, ir.Name) and root.id not in self.g.locals and root.id in self.g.L.stores:
                self.index_sites(root.id, path, fors, uncond, read=True)
                return
            self.walk_expr(e.base, fors, uncond, in_reduce)
            self.walk_expr(e.index, fors, uncond, in_reduce)
        elif isinstance(e, ir.Reduce):
            self.walk_expr(e.lo, fors, uncond, in_reduce)
            self.walk_expr(e.hi, fors, uncond, in_reduce)
            self.add_var(e.var, e.lo, e.hi)
            v = self.vars[e.var]
            self.reduces.append((e, list(fors), uncond and in_reduce is None))
            self.walk_expr(e.body, fors, uncond and v.const and v.lo < v.hi, e)
        elif isinstance(e, ir.Binary) and e.op in ("&&", "||"):
            self.walk_expr(e.left, fors, uncond, in_reduce)
            self.walk_expr(e.right, fors, False, in_reduce)
        elif isinstance(e, ir.Cond):
            self.walk_expr(e.cond, fors, uncond, in_reduce)
            self.walk_expr(e.then, fors, False, in_reduce)
            self.walk_expr(e.orelse, fors, False, in_reduce)
        elif isinstance(e, ir.Call):
            for a in e.args:
                self.walk_expr(a, fors, uncond, in_reduce)
        else:
            for k in ("base", "index", "hi", "lo", "operand", "left", "right"):
                v = getattr(e, k, None)
                if v is not None and not isinstance(v, (str, int)):
                    self.walk_expr(v, fors, uncond, in_reduce)

    # ---- decisions --------------------------------------------------------------------------------
    def plan(self, tmp) -> Optional["Plan"]:
        """What the fast version does and the C that decides it; None when it would gain nothing."""
        p = Plan()
        conds = []
        for site in self.sites:
            vs = [self.vars[v] for v in site.aff.coefs]
            if all(v.const for v in vs) and not site.aff.atoms:
                lo, hi = _range(site.aff, vs)
                if all(v.lo < v.hi for v in vs) and not (0 <= lo and hi < site.size):
                    continue  # will trap (or the loop is empty): leave it checked
                if not all(v.lo < v.hi for v in vs):
                    continue
                p.fast[id(site.expr)] = (site.aff.const, site.aff.coefs)
                continue
            base = p.base_of(site.aff, tmp)
            lo_c, hi_c = _range_c(site.aff, vs, base)
            cond = f"kc_within({lo_c}, {hi_c}, {site.size})"
            if site.read_mem is not None and site.unconditional and all(v.const and v.lo < v.hi for v in vs) \
                    and _covers(site.aff, vs):
                key = (site.read_mem, lo_c, hi_c)
                if key not in p.hoist_keys:
                    p.hoist_keys.add(key)
                    p.hoist.append((site.read_mem, lo_c, hi_c))
                p.hoisted.add(id(site.expr))
            if cond not in conds:
                conds.append(cond)
            p.fast[id(site.expr)] = (base, site.aff.coefs)
        p.conds = conds
        self.proven = set(p.fast)
        for site in self.sites:  # reads with a compile-time proof: hoistable too
            if id(site.expr) in p.fast and id(site.expr) not in p.hoisted and site.read_mem is not None \
                    and site.unconditional and not site.aff.atoms:
                vs = [self.vars[v] for v in site.aff.coefs]
                if all(v.const and v.lo < v.hi for v in vs) and _covers(site.aff, vs):
                    lo, hi = _range(site.aff, vs)
                    p.hoist.append((site.read_mem, str(lo), str(hi)))
                    p.hoisted.add(id(site.expr))
        for red, fors, uncond in self.reduces:
            ic = self.interchange(red, fors, uncond)
            if ic is not None:
                p.interchange[id(red)] = ic
        if not p.fast:
            return None
        return p

    def interchange(self, red, fors, uncond) -> Optional[Interchange]:
        if not uncond or not fors:
            return None
        t = self.g.body.type(red)
        if isinstance(t, VecT):
            return None
        v = self.vars[red.var]
        if v.lo_c is None:
            return None
        from .cgen import _walk_expr
        if any(isinstance(n, ir.Reduce) for n in _walk_expr(red.body) if n is not red):
            return None
        if any(isinstance(n, ir.Name) and (n.id in self.lets or n.id in self.assigned) for n in _walk_expr(red.body)):
            return None
        if not self.pure(red.body, False):
            return None
        # the innermost loops with constant bounds whose sums fit in the accumulator array
        loops, n = [], 1
        for f in reversed(fors):
            fv = self.vars[f.var]
            if not (fv.const and fv.lo < fv.hi) or n * (fv.hi - fv.lo) > ACC_LIMIT:
                break
            n *= fv.hi - fv.lo
            loops.insert(0, f)
        if n < 2:
            return None
        anchor = fors[len(fors) - len(loops) - 1] if len(loops) < len(fors) else None
        return Interchange(red, loops, anchor)


@dataclass
class Plan:
    fast: dict = field(default_factory=dict)  # id(index expr) -> (C of the base, {var: coef})
    hoisted: set = field(default_factory=set)  # id(index expr) of reads whose wait is hoisted
    hoist: list = field(default_factory=list)  # (memory, C lo, C hi) block waits before the nest
    hoist_keys: set = field(default_factory=set)
    conds: list = field(default_factory=list)
    pre: list = field(default_factory=list)  # C statements before the test
    interchange: dict = field(default_factory=dict)  # id(Reduce) -> Interchange
    bases: dict = field(default_factory=dict)

    def base_of(self, aff: Affine, tmp) -> str:
        """A temporary holding const + atoms exactly (kc_wide), computed before the nest."""
        terms = [str(aff.const)] if aff.const or not aff.atoms else []
        for code, c in aff.atoms.items():
            terms.append(f"(kc_wide){code}" if c == 1 else f"{c} * (kc_wide){code}")
        expr = " + ".join(terms).replace("+ -", "- ")
        if expr not in self.bases:
            name = tmp("kc_b")
            self.bases[expr] = name
            self.pre.append(f"kc_wide {name} = {expr};")
        return self.bases[expr]


def _range(aff: Affine, vs) -> tuple[int, int]:
    lo = hi = aff.const
    for v in vs:
        c = aff.coefs[v.name]
        a, b = c * v.lo, c * (v.hi - 1)
        lo += min(a, b)
        hi += max(a, b)
    return lo, hi


def _range_c(aff: Affine, vs, base: str) -> tuple[str, str]:
    """C (kc_wide) of the least and greatest exact index over the box."""
    lo, hi = [base], [base]
    for v in vs:
        c = aff.coefs[v.name]
        first = v.lo if v.const else f"(kc_wide)({v.lo_c})"
        last = v.hi - 1 if v.const else f"((kc_wide)({v.hi_c}) - 1)"
        a, b = _mul(c, first), _mul(c, last)
        small, big = (a, b) if c > 0 else (b, a)
        lo.append(small)
        hi.append(big)
    def join(xs):
        n = sum(x for x in xs if isinstance(x, int))
        terms = [x for x in xs if not isinstance(x, int)] + ([str(n)] if n else [])
        return " + ".join(terms).replace("+ -", "- ") or "0"
    return join(lo), join(hi)


def _mul(c: int, x):
    if isinstance(x, int):
        return c * x
    return x if c == 1 else f"{c} * {x}"


def _covers(aff: Affine, vs) -> bool:
    """Every 64-element block between the least and greatest index is read: the values the site
    takes leave no gap wider than a block (progressions added smallest stride first)."""
    span = 0
    for c, n in sorted((abs(aff.coefs[v.name]), v.hi - v.lo) for v in vs):
        if n <= 1:
            continue
        if c > span + BLOCK:
            return False
        span += c * (n - 1)
    return True


def render_index(base, coefs: dict, locals_: dict, vars_: dict) -> str:
    """The fast index: base + c * var ..., exact (the value is proven in bounds). `base` is an int
    or the name of a kc_wide temporary."""
    terms = []
    if isinstance(base, str):
        terms.append((1, f"(uint64_t){base}"))
    elif base:
        terms.append((1 if base > 0 else -1, str(abs(base))))
    wide = False
    for name, c in coefs.items():
        lv = vars_[name]
        wide = wide or not (lv.const and abs(c) * max(abs(lv.lo), abs(lv.hi)) < (1 << 56))
    for name, c in coefs.items():
        v = locals_[name]
        x = f"(uint64_t){v}" if wide else v
        terms.append((1 if c > 0 else -1, x if abs(c) == 1 else f"{abs(c)} * {x}"))
    if not terms:
        return "UINT64_C(0)"
    out = ("UINT64_C(0) - " if terms[0][0] < 0 else "") + terms[0][1]
    for sign, t in terms[1:]:
        out += (" + " if sign > 0 else " - ") + t
    return f"(uint64_t)({out})"
