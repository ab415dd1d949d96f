"""Round trips: ``parse(print(ir)) == ir`` for random IR, and print(parse(text)) for real sources."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from isadl import ir
from isadl.diagnostics import IsaError
from isadl.parser import parse_file, parse_text
from isadl.printer import print_isa

try:
    from tests.isadl import strategies as S
except ImportError:  # pytest's rootdir-relative import (tests/isadl on sys.path)
    import strategies as S

ROOT = Path(__file__).resolve().parents[2]
SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _show(text: str) -> str:
    return "\n".join(f"{i:4} | {line}" for i, line in enumerate(text.split("\n"), 1))


def _reparse(text: str) -> tuple[ir.ISA, ...]:
    try:
        return parse_text(text, "<printed>")
    except IsaError as exc:
        raise AssertionError(f"printed text does not parse:\n{exc}\n{_show(text)}") from None


# ---- properties over generated IR ------------------------------------------------------------

@SETTINGS
@given(S.isas())
def test_print_then_parse_gives_back_the_ir_and_print_is_a_fixed_point(isa):
    # (one test for both properties: generating the ISAs is the expensive part)
    text = print_isa(isa)
    reparsed = _reparse(text)
    assert reparsed == (isa,), "parse(print(isa)) != isa:\n" + _show(text)
    assert print_isa(reparsed[0]) == text, "print(parse(print(isa))) != print(isa):\n" + _show(text)


@settings(max_examples=50, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.lists(S.isas(max_items=1), min_size=1, max_size=3))
def test_several_isa_blocks_in_one_file(isas):
    text = "".join(print_isa(i) for i in isas)
    assert _reparse(text) == tuple(isas), _show(text)


def _expr_isa(e: ir.Expr) -> ir.ISA:
    return ir.ISA("t", params=(ir.Param("p", e),))


@settings(max_examples=500, deadline=None)
@given(S.exprs)
def test_expressions_round_trip(e):
    """A denser search over expressions alone (precedence, parentheses, literal folding)."""
    text = print_isa(_expr_isa(e))
    assert _reparse(text) == (_expr_isa(e),), _show(text)


@settings(max_examples=300, deadline=None)
@given(S.blocks)
def test_statements_round_trip(body):
    isa = ir.ISA("t", instructions=(ir.Instruction("i", "i", None, semantics=body),))
    text = print_isa(isa)
    assert _reparse(text) == (isa,), _show(text)


@settings(max_examples=300, deadline=None)
@given(S.strings)
def test_strings_round_trip(s):
    isa = ir.ISA("t", title=s, doc=s, params=(ir.Param("p", ir.Num(1), s),))
    text = print_isa(isa)
    assert _reparse(text) == (isa,), _show(text)


def test_keyword_spelled_enum_items_and_dialect_values_round_trip():
    """Enum items and dialect values are strings; one spelled like a keyword must come back."""
    broken, texts = [], []
    for word in sorted(S.KEYWORDS):
        isa = ir.ISA("t", enums=(ir.Enum("e", (ir.EnumItem(word, 0),)),),
                     dialect=ir.Dialect((ir.DialectOpt("labels", (word, "." + word)),), ()))
        try:
            ok = parse_text(print_isa(isa)) == (isa,)
        except IsaError:
            ok = False
        if not ok:
            broken.append(word)
            texts.append(print_isa(isa))
    assert not broken, f"these spellings do not round trip: {broken}; the first:\n" + _show(texts[0])


# ---- real sources: every .isa file under tests/ and targets/, and the language reference ---------

def _isa_files() -> list[Path]:
    found = sorted({p for top in ("tests", "targets") for p in (ROOT / top).glob("**/*.isa")})
    return found


_FILES = _isa_files()


@pytest.mark.parametrize("path", _FILES or [None], ids=lambda p: str(p.relative_to(ROOT)) if p else "none")
def test_isa_files_round_trip(path):
    if path is None:
        pytest.skip("no .isa files under tests/ or targets/ yet")
    try:
        parsed = parse_file(path)
    except IsaError as exc:  # negative fixtures for the checker may be syntactically invalid on purpose
        pytest.skip(f"{path.name} does not parse (negative fixture?): {exc.first.message}")
    text = "".join(print_isa(i) for i in parsed)
    assert _reparse(text) == parsed, _show(text)
    assert "".join(print_isa(i) for i in _reparse(text)) == text


def test_language_reference_example_round_trips():
    doc = ROOT / "docs" / "isadl.md"
    if not doc.exists():
        pytest.skip("docs/isadl.md does not exist yet")
    m = re.search(r"^```isadl[ \t]*\n(.*?)^```", doc.read_text(), re.S | re.M)
    if not m:
        pytest.skip("docs/isadl.md has no ```isadl block")
    parsed = parse_text(m.group(1), "docs/isadl.md")
    text = "".join(print_isa(i) for i in parsed)
    assert _reparse(text) == parsed, _show(text)
