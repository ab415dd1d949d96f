"""Differential properties of the assembler's fast paths against their plain definitions."""
from hypothesis import assume, given, settings, strategies as st

from isadl.params import compile_expr, evaluate, EvalError
from kcgen.asm.assembler import _split_top

from tests.isadl import strategies as S


def _split_reference(text: str, sep: str = ","):
    """Split at separators at bracket depth 0, scanning character by character."""
    out, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif ch == sep and depth == 0:
            out.append((text[start:i], start))
            start = i + 1
    out.append((text[start:], start))
    return out


@settings(max_examples=2000, deadline=None)
@given(st.text(alphabet="ab,;()[] 1%#", max_size=24), st.sampled_from([",", ";"]))
def test_split_top_matches_the_character_scan(text, sep):
    assert _split_top(text, sep) == _split_reference(text, sep)


@settings(max_examples=500, deadline=None)
@given(S.small_exprs, st.dictionaries(st.sampled_from(["a", "b", "imm", "N"]), st.integers(-300, 300)))
def test_compiled_expressions_agree_with_the_evaluator(expr, env):
    def lookup(name):
        if name.id not in env:
            raise KeyError(name.id)
        return env[name.id]
    try:
        want = evaluate(expr, lookup)
    except (EvalError, KeyError, ValueError, OverflowError) as exc:
        want = type(exc)
    try:
        fn = compile_expr(expr)
    except EvalError:
        assume(False)  # not a constant integer expression: compile_expr refuses it up front
    try:
        got = fn(env)
    except (EvalError, KeyError, ValueError, OverflowError) as exc:
        got = type(exc)
    if want is EvalError and got is not EvalError:
        return  # the evaluator's safety limits (huge shifts/powers) are not in the fast path
    assert got == want
