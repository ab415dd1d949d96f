"""The negative corpus: every file in tests/isadl/bad/ is an ISA description with exactly one mistake.

In the style of QEMU decodetree's tests/decode/err_*.decode, each file is named after its error and
starts with a comment giving the first diagnostic a user must see, location and text exactly:

    # expect: 7:13: field 'rd' (4 bits) is too narrow for operand 'rd' (x, needs 5 bits)

The location is line:column (1-based) of the offending token in that file.
"""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import isadl

ROOT = Path(__file__).resolve().parents[2]
BAD_DIR = Path(__file__).resolve().parent / "bad"
BAD_FILES = sorted(BAD_DIR.glob("*.isa"))
EXPECT = re.compile(r"^# expect: (\d+):(\d+): (.+)$")
CARET = re.compile(r"^[ \t]*\^$")
MIN_FILES = 50


def expectation(path: Path) -> tuple[int, int, str]:
    """(line, column, message) from the file's `# expect:` header comment."""
    for raw in path.read_text().splitlines():
        if not raw.startswith("#"):
            break
        m = EXPECT.match(raw)
        if m:
            return int(m.group(1)), int(m.group(2)), m.group(3)
    raise AssertionError(f"{path.name}: no '# expect: LINE:COL: MESSAGE' line in the header comment")


def _id(path: Path) -> str:
    return path.stem


@pytest.mark.parametrize("path", BAD_FILES, ids=_id)
def test_first_diagnostic_is_the_expected_one(path: Path):
    line, column, message = expectation(path)
    with pytest.raises(isadl.IsaError) as info:
        isadl.load(path)
    exc = info.value
    assert exc.diagnostics, "IsaError without diagnostics"
    first = exc.diagnostics[0]
    got = (first.loc.line, first.loc.column, first.message)
    assert got == (line, column, message), f"\nexpected {line}:{column}: {message}\n     got {got[0]}:{got[1]}: {got[2]}\n\n{exc}"

    text = str(exc)
    head = f"{path}:{line}:{column}: error: "
    assert text.startswith(head + message), f"rendered report does not start with {head!r}:\n{text}"
    lines = text.splitlines()
    # The first diagnostic is followed by the offending source line and a caret under the column.
    assert len(lines) >= 3, text
    source_line = path.read_text().splitlines()[line - 1]
    assert lines[1] == source_line, text
    assert CARET.match(lines[2]), f"no caret line after the source line:\n{text}"
    assert len(lines[2]) == column, f"caret is not under column {column}:\n{text}"


def test_corpus_is_large_and_every_error_is_distinct():
    assert len(BAD_FILES) >= MIN_FILES, f"only {len(BAD_FILES)} files in {BAD_DIR}"
    seen: dict[str, str] = {}
    for path in BAD_FILES:
        _, _, message = expectation(path)
        assert message not in seen, f"{path.name} and {seen[message]} expect the same message: {message}"
        seen[message] = path.name


def _kcgen() -> list[str]:
    script = Path(sys.executable).with_name("kcgen")
    return [str(script)] if script.exists() else [sys.executable, "-m", "kcgen.cli"]


def test_cli_check_reports_every_bad_file_without_a_traceback():
    # One process for the whole corpus (the CLI starts slowly); `kcgen check` reports each file's
    # errors separately, so every file must show up with at least one located error.
    files = [str(p) for p in BAD_FILES]
    proc = subprocess.run(_kcgen() + ["check", *files], cwd=ROOT, capture_output=True, text=True, timeout=600)
    out, err = proc.stdout, proc.stderr
    assert "Traceback" not in out and "Traceback" not in err, err[-4000:]
    assert proc.returncode == 1, f"exit status {proc.returncode}\n{err[-4000:]}"
    assert "error:" in err
    error_lines = [ln for ln in err.splitlines() if ": error: " in ln]
    for f in files:
        assert any(ln.startswith(f + ":") for ln in error_lines), f"kcgen check reported no error for {f}"
        assert not any(ln.startswith(f + ":") for ln in out.splitlines()), f"kcgen check accepted {f}:\n{out}"


@pytest.mark.parametrize("name", ["syntax_error_stray_char", "field_overlap", "type_mismatch"])
def test_cli_check_single_file_exit_status(name: str):
    path = BAD_DIR / f"{name}.isa"
    proc = subprocess.run(_kcgen() + ["check", str(path)], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stderr
    assert "error:" in proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    line, column, message = expectation(path)
    assert proc.stderr.startswith(f"{path}:{line}:{column}: error: {message}"), proc.stderr
