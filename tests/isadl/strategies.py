"""Hypothesis strategies for random, syntactically valid isadl IR.

Everything here is built directly as ``isadl.ir`` values (not as text) and is restricted to IR
that the parser can actually produce, so that ``parse_text(print_isa(isa)) == (isa,)`` must hold
for every generated value. The values are *not* semantically valid (names do not resolve, bit
ranges overlap, ...): the strategies exercise the grammar, the parser's tree-to-IR builder and
the canonical printer, not the checker.

Restrictions that mirror what the parser can produce:
  * names never collide with a grammar keyword (``isa``, ``end``, ``in``, ...): some are reserved
    outright, and in several places a keyword and a name are both acceptable and the keyword wins.
    String values that merely *look* like names (enum spellings, dialect values) do include
    keywords: the printer must quote those;
  * ``Unary('-', Num(...))`` never appears: the parser folds unary minus on an integer literal
    (even a parenthesised one) into a negative ``Num``;
  * assignment targets are names, indexes and slices rooted at a name (an assignment whose
    target starts with ``(`` would glue onto the previous statement as a call);
  * statement calls are ``Call`` (never ``Reduce``); numeric literals outside expressions are
    non-negative (the grammar's INT has no sign);
  * instructions and pseudos only name sections that appear (once) in ``isa.sections``;
  * every pseudo has at least one expansion, every expansion at least one line.
"""
from __future__ import annotations

import re

from hypothesis import strategies as st

from isadl import ir
from isadl.parser import GRAMMAR

# ---- names ----------------------------------------------------------------------------------

_BRIEF_KEYWORDS = """
isa param doc regs state memory format bundle slot enum timing unit instruction syntax encoding
cycles latency semantics pseudo when expands function section dialect reloc paired abi entry args
end stack region hwloop start depth example given expect let var if else for in require trap halt
fixed ignore asm alias zero readonly group regclass base align nop count async queue pipelined
override extends version word endian float mx constraint
""".split()

#: Every bare word the grammar uses as a keyword, plus the list from the language brief.
KEYWORDS = frozenset(re.findall(r'"([A-Za-z_][A-Za-z0-9_]*)"', GRAMMAR.read_text())) | frozenset(_BRIEF_KEYWORDS)

_NAME_START = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_"

names = st.one_of(
    st.sampled_from(["x", "rd", "rs1", "N", "VLEN", "acc", "pc", "true", "false", "inf", "nan", "_", "a_1",
                     "isa_", "end_", "ending", "inx", "Add", "sum", "store", "f32", "u8", "i64"]),
    st.builds(str.__add__, st.sampled_from(_NAME_START), st.text(_NAME_START + "0123456789", max_size=8)),
).filter(lambda s: s not in KEYWORDS)


# ---- strings ----------------------------------------------------------------------------------

_interesting_chars = st.sampled_from(list('abcXYZ019 _{}#.,:;-+*/()[]\'"\\\t\n') + ['"""', '\\"', '\\n', "é", "→"])
_plain_text = st.lists(_interesting_chars, max_size=12).map("".join)
_any_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=10)
# Multi-line text whose lines start with a non-blank character: the printer emits these as
# dedented triple-quoted strings. The indented variant must fall back to escapes.
_line = st.builds(str.__add__, st.sampled_from("aZ09#*-"), st.text("abyZ09 .,:'\\{}#*-", max_size=15)).map(str.rstrip)
_multiline = st.lists(_line, min_size=2, max_size=4).map("\n".join)
_indented = st.tuples(_line, st.lists(_line, min_size=1, max_size=3)).map(
    lambda p: p[0] + "".join("\n    " + line for line in p[1]))

strings = st.one_of(_plain_text, _plain_text, _multiline, _indented, _any_text)
docs = st.one_of(st.just(""), st.just(""), strings)


# ---- expressions ----------------------------------------------------------------------------------

