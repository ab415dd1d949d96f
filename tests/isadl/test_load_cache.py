"""isadl.load caches checked Specs by content: same meaning, and edits or errors are never served stale."""
from __future__ import annotations

import pytest

import isadl
from isadl.canonical import content_hash


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("KCGEN_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache" / "isadl"


SRC = """isa c {
  param N = 4
  regs x[8]: u32
  format R { op 7:0; rd 10:8; ignore 31:11 }
  instruction INC { syntax "inc {rd:x}"; encoding R(op=1, rd); semantics { x[rd] = x[rd] + N } }
}
"""


def test_cached_spec_is_the_same_spec(cache, tmp_path):
    f = tmp_path / "c.isa"
    f.write_text(SRC)
    first = isadl.load(f)
    assert len(list(cache.glob("*.pickle"))) == 1
    again = isadl.load(f)
    assert content_hash(again) == content_hash(first) and again.params == first.params
    assert content_hash(isadl.load(f, {"N": 8})) != content_hash(first)  # overrides are part of the key


def test_an_edited_file_is_parsed_again(cache, tmp_path):
    f = tmp_path / "c.isa"
    f.write_text(SRC)
    isadl.load(f)
    f.write_text(SRC.replace("param N = 4", "param N = 5"))
    assert isadl.load(f).params["N"] == 5


def test_errors_are_not_cached(cache, tmp_path):
    f = tmp_path / "c.isa"
    f.write_text(SRC.replace("x[rd] + N", "x[rd] + M"))
    for _ in range(2):
        with pytest.raises(isadl.IsaError):
            isadl.load(f)
    assert not list(cache.glob("*.pickle"))
