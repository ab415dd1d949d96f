"""grep over the text index: whole records, context, case, bounds, bad patterns."""
from __future__ import annotations

import re

import pytest

import kcgen.docs as docs
from kcgen.docs import search


@pytest.fixture(scope="module")
def index():
    import isadl
    from pathlib import Path
    path = Path(__file__).resolve().parent.parent / "isadl" / "fixtures" / "rv32i_mini.isa"
    return docs.render_index(isadl.load(path))


def _blocks(out: str) -> list[str]:
    return [b for b in out.rstrip("\n").split("\n\n") if b]


def test_returns_whole_records(index):
    recs = index.rstrip("\n").split("\n\n")
    out = docs.grep(index, r"x\[rs1\] & imm")  # a semantics line inside ANDI
    blocks = _blocks(out)
    assert len(blocks) == 1 and blocks[0] in recs
    assert blocks[0].startswith("INSTRUCTION: ANDI\n") and "\nDOC: " in blocks[0]
    out = docs.grep(index, r"^UNIT: mem$")
    blocks = _blocks(out)
    assert all(b in recs for b in blocks)
    assert [b.split("\n")[0] for b in blocks] == \
        ["INSTRUCTION: " + n for n in ("LB", "LH", "LW", "LBU", "LHU", "SB", "SH", "SW")]


def test_context_adds_neighbouring_records(index):
    recs = index.rstrip("\n").split("\n\n")
    i = next(k for k, r in enumerate(recs) if r.startswith("INSTRUCTION: BNE\n"))
    out = docs.grep(index, r"^INSTRUCTION: BNE$", context=1)
    assert _blocks(out) == recs[i - 1:i + 2]
    out2 = docs.grep(index, r"^INSTRUCTION: BNE$", context=2)
    assert _blocks(out2) == recs[i - 2:i + 3]
    # two separate groups are separated by a -- line
    out3 = docs.grep(index, r"^INSTRUCTION: (BNE|SW)$", context=1)
    assert "\n\n--\n\n" in out3 and out3.count("INSTRUCTION: BNE\n") == 1


def test_ignore_case(index):
    assert docs.grep(index, r"^instruction: beq$") == ""
    out = docs.grep(index, r"^instruction: beq$", ignore_case=True)
    assert _blocks(out)[0].startswith("INSTRUCTION: BEQ\n")


def test_bounded_output(index):
    total = len(re.findall(r"^INSTRUCTION: ", index, re.M))
    out = docs.grep(index, r"^INSTRUCTION: ", max_matches=3)
    blocks = _blocks(out)
    assert len(blocks) == 4 and blocks[-1] == f"[… {total - 3} more matches]\n{search.NARROW}"
    out = docs.grep(index, r"^INSTRUCTION: ", max_chars=1500)
    shown = sum(b.startswith("INSTRUCTION: ") for b in _blocks(out))
    assert 1 <= shown < total and len(out) <= 1500 + 40 + len(search.NARROW)
    assert out.rstrip().endswith(f"[… {total - shown} more matches]\n{search.NARROW}")
    one = docs.grep(index, r"^INSTRUCTION: ", max_chars=50)  # one record bigger than the bound
    assert len(one) < 50 + 80 + len(search.NARROW) and "truncated" in one and "more matches]" in one
    alone = docs.grep(index, r"^INSTRUCTION: ADDI$", max_chars=50)  # the only match, cut: still told how to narrow
    assert "truncated" in alone and alone.rstrip().endswith(search.NARROW)


def test_instruction_pages_come_before_other_records(index):
    recs = index.rstrip("\n").split("\n\n")
    assert recs[0].startswith("ISA: ")  # the overview record comes first in the index
    word = "add"
    heads = [b.split("\n")[0] for b in _blocks(docs.grep(index, "^ISA: |" + word, ignore_case=True,
                                                           max_chars=10 ** 6))]
    pages = [i for i, h in enumerate(heads) if h.startswith(("INSTRUCTION: ", "PSEUDO: "))]
    others = [i for i, h in enumerate(heads) if not h.startswith(("INSTRUCTION: ", "PSEUDO: ", "["))]
    assert pages and others and max(pages) < min(others)
    # among the pages, those whose title matches come first
    titled = [word.lower() in h.lower() for h in heads if h.startswith(("INSTRUCTION: ", "PSEUDO: "))]
    assert titled == sorted(titled, reverse=True)


def test_a_large_record_does_not_hide_smaller_matches(index):
    recs = index.rstrip("\n").split("\n\n")
    small = [r for r in recs if r.startswith("INSTRUCTION: ") and "x[rs1]" in r]
    bound = max(len(r) for r in small) + 10
    big = "BIG: x[rs1]\n" + "filler line\n" * (bound // 6)  # a match larger than the bound, ranked first
    out = docs.grep(big + "\n\n" + index, r"x\[rs1\]", max_chars=bound * 3)
    assert out.startswith("INSTRUCTION: ") and "BIG: " not in out


def test_no_match_and_bad_patterns(index):
    assert docs.grep(index, "no-such-thing-anywhere") == ""
    with pytest.raises(ValueError, match=r"^bad pattern 'foo\(': missing \)"):
        docs.grep(index, "foo(")
    with pytest.raises(ValueError, match="bad pattern"):
        docs.grep(index, "[a-")
