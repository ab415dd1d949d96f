"""Parameters: integer expressions over other parameters, `-D NAME=VALUE` overrides, symbolic forms.

Evaluation is exact integer arithmetic; ``symbolic`` gives the sympy form (with every parameter
substituted down to its own definition) that the docs show next to the value.
"""
from __future__ import annotations

from typing import Callable, Mapping


from . import ir


MAX_BITS = 256  # constants wider than this are certainly a mistake (and would exhaust memory)


class EvalError(Exception):
    def __init__(self, loc: ir.Loc, message: str):
        super().__init__(message)
        self.loc = loc
        self.message = message


def _log2(loc, x):
    if x <= 0:
        raise EvalError(loc, f"log2({x}) is undefined")
    if x & (x - 1):
        raise EvalError(loc, f"log2({x}) is not an integer; use clog2() to round up")
    return x.bit_length() - 1


def _clog2(loc, x):
    if x <= 0:
        raise EvalError(loc, f"clog2({x}) is undefined")
    return (x - 1).bit_length()


def _ceil_div(loc, a, b):
    if b == 0:
        raise EvalError(loc, "division by zero")
    return -(-a // b)


FUNCTIONS: dict[str, tuple[int, Callable]] = {
    "min": (-2, lambda loc, *a: min(a)),
    "max": (-2, lambda loc, *a: max(a)),
    "abs": (1, lambda loc, a: abs(a)),
    "log2": (1, _log2),
    "clog2": (1, _clog2),
    "ceil_div": (2, _ceil_div),
}


def names_in(e: ir.Expr) -> list[ir.Name]:
    """Every Name node in an expression (reduction variables excluded)."""
    out: list[ir.Name] = []

    def walk(x, bound=frozenset()):
        if isinstance(x, ir.Name):
            if x.id not in bound:
                out.append(x)
        elif isinstance(x, ir.Reduce):
            walk(x.lo, bound)
            walk(x.hi, bound)
            walk(x.body, bound | {x.var})
        elif isinstance(x, (ir.Num, ir.FloatLit)):
            pass
        elif isinstance(x, ir.Call):
            for a in x.args:
                walk(a, bound)
        else:
            for child in _children(x):
                walk(child, bound)
    walk(e)
    return out


def _children(x):
    if isinstance(x, ir.Index):
        return (x.base, x.index)
    if isinstance(x, ir.Slice):
        return (x.base, x.hi, x.lo)
    if isinstance(x, ir.Unary):
        return (x.operand,)
    if isinstance(x, ir.Binary):
        return (x.left, x.right)
    if isinstance(x, ir.Cond):
        return (x.cond, x.then, x.orelse)
    return ()


def evaluate(e: ir.Expr, lookup: Callable[[ir.Name], int]) -> int:
    """Evaluate an integer (or boolean, as 0/1) constant expression."""
    if isinstance(e, ir.Num):
        return e.value
    if isinstance(e, ir.Name):
        if e.id == "true":
            return 1
        if e.id == "false":
            return 0
        return lookup(e)
    if isinstance(e, ir.Unary):
        v = evaluate(e.operand, lookup)
        return {"-": -v, "~": ~v, "!": int(not v)}[e.op]
    if isinstance(e, ir.Binary):
        a = evaluate(e.left, lookup)
        if e.op == "&&" and not a:
            return 0
        if e.op == "||" and a:
            return 1
        b = evaluate(e.right, lookup)
        v = _binary(e, a, b)
        if v.bit_length() > MAX_BITS:
            raise EvalError(e.loc, f"value of '{e.op}' has {v.bit_length()} bits; constants are limited to {MAX_BITS}")
        return v
    if isinstance(e, ir.Cond):
        return evaluate(e.then, lookup) if evaluate(e.cond, lookup) else evaluate(e.orelse, lookup)
    if isinstance(e, ir.Call) and e.func in FUNCTIONS:
        arity, fn = FUNCTIONS[e.func]
        if (arity >= 0 and len(e.args) != arity) or (arity < 0 and len(e.args) < -arity):
            n = arity if arity >= 0 else -arity
            want = f"{'' if arity >= 0 else 'at least '}{n} argument{'s' if n != 1 else ''}"
            raise EvalError(e.loc, f"{e.func}() takes {want}, got {len(e.args)}")
        return fn(e.loc, *(evaluate(a, lookup) for a in e.args))
    what = {ir.FloatLit: "a float", ir.Index: "an index", ir.Slice: "a bit slice",
            ir.Reduce: "a reduction", ir.Call: "a call"}.get(type(e), "this")
    hint = f" ('{e.func}' is not one of {', '.join(FUNCTIONS)})" if isinstance(e, ir.Call) else ""
    raise EvalError(e.loc, f"{what} is not allowed in a constant integer expression{hint}")


def _binary(e: ir.Binary, a: int, b: int) -> int:
    op = e.op
    if op in ("/", "%") and b == 0:
        raise EvalError(e.loc, "division by zero")
    if op in ("<<", ">>", "**") and b < 0:
        raise EvalError(e.loc, f"negative {'exponent' if op == '**' else 'shift'} {b}")
    if op in ("**", "<<") and b > MAX_BITS:
        raise EvalError(e.loc, f"{'exponent' if op == '**' else 'shift'} {b} is too large")
    if op == "**" and a.bit_length() * b > MAX_BITS:
        raise EvalError(e.loc, f"{a} ** {b} has more than {MAX_BITS} bits; constants are limited to {MAX_BITS}")
    return {
        "+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b,
        "/": lambda: _trunc_div(a, b), "%": lambda: a - b * _trunc_div(a, b),
        "**": lambda: a ** b, "<<": lambda: a << b, ">>": lambda: a >> b,
        "&": lambda: a & b, "|": lambda: a | b, "^": lambda: a ^ b,
        "==": lambda: int(a == b), "!=": lambda: int(a != b), "<": lambda: int(a < b),
        "<=": lambda: int(a <= b), ">": lambda: int(a > b), ">=": lambda: int(a >= b),
        "&&": lambda: int(bool(a and b)), "||": lambda: int(bool(a or b)),
    }[op]()


def _trunc_div(a: int, b: int) -> int:
    """Division rounding toward zero, as C and the semantics language define it."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def resolve(params: tuple[ir.Param, ...], overrides: Mapping[str, int]) -> tuple[dict[str, int], list[EvalError]]:
    """Values of all parameters (after overrides), in dependency order. Reports cycles and unknown names."""
    import networkx as nx  # here, not at import: a cached load never resolves (networkx: 0.1 s to import)
    by_name = {p.name: p for p in params}
    graph = nx.DiGraph()
    errors: list[EvalError] = []
    for p in params:
        graph.add_node(p.name)
        if p.name in overrides:
            continue
        for n in names_in(p.value):
            if n.id in by_name:
                graph.add_edge(p.name, n.id)
    values: dict[str, int] = {}
    cyclic: set[str] = set()
    for cycle in nx.simple_cycles(graph):
        if cycle[0] in cyclic:
            continue
        cyclic.update(cycle)
        first = min(cycle, key=lambda n: (by_name[n].loc.line, by_name[n].loc.column))
        i = cycle.index(first)
        path = cycle[i:] + cycle[:i] + [first]
        errors.append(EvalError(by_name[first].loc, "parameter cycle: " + " -> ".join(path)))

    def lookup(name: ir.Name) -> int:
        if name.id in values:
            return values[name.id]
        if name.id in by_name:
            raise _Skip()
        raise EvalError(name.loc, f"unknown parameter '{name.id}'{_suggest(name.id, by_name)}")

    for pname in reversed(list(nx.topological_sort(graph.subgraph(set(graph) - _reaching(graph, cyclic))))):
        p = by_name[pname]
        if pname in overrides:
            values[pname] = overrides[pname]
            continue
        try:
            values[pname] = evaluate(p.value, lookup)
        except _Skip:
            pass
        except EvalError as exc:
            errors.append(exc)
    return values, errors


def _reaching(graph, nodes: set[str]) -> set[str]:
    import networkx as nx
    out = set(nodes)
    for n in nodes:
        out |= nx.ancestors(graph, n)
    return out


class _Skip(Exception):
    """A dependency failed to evaluate; its own error is already reported."""


def _suggest(name, candidates) -> str:
    from .diagnostics import did_you_mean
    return did_you_mean(name, candidates)


def symbolic(e: ir.Expr, params: Mapping[str, ir.Param] | None = None, expand: bool = False) -> "sympy.Expr":
    """The sympy form of an integer expression; with ``expand`` every parameter is replaced by its definition."""
    import sympy  # here, not at the top: it takes a quarter of a second to import, and only docs need it
    _SYMPY_OPS = {
        "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
        "/": lambda a, b: sympy.floor(a / b), "%": lambda a, b: sympy.Mod(a, b), "**": lambda a, b: a ** b,
        "<<": lambda a, b: a * 2 ** b, ">>": lambda a, b: sympy.floor(a / 2 ** b),
    }

    def conv(x):
        if isinstance(x, ir.Num):
            return sympy.Integer(x.value)
        if isinstance(x, ir.Name):
            if expand and params and x.id in params:
                return conv(params[x.id].value)
            return sympy.Symbol(x.id, integer=True)
        if isinstance(x, ir.Unary) and x.op == "-":
            return -conv(x.operand)
        if isinstance(x, ir.Binary) and x.op in _SYMPY_OPS:
            return _SYMPY_OPS[x.op](conv(x.left), conv(x.right))
        if isinstance(x, ir.Call) and x.func in ("min", "max"):
            return (sympy.Min if x.func == "min" else sympy.Max)(*(conv(a) for a in x.args))
        if isinstance(x, ir.Call) and x.func in ("log2", "clog2"):
            v = sympy.log(conv(x.args[0]), 2)
            return v if x.func == "log2" else sympy.ceiling(v)
        if isinstance(x, ir.Call) and x.func == "ceil_div":
            return sympy.ceiling(conv(x.args[0]) / conv(x.args[1]))
        return sympy.Symbol(f"<{type(x).__name__}>")
    return sympy.simplify(conv(e)) if expand else conv(e)


_PY_BINOPS = {"+": "+", "-": "-", "*": "*", "**": "**", "<<": "<<", ">>": ">>", "&": "&", "|": "|", "^": "^",
              "==": "==", "!=": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}


def compile_expr(e: ir.Expr, names: Mapping[str, int] | None = None) -> Callable[[Mapping[str, int]], int]:
    """A fast Python function env -> value for a constant integer expression, for hot paths
    (assembler `when`, relocations, warnings). Same semantics as ``evaluate``; names not in the
    environment come from ``names`` (parameters, inlined). Unknown names raise KeyError at call time."""
    consts = dict(names or {})

    def src(x) -> str:
        if isinstance(x, ir.Num):
            return repr(x.value)
        if isinstance(x, ir.Name):
            if x.id in ("true", "false"):
                return "1" if x.id == "true" else "0"
            return repr(consts[x.id]) if x.id in consts else f"env[{x.id!r}]"
        if isinstance(x, ir.Unary):
            inner = src(x.operand)
            return {"-": f"(-{inner})", "~": f"(~{inner})", "!": f"int(not {inner})"}[x.op]
        if isinstance(x, ir.Binary):
            a, b = src(x.left), src(x.right)
            if x.op == "&&":
                return f"int(bool({a}) and bool({b}))"
            if x.op == "||":
                return f"int(bool({a}) or bool({b}))"
            if x.op == "/":
                return f"_tdiv({a}, {b})"
            if x.op == "%":
                return f"_tmod({a}, {b})"
            if x.op in ("**", "<<", ">>"):  # the evaluator's guards (negative or huge exponents/shifts)
                return f"_guarded({x.op!r}, {a}, {b})"
            op = _PY_BINOPS[x.op]
            if op in ("==", "!=", "<", "<=", ">", ">="):
                return f"int({a} {op} {b})"
            return f"({a} {op} {b})"
        if isinstance(x, ir.Cond):
            return f"({src(x.then)} if {src(x.cond)} else {src(x.orelse)})"
        if isinstance(x, ir.Call) and x.func in FUNCTIONS:
            return f"_f[{x.func!r}](None, {', '.join(src(a) for a in x.args)})"
        raise EvalError(x.loc, "not a constant integer expression")

    code = f"lambda env: {src(e)}"

    def tdiv(a, b):
        if b == 0:
            raise EvalError(e.loc, "division by zero")
        return _trunc_div(a, b)

    def tmod(a, b):
        return a - b * tdiv(a, b)

    def guarded(op, a, b):
        return _binary(ir.Binary(op, ir.Num(a), ir.Num(b), e.loc), a, b)

    return eval(code, {"_tdiv": tdiv, "_tmod": tmod, "_guarded": guarded,
                       "_f": {k: f for k, (_, f) in FUNCTIONS.items()}})
