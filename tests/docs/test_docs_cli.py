"""`kcgen docs` and `kcgen grep` as a user runs them."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from kcgen.cli import main

REPO = Path(__file__).resolve().parent.parent.parent
RV = str(REPO / "tests" / "isadl" / "fixtures" / "rv32i_mini.isa")


def run(*args, cwd=None):
    runner = CliRunner()
    if cwd is None:
        return runner.invoke(main, list(args))
    old = os.getcwd()
    os.chdir(cwd)
    try:
        return runner.invoke(main, list(args))
    finally:
        os.chdir(old)


def test_docs_writes_all_formats_into_default_dir(tmp_path):
    r = run("docs", RV, cwd=tmp_path)
    assert r.exit_code == 0, r.output
    paths = r.stdout.splitlines()
    assert paths == [str(Path("rv32i_mini-docs") / n) for n in ("rv32i_mini.md", "rv32i_mini.html", "index.txt")]
    for p in paths:
        assert (tmp_path / p).stat().st_size > 1000


def test_docs_output_dir_format_and_defines(tmp_path):
    out = tmp_path / "d"
    r = run("docs", RV, "-o", str(out), "--format", "txt", "-D", "MEM_BYTES=0x20000")
    assert r.exit_code == 0, r.output
    assert r.stdout.splitlines() == [str(out / "index.txt")]
    assert sorted(p.name for p in out.iterdir()) == ["index.txt"]
    assert "VALUE: 131072 (0x20000)" in (out / "index.txt").read_text()
    r = run("docs", RV, "-o", str(out), "--format", "md", "--format", "html")
    assert [Path(p).name for p in r.stdout.splitlines()] == ["rv32i_mini.md", "rv32i_mini.html"]


def test_docs_errors(tmp_path):
    r = run("docs", str(tmp_path / "nope.isa"))
    assert r.exit_code == 1 and "cannot read file" in r.stderr
    r = run("docs", RV, "-D", "NOPE=1", "-o", str(tmp_path / "x"))
    assert r.exit_code == 1 and "no such parameter" in r.stderr and not (tmp_path / "x").exists()
    r = run("docs", RV, "--format", "pdf")
    assert r.exit_code == 2


def test_grep_exit_codes_and_output():
    r = run("grep", RV, "^INSTRUCTION: BEQ$")
    assert r.exit_code == 0 and r.stdout.startswith("INSTRUCTION: BEQ\n") and "\nSEMANTICS:\n" in r.stdout
    r = run("grep", RV, "no-such-text-anywhere")
    assert r.exit_code == 1 and r.stdout == ""
    r = run("grep", RV, "foo(")
    assert r.exit_code == 2 and r.stdout == ""
    assert r.stderr.startswith("error: bad pattern 'foo(': missing ), unterminated subpattern")
    r = run("grep", RV, "^instruction: beq$", "-i")
    assert r.exit_code == 0 and r.stdout.startswith("INSTRUCTION: BEQ\n")
    r = run("grep", RV, "^INSTRUCTION: BNE$", "--context", "1")
    assert r.exit_code == 0 and r.stdout.index("INSTRUCTION: BEQ\n") < r.stdout.index("INSTRUCTION: BNE\n") \
        < r.stdout.index("INSTRUCTION: BLT\n")
    r = run("grep", RV, "^INSTRUCTION:", "-m", "2")
    records = [b for b in r.stdout.split("\n\n") if b.startswith("INSTRUCTION:")]
    assert r.exit_code == 0 and len(records) == 2 and "more matches]" in r.stdout
    r = run("grep", RV, "^PARAM: MEM_BYTES", "-D", "MEM_BYTES=0x20000")
    assert "VALUE: 131072" in r.stdout
    r = run("grep", "/no/such/file.isa", "x")
    assert r.exit_code == 2 and "cannot read file" in r.stderr


def test_console_entry_point(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(REPO))
    r = subprocess.run([sys.executable, "-m", "kcgen", "grep", RV, "^UNIT: branch$"], capture_output=True,
                       text=True, env=env, cwd=tmp_path)
    assert r.returncode == 0 and "INSTRUCTION: JAL\n" in r.stdout