BINARY_OPS = ("||", "&&", "==", "!=", "<", "<=", ">", ">=", "|", "^", "&", "<<", ">>", "+", "-", "*", "/", "%", "**")
UNARY_OPS = ("-", "~", "!")
REDUCE_OPS = ("sum", "prod", "max", "min", "and", "or", "xor")

nats = st.one_of(st.integers(0, 300), st.integers(0, 2 ** 70),
                 st.sampled_from([0, 1, 65535, 65536, 2 ** 32 - 1, 2 ** 64 - 1]))
ints = st.one_of(st.integers(-300, 300), st.integers(-(2 ** 70), 2 ** 70),
                 st.sampled_from([65535, 65536, -65536, -65537, 2 ** 63, -(2 ** 63), 2 ** 64 - 1]))

nums = ints.map(ir.Num)
float_lits = st.one_of(
    st.floats(min_value=0.0, allow_nan=False, allow_infinity=False),
    st.sampled_from([0.0, 0.5, 1.5e3, 1e16, 1e-7, 5e-324, 1.7976931348623157e308, 123456789.125]),
).map(lambda f: ir.FloatLit(repr(abs(f))))
name_exprs = names.map(ir.Name)


def _unary(op: str, operand: ir.Expr) -> ir.Expr:
    if op == "-" and isinstance(operand, ir.Num):  # the parser folds this into a literal
        return ir.Num(-operand.value)
    return ir.Unary(op, operand)


def _extend(children):
    return st.one_of(
        st.builds(ir.Index, children, children),
        st.builds(ir.Slice, children, children, children),
        st.builds(ir.Call, names, st.lists(children, max_size=3).map(tuple)),
        st.builds(ir.Reduce, st.one_of(st.sampled_from(REDUCE_OPS), names), names, children, children, children),
        st.builds(_unary, st.sampled_from(UNARY_OPS), children),
        st.builds(ir.Binary, st.sampled_from(BINARY_OPS), children, children),
        st.builds(ir.Binary, st.sampled_from(BINARY_OPS), children, children),
        st.builds(ir.Cond, children, children, children),
    )


exprs = st.recursive(st.one_of(nums, float_lits, name_exprs, name_exprs), _extend, max_leaves=8)
small_exprs = st.recursive(st.one_of(nums, name_exprs), _extend, max_leaves=4)
calls = st.builds(ir.Call, names, st.lists(small_exprs, max_size=3).map(tuple))

type_refs = st.builds(ir.TypeRef, names, st.lists(small_exprs, max_size=2).map(tuple))


# ---- statements --------------------------------------------------------------------------------------

def _lvalue_from(base: str, steps) -> ir.Expr:
    e: ir.Expr = ir.Name(base)
    for kind, a, b in steps:
        e = ir.Index(e, a) if kind == "index" else ir.Slice(e, a, b)
    return e


lvalues = st.builds(_lvalue_from, names,
                    st.lists(st.tuples(st.sampled_from(["index", "index", "slice"]), small_exprs, small_exprs),
                             max_size=2))

_simple_stmts = st.one_of(
    st.builds(ir.Let, names, st.none() | type_refs, exprs, st.booleans()),
    st.builds(ir.Assign, lvalues, exprs),
    st.builds(ir.Require, exprs, strings),
    st.builds(ir.Trap, strings),
    st.just(ir.Halt()),
    st.builds(ir.CallStmt, calls),
)


def _extend_stmts(children):
    body = st.lists(children, max_size=3).map(tuple)
    else_if = st.builds(ir.If, small_exprs, body, body).map(lambda s: (s,))
    return st.one_of(
        st.builds(ir.If, exprs, body, st.one_of(st.just(()), body, else_if)),
        st.builds(ir.For, names, small_exprs, small_exprs, body),
    )


stmts = st.recursive(_simple_stmts, _extend_stmts, max_leaves=6)
blocks = st.lists(stmts, max_size=4).map(tuple)


