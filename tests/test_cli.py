"""`kcgen check` / `kcgen ir` / `kcgen demo` as a user runs them."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
GOOD = """isa tiny "Tiny" {
  param N = 4
  regs r[8]: u32 { zero r0 }
  format F { op 7:0; rd 10:8; rs 13:11; imm 31:14 }
  instruction ADDI {
    syntax "addi {rd:r}, {rs:r}, {imm:u18}"
    encoding F(op=1, rd, rs, imm)
    semantics { r[rd] = r[rs] + u32(imm) + N }
  }
}
"""


def kcgen(*args, cwd=REPO):
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run([sys.executable, "-m", "kcgen", *args], capture_output=True, text=True, cwd=cwd, env=env)


@pytest.fixture
def good(tmp_path):
    p = tmp_path / "tiny.isa"
    p.write_text(GOOD)
    return p


def test_check_prints_one_summary_line(good):
    r = kcgen("check", str(good))
    assert r.returncode == 0, r.stderr
    assert r.stdout == f"{good}: tiny: 1 instructions, 0 pseudos, 1 formats, 1 params, 8 registers in 1 files\n"


def test_check_reports_located_error_and_exit_1(good, tmp_path):
    bad = tmp_path / "bad.isa"
    bad.write_text(GOOD.replace("u32(imm) + N", "u32(imm) + NN"))
    r = kcgen("check", str(good), str(bad))
    assert r.returncode == 1
    assert r.stdout.startswith(f"{good}: tiny:")  # good files still get their summary
    lines = r.stderr.splitlines()
    assert lines[0] == f"{bad}:8:44: error: unknown name 'NN'; did you mean 'N'?"
    assert lines[1] == "    semantics { r[rd] = r[rs] + u32(imm) + NN }"
    assert lines[2] == " " * 43 + "^"
    assert "Traceback" not in r.stderr


def test_missing_file_is_an_error_not_a_traceback(tmp_path):
    r = kcgen("check", str(tmp_path / "nope.isa"))
    assert r.returncode == 1
    assert "cannot read file" in r.stderr and "Traceback" not in r.stderr


def test_ir_is_canonical_json_with_overrides(good):
    r = kcgen("ir", str(good), "-D", "N=9")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["param_values"] == {"N": 9}
    h1 = kcgen("ir", str(good), "--hash").stdout.strip()
    h2 = kcgen("ir", str(good), "--hash", "-D", "N=9").stdout.strip()
    assert len(h1) == 64 and h1 != h2


@pytest.mark.parametrize("define,message", [("N", "expected NAME=VALUE"), ("N=x", "value must be an integer")])
def test_bad_define_is_a_usage_error(good, define, message):
    r = kcgen("ir", str(good), "-D", define)
    assert r.returncode == 2 and message in r.stderr


def test_unknown_target_name_lists_known_targets():
    r = kcgen("check", "no_such_target")
    assert r.returncode == 1
    assert "no such target" in r.stderr


def test_demo_checks_builds_and_runs_the_offline_benchmark(tmp_path):
    r = kcgen("demo", "--out", str(tmp_path / "demo"))
    assert r.returncode == 0, r.stderr
    assert "rv32i_mini" in r.stdout and "vliw_mini" in r.stdout and "plena_mini" in r.stdout
    # every Level-1 item at C1 on every target, played by the scripted model: all succeed
    n = sum(len([t for t in __import__("kcgen.taskspec").taskspec.all_tasks() if t.level == 1 and tg in t.targets])
            for tg in ("plena", "amdnpu", "coral", "boom"))
    assert f"{n} cells run ({n} successful, 0 errors)" in r.stdout
    for tg in ("amdnpu", "boom", "coral", "plena"):
        assert f"scripted/reference  {tg}" in r.stdout
    assert (tmp_path / "demo" / "report.html").exists() and (tmp_path / "demo" / "results.sqlite").exists()
