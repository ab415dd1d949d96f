"""Assembly-time expressions: numbers, symbols, `.`, GNU local labels (`1b`/`1f`), `%reloc(...)`.

Parsed once in pass 1 into small tuples; evaluated in pass 2 when every symbol has an address.
Precedence follows GNU as: unary (- ~ !), then * / % << >>, then & | ^ and binary ! (or-not), then
+ - and the comparisons (== != <> < > <= >=, true is -1), then && || (true is 1).
"""
from __future__ import annotations

import operator
import re
from typing import Callable, Optional

_TOKEN = re.compile(r"""
    \s*(?:
      (?P<num>0[xX][0-9a-fA-F_]+|0[bB][01_]+|[0-9][0-9_]*)(?P<local>[bf])?(?![\w.$])
    | (?P<reloc>%[A-Za-z_]\w*)
    | (?P<sym>[A-Za-z_.$][\w.$]*)
    | (?P<op><<|>>|<=|>=|<>|==|!=|&&|\|\||[-+*/%&|^~()<>!])
    | (?P<char>'(?:\\.|[^\\'])')
    )""", re.X)

# node forms: ("num", v) ("sym", name, col) ("local", n, "b"|"f", col) ("dot",) ("reloc", name, node, col)
#             ("neg", node) ("not", node) ("lnot", node) ("bin", op, a, b, col)
Node = tuple
_BINARY = {"*": operator.mul, "<<": operator.lshift, ">>": operator.rshift, "&": operator.and_, "|": operator.or_,
           "^": operator.xor, "+": operator.add, "-": operator.sub}
_BINARY.update({"!": lambda x, y: x | ~y, "==": lambda x, y: -(x == y), "!=": lambda x, y: -(x != y),
                "<>": lambda x, y: -(x != y), "<": lambda x, y: -(x < y), ">": lambda x, y: -(x > y),
                "<=": lambda x, y: -(x <= y), ">=": lambda x, y: -(x >= y),
                "&&": lambda x, y: int(bool(x) and bool(y)), "||": lambda x, y: int(bool(x) or bool(y))})
_BINARY_PREC = {"*": 3, "/": 3, "%": 3, "<<": 3, ">>": 3, "&": 2, "|": 2, "^": 2, "!": 2, "+": 1, "-": 1,
                "==": 1, "!=": 1, "<>": 1, "<": 1, ">": 1, "<=": 1, ">=": 1, "&&": 0, "||": 0}


class ExprError(ValueError):
    def __init__(self, column: int, message: str):
        super().__init__(message)
        self.column = column  # 0-based offset in the operand text


def parse_number(text: str) -> Optional[int]:
    """A plain integer literal (the fast path for most operands), or None."""
    t = text.replace("_", "")
    neg = t.startswith("-")
    if neg:
        t = t[1:]
    try:
        if t[:2] in ("0x", "0X"):
            v = int(t[2:], 16)
        elif t[:2] in ("0b", "0B"):
            v = int(t[2:], 2)
        elif t.isdigit():
            v = int(t, 8) if len(t) > 1 and t[0] == "0" else int(t, 10)  # 010 is octal, as in GNU as
        else:
            return None
    except ValueError:
        return None
    return -v if neg else v


def parse_expr(text: str) -> Node:
    tokens = []
    pos = 0
    text_len = len(text)
    while pos < text_len:
        if text[pos:].strip() == "":
            break
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            col = pos + (len(text[pos:]) - len(text[pos:].lstrip()))
            raise ExprError(col, f"unexpected '{text[col]}' in expression")
        kind = next(k for k in ("num", "reloc", "sym", "op", "char") if m.group(k) is not None)
        tokens.append((kind, m.group(kind), m.start(kind), m))
        pos = m.end()
    if not tokens:
        raise ExprError(0, "missing expression")
    parser = _Parser(tokens, text)
    node = parser.expr()
    if parser.i < len(tokens):
        kind, value, col, _ = tokens[parser.i]
        raise ExprError(col, f"unexpected '{value}' in expression")
    return node


class _Parser:
    def __init__(self, tokens, text):
        self.tokens = tokens
        self.text = text
        self.i = 0

    def peek(self):
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def expr(self, min_prec: int = 0) -> Node:
        """Precedence climbing; every binary operator is left-associative."""
        left = self.unary()
        while True:
            tok = self.peek()
            if tok is None or tok[0] != "op" or tok[1] not in _BINARY_PREC:
                return left
            prec = _BINARY_PREC[tok[1]]
            if prec < min_prec:
                return left
            self.i += 1
            right = self.expr(prec + 1)
            left = ("bin", tok[1], left, right, tok[2])

    def unary(self) -> Node:
        tok = self.peek()
        if tok is None:
            raise ExprError(len(self.text), "expression ends too early")
        kind, value, col, m = tok
        self.i += 1
        if kind == "op" and value in ("-", "+", "~", "!"):
            inner = self.unary()
            return {"-": ("neg", inner), "~": ("not", inner), "!": ("lnot", inner), "+": inner}[value]
        if kind == "op" and value == "(":
            inner = self.expr()
            close = self.peek()
            if close is None or close[1] != ")":
                raise ExprError(col, "unbalanced '('")
            self.i += 1
            return inner
        if kind == "num":
            n = parse_number(m.group("num"))
            if n is None:
                raise ExprError(col, f"malformed number '{m.group('num')}'")
            if m.group("local"):
                return ("local", n, m.group("local"), col)
            return ("num", n)
        if kind == "char":
            body = value[1:-1]
            return ("num", ord(body.encode().decode("unicode_escape")))
        if kind == "sym":
            return ("dot",) if value == "." else ("sym", value, col)
        if kind == "reloc":
            op = self.peek()
            if op is None or op[1] != "(":
                raise ExprError(col, f"{value} needs an argument in parentheses: {value}(symbol)")
            self.i += 1
            inner = self.expr()
            close = self.peek()
            if close is None or close[1] != ")":
                raise ExprError(col, "unbalanced '('")
            self.i += 1
            return ("reloc", value[1:], inner, col)
        raise ExprError(col, f"unexpected '{value}' in expression")


def evaluate(node: Node, symbol: Callable[[str, int], int], local: Callable[[int, str, int], int], dot: int,
             reloc: Callable[[str, Node, int], int]) -> int:
    kind = node[0]
    if kind == "num":
        return node[1]
    if kind == "sym":
        return symbol(node[1], node[2])
    if kind == "local":
        return local(node[1], node[2], node[3])
    if kind == "dot":
        return dot
    if kind == "neg":
        return -evaluate(node[1], symbol, local, dot, reloc)
    if kind == "not":
        return ~evaluate(node[1], symbol, local, dot, reloc)
    if kind == "lnot":
        return int(not evaluate(node[1], symbol, local, dot, reloc))
    if kind == "reloc":
        return reloc(node[1], node[2], node[3])
    op, a, b, col = node[1], node[2], node[3], node[4]
    x = evaluate(a, symbol, local, dot, reloc)
    y = evaluate(b, symbol, local, dot, reloc)
    if op in ("/", "%") and y == 0:
        raise ExprError(col, "division by zero")
    if op in ("<<", ">>") and not 0 <= y < 4096:
        raise ExprError(col, f"shift by {y}")
    if op == "/":
        q = abs(x) // abs(y)
        return q if (x >= 0) == (y >= 0) else -q
    if op == "%":
        q = abs(x) // abs(y)
        return x - y * (q if (x >= 0) == (y >= 0) else -q)
    return _BINARY[op](x, y)  # only this operator: x << y of another one may be a negative or huge shift