# ---- declarations ------------------------------------------------------------------------------------

def _tuple(strategy, min_size=0, max_size=3):
    return st.lists(strategy, min_size=min_size, max_size=max_size).map(tuple)


def _optional(strategy):
    return st.one_of(st.none(), strategy)


examples = st.one_of(
    st.builds(ir.Example, strings),
    st.builds(ir.Example, strings, blocks, _tuple(exprs), docs),
)

params = st.builds(ir.Param, names, exprs, docs, st.booleans())
constraints = st.builds(ir.Constraint, exprs, strings)

kwargs = st.builds(ir.KwArg, names, st.one_of(st.none(), nats, names))
floats = st.builds(ir.FloatFormat, names, _tuple(kwargs, 1, 4), docs)
mxs = st.builds(ir.MxFormat, names, _tuple(kwargs, 1, 4), docs)

aliases = st.builds(ir.Alias, names, st.one_of(nats, names))
regfiles = st.builds(ir.RegFile, names, small_exprs, type_refs, st.one_of(st.just(""), strings),
                     _tuple(aliases), _tuple(names, 0, 2), st.booleans(), _tuple(small_exprs), docs)
regclasses = st.builds(ir.RegClass, names, names, small_exprs, small_exprs, docs)
states = st.builds(ir.State, names, _tuple(small_exprs, 0, 2), type_refs, _optional(exprs), st.booleans(), docs)
memories = st.builds(ir.Memory, names, names, small_exprs, _optional(small_exprs), _optional(small_exprs),
                     st.booleans(), docs)

bits = st.builds(ir.Bits, nats, nats) | nats.map(lambda n: ir.Bits(n, n))
fields = st.one_of(
    st.builds(ir.Field, st.just("plain"), names, bits=bits, value=_optional(nats)),
    st.builds(ir.Field, st.just("scattered"), names, pieces=_tuple(st.builds(ir.Piece, bits, bits), 1, 4)),
    st.builds(ir.Field, st.just("fixed"), st.just(""), bits=bits, value=nats),
    st.builds(ir.Field, st.just("ignore"), st.just(""), bits=bits),
)
formats = st.one_of(
    st.builds(ir.Format, names, _optional(nats), _tuple(fields, 0, 5), st.just(False)),
    st.builds(ir.Format, names, nats, _tuple(fields, 0, 4), st.just(True)),
)
slots = st.builds(ir.Slot, names, nats, st.one_of(st.just(""), names), docs)
# Spellings that look like names but are keywords must come back (the printer has to quote them).
keyword_spellings = st.sampled_from(sorted(KEYWORDS))
enum_items = st.builds(ir.EnumItem, st.one_of(names, st.sampled_from(["v0.t", "", "a b", "1x"]), keyword_spellings,
                                              strings), nats)
enums = st.builds(ir.Enum, names, _tuple(enum_items, 1, 4), docs)

units = st.builds(ir.Unit, names, _optional(small_exprs), st.booleans(), _optional(small_exprs), st.booleans(), docs)
timings = st.builds(ir.Timing, st.one_of(st.sampled_from(["inorder", "ooo", "vliw"]), names), _tuple(units),
                    _tuple(st.builds(ir.TimingProp, names, exprs)), docs)

bindings = st.builds(ir.Binding, names, _optional(exprs))
encodings = st.builds(ir.Encoding, names, _tuple(bindings, 0, 4))

functions = st.builds(ir.Function, names, _tuple(st.builds(ir.FuncParam, names, type_refs)), type_refs, exprs, docs)

dvalues = st.one_of(strings, names, nats, names.map(lambda n: "." + n), keyword_spellings,
                    keyword_spellings.map(lambda k: "." + k), st.sampled_from(["#", "//", ";", ".", "5"]))
