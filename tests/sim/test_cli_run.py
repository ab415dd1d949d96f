"""`kcgen run`: JSON result, --set/--load/--dump, exit statuses, and located errors without tracebacks."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
FIX = ROOT / "tests" / "isadl" / "fixtures"


def kcgen(*args, cwd=None):
    done = subprocess.run([sys.executable, "-m", "kcgen.cli", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd or ROOT)
    assert "Traceback" not in done.stderr, done.stderr
    return done


@pytest.fixture
def prog(tmp_path):
    def write(text: str, name: str = "p.s") -> Path:
        p = tmp_path / name
        p.write_text(text)
        return p
    return write


def test_json_result(prog):
    p = prog("li a0, -5\nli a1, 7\nadd a2, a0, a1\nsw a2, 0x100(zero)\nebreak\n")
    done = kcgen("run", FIX / "rv32i_mini.isa", p, "--json", "--dump", "ram@0x100:4")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["status"] == "halted" and out["instret"] == 5 and out["trap"] is None
    assert out["cycles"] >= 5
    assert out["regs"]["x10"] == 2**32 - 5  # raw bit pattern, unsigned
    assert out["regs"]["x12"] == 2 and out["regs"]["x0"] == 0
    assert out["dumps"]["ram@0x100:4"] == [2, 0, 0, 0]


def test_set_load_and_float_dump(prog, tmp_path):
    x = np.array([1.5, -2.25, 3.0, 0.5], dtype=np.float32)
    np.save(tmp_path / "x.npy", x)
    p = prog("S_LD_FP f1, gp0, 0\nS_LD_FP f2, gp0, 1\nS_ADD_FP f3, f1, f2\n")
    done = kcgen("run", FIX / "plena_mini.isa", p, "--json", "--load", f"fpsram@0={tmp_path / 'x.npy'}",
                 "--set", "gp5=0x10", "--dump", "fpsram@0:4")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["regs"]["gp5"] == 16
    assert out["dumps"]["fpsram@0:4"] == [1.5, -2.25, 3.0, 0.5]
    # f3 = 1.5 + -2.25 = -0.75 in bf16: its bit pattern
    assert out["regs"]["f3"] == int(np.array(-0.75, dtype=ml_dtypes.bfloat16).view(np.uint16))


def test_trap_exit_status_and_message(prog):
    p = prog("lui a1, 0x10\nlw a0, 0(a1)\nebreak\n")
    done = kcgen("run", FIX / "rv32i_mini.isa", p, "--json")
    assert done.returncode == 2
    out = json.loads(done.stdout)
    assert out["status"] == "trap" and out["trap"]["pc"] == 4 and out["trap"]["line"] == 2
    assert "out of bounds" in out["trap"]["message"]
    assert f"{p}:2: trap:" in done.stderr and "lw a0, 0(a1)" in done.stderr


def test_budget_exit_status(prog):
    done = kcgen("run", FIX / "rv32i_mini.isa", prog("loop: j loop\n"), "--max-steps", "100")
    assert done.returncode == 3 and "stopped after 100 steps" in done.stderr


def test_wall_clock_exit_status(prog):
    done = kcgen("run", FIX / "rv32i_mini.isa", prog("loop: j loop\n"), "--max-steps", str(10**15), "--seconds", "0.3",
                 "--json")
    assert done.returncode == 4 and json.loads(done.stdout)["status"] == "timeout"
    assert "wall-clock limit of 0.3 s exceeded" in done.stderr


@pytest.mark.parametrize("args, message", [
    (["--set", "a9=1"], "unknown register or state 'a9'"),
    (["--set", "a0"], "expected REG=VALUE"),
    (["--set", "a0=zz"], "'zz' is not a number"),
    (["--dump", "rom@0:4"], "unknown memory 'rom'"),
    (["--dump", "ram@0"], "expected MEM@ADDR:COUNT"),
    (["--dump", "ram@65530:16"], "ram has 65536 elements"),
    (["--load", "ram@0=/nonexistent.npy"], "cannot read /nonexistent.npy"),
])
def test_bad_options_are_errors(prog, args, message):
    done = kcgen("run", FIX / "rv32i_mini.isa", prog("ebreak\n"), *args)
    assert done.returncode == 1 and message in done.stderr, done.stderr


def test_assembly_errors_are_located(prog):
    p = prog("addi a0, a0, 5000\n")
    done = kcgen("run", FIX / "rv32i_mini.isa", p)
    assert done.returncode == 1
    assert f"{p}:1:14: error: immediate 5000 is out of range" in done.stderr
