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


def test_cached_identity_names_the_spec_without_loading_it(cache, tmp_path):
    f = tmp_path / "c.isa"
    f.write_text(SRC)
    assert isadl.cached_identity(f) is None  # not cached yet
    spec = isadl.load(f)
    assert isadl.cached_identity(f) == ("c", content_hash(spec))
    assert isadl.cached_identity(f, {"N": 8}) is None  # another point is another entry
    (cache / next(cache.glob("*.id")).name).unlink()
    isadl.load(f)  # a pickle without its identity (an older cache) gets one on the next hit
    assert isadl.cached_identity(f) == ("c", content_hash(spec))
    f.write_text(SRC.replace("N = 4", "N = 5"))
    assert isadl.cached_identity(f) is None  # an edit is never served stale


def test_warm_kcgen_build_answers_from_the_identity(cache, tmp_path):
    import subprocess
    import sys
    from kcgen.sim.build import build, cached_directory
    f = tmp_path / "c.isa"
    f.write_text(SRC)
    spec = isadl.load(f)
    assert cached_directory(*isadl.cached_identity(f)) == build(spec).directory
    env = {**__import__("os").environ, "KCGEN_CACHE": str(cache.parent)}
    first = subprocess.run([sys.executable, "-m", "kcgen", "build", str(f)], capture_output=True, text=True, env=env)
    again = subprocess.run([sys.executable, "-m", "kcgen", "build", str(f)], capture_output=True, text=True, env=env)
    assert first.returncode == again.returncode == 0, first.stderr + again.stderr
    assert first.stdout == again.stdout == f"{build(spec).directory}\n"
