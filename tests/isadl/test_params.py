"""Parameters: evaluation order, overrides (-D), constraints, cycles, symbolic forms."""
import pytest
import sympy

import isadl
from isadl import IsaError

SRC = """
isa p {
  param MLEN = 64 "matrix tile width"
  param HLEN = 16
  param HEADS = MLEN / HLEN
  param TILE = MLEN * MLEN
  param BYTES = TILE * 9 / 8          # MX overhead 1.125 bytes per element
  param LOG = log2(MLEN) + clog2(HEADS + 1) + ceil_div(MLEN, 3) + min(HLEN, 4, 9) + max(1, 2)
  param BITS = (1 << 10) | 3 ^ 1 & 7
  param NEG = -7 / 2 + -7 % 2          # C semantics: truncation toward zero
  param TERN = MLEN > 32 ? 1 : 0
  constraint MLEN % HLEN == 0 : "MLEN must be a multiple of HLEN"
}
"""


def test_values_follow_definitions():
    p = isadl.load_text(SRC).params
    assert p["HEADS"] == 4 and p["TILE"] == 4096 and p["BYTES"] == 4608
    assert p["LOG"] == 6 + 3 + 22 + 4 + 2
    assert p["BITS"] == (1 << 10) | (3 ^ (1 & 7))
    assert p["NEG"] == -3 + -1
    assert p["TERN"] == 1


def test_override_propagates_to_dependents():
    p = isadl.load_text(SRC, defines={"MLEN": 128}).params
    assert (p["MLEN"], p["HEADS"], p["TILE"], p["BYTES"], p["TERN"]) == (128, 8, 16384, 18432, 1)


def test_override_breaking_constraint_is_reported_at_constraint():
    with pytest.raises(IsaError) as e:
        isadl.load_text(SRC, "cfg.isa", defines={"HLEN": 24})
    d = e.value.first
    assert (d.loc.line, d.loc.column) == (12, 3)
    assert d.message == "constraint failed (HLEN=24, MLEN=64): MLEN must be a multiple of HLEN"


def test_override_of_unknown_parameter():
    with pytest.raises(IsaError) as e:
        isadl.load_text(SRC, defines={"MLNE": 1})
    assert e.value.first.message == "-D MLNE: no such parameter in isa p; did you mean 'MLEN'?"


def test_cycle_names_the_whole_path():
    with pytest.raises(IsaError) as e:
        isadl.load_text("isa c {\n param A = B + 1\n param B = C * 2\n param C = A\n}\n")
    assert e.value.first.message == "parameter cycle: A -> B -> C -> A"
    assert (e.value.first.loc.line, e.value.first.loc.column) == (2, 8)


def test_override_in_extension_and_base_is_unchanged():
    text = SRC + "isa big extends p { override param MLEN = 256 }\n"
    assert isadl.load_text(text).params["HEADS"] == 16
    assert isadl.load_text(text, isa="p").params["HEADS"] == 4


def test_symbolic_form_expands_definitions():
    from isadl.params import symbolic
    spec = isadl.load_text(SRC)
    params = {p.name: p for p in spec.isa.params}
    m = sympy.Symbol("MLEN", integer=True)
    assert symbolic(params["TILE"].value, params, expand=True) == sympy.Integer(4096)
    assert symbolic(params["TILE"].value) == m * m


@pytest.mark.parametrize("expr,message", [
    ("log2(48)", "log2(48) is not an integer; use clog2() to round up"),
    ("5 / (2 - 2)", "division by zero"),
    ("1 << -1", "negative shift -1"),
    ("foo(3)", "a call is not allowed in a constant integer expression ('foo' is not one of min, max, abs, log2, "
               "clog2, ceil_div)"),
    ("1.5", "a float is not allowed in a constant integer expression"),
])
def test_bad_parameter_expressions(expr, message):
    with pytest.raises(IsaError) as e:
        isadl.load_text(f"isa q {{\n  param X = {expr}\n}}\n")
    assert e.value.first.message == message