dialects = st.builds(
    ir.Dialect,
    _tuple(st.builds(ir.DialectOpt, names, _tuple(dvalues, 1, 3))),
    _tuple(st.builds(ir.Reloc, names, names, exprs, st.one_of(st.just(""), names))),
    docs,
)

abi_regions = st.builds(ir.AbiRegion, names, names, small_exprs, small_exprs,
                        st.one_of(st.sampled_from(["in", "out", "inout", "scratch"]), names), docs)
abi_ends = st.one_of(
    st.just(()),
    st.tuples(st.sampled_from(["halt", "return"]), names),
    st.tuples(names),
)
# preserve lists: any names, and runs of numbered ones that the printer writes as ranges (r3-r5)
numbered_runs = st.tuples(names, st.integers(0, 12), st.integers(1, 4)).map(
    lambda t: tuple(f"{t[0]}{i}" for i in range(t[1], t[1] + t[2])))
preserve_lists = st.lists(st.one_of(names.map(lambda n: (n,)), numbered_runs), max_size=3).map(
    lambda parts: tuple(n for p in parts for n in p))
abis = st.builds(ir.Abi, _optional(exprs), _tuple(names), abi_ends, _optional(st.tuples(names, exprs)),
                 preserve_lists, _tuple(abi_regions), docs)
hwloops = st.builds(ir.HwLoop, names, names, _optional(exprs), docs)


@st.composite
def isas(draw, name=None, extends=None, max_items=3) -> ir.ISA:
    """A random ISA using every declaration kind (each may also be absent).

    ``max_items`` caps how many declarations of each kind are drawn (smaller is faster).
    """
    def many(strategy, most):
        return draw(_tuple(strategy, 0, min(most, max_items)))

    section_list = tuple(draw(st.lists(st.builds(ir.Section, strings, docs), max_size=min(3, max_items),
                                       unique_by=lambda s: s.title)))
    titles = st.sampled_from([""] + [s.title for s in section_list])
    instructions = many(st.builds(
        ir.Instruction, names, strings, _optional(encodings),
        slot=st.one_of(st.just(""), names), unit=st.one_of(st.just(""), names),
        cycles=_optional(small_exprs), latency=_optional(small_exprs), semantics=blocks, doc=docs,
        examples=_tuple(examples, 0, 2), section=titles,
        warnings=_tuple(st.builds(ir.Warn, small_exprs, strings), 0, 2)), 3)
    expansions = st.tuples(_tuple(st.builds(ir.Expansion, small_exprs, _tuple(strings, 1, 3)), 0, 2),
                           st.builds(ir.Expansion, st.none(), _tuple(strings, 1, 3))).map(
        lambda p: p[0] + (p[1],))
    pseudos = many(st.builds(ir.Pseudo, names, strings, expansions, docs, _tuple(examples, 0, 2),
                             section=titles), 2)
    return ir.ISA(
        name=name if name is not None else draw(names),
        title=draw(st.one_of(st.just(""), strings)),
        extends=extends if extends is not None else draw(st.one_of(st.just(""), names)),
        version=draw(st.one_of(st.just(""), strings)),
        word=draw(_optional(nats)),
        endian=draw(st.one_of(st.just(""), st.sampled_from(["little", "big"]), names)),
        doc=draw(docs),
        params=many(params, 3),
        constraints=many(constraints, 2),
        floats=many(floats, 2),
        mxs=many(mxs, 1),
        regfiles=many(regfiles, 2),
        regclasses=many(regclasses, 2),
        states=many(states, 2),
        memories=many(memories, 2),
        formats=many(formats, 2),
        slots=many(slots, 2),
        enums=many(enums, 2),
        timing=draw(_optional(timings)),
        instructions=instructions,
        pseudos=pseudos,
        functions=many(functions, 2),
        dialect=draw(_optional(dialects)),
        abi=draw(_optional(abis)),
        hwloop=draw(_optional(hwloops)),
        examples=many(examples, 2),
        sections=section_list,
    )
