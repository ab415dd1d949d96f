"""The evaluator: correct kernels pass on fresh inputs; every way of cheating or failing is caught
with the right diagnosis. Runs on the mini RV32I fixture with an int32 ReLU task."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import isadl
from kcgen import taskspec
from kcgen.evaluation import abi_layout, evaluate

ROOT = Path(__file__).resolve().parents[2]
SPEC = isadl.load(ROOT / "tests" / "isadl" / "fixtures" / "rv32i_mini.isa")
_TASK_TEXT = """
name: relu
level: 1
description: |
  y[i] = max(x[i], 0)
tensors:
  x: {role: in, shape: [N]}
  y: {role: out, shape: [N]}
configs:
  C1: {N: 16}
  C2: {N: 64}
  C3: {N: 100}
  C4: {N: 1000}
  C5: {N: 4000}
reference: relu
tolerance:
  i32: {atol: 0, rtol: 0}
targets:
  boom: {dtype: i32}
"""
TASK = taskspec.load_text(_TASK_TEXT, "<relu test>")

RELU = """
    # a0 = &x, a1 = &y, a2 = N
loop:
    beq  a2, zero, done
    lw   t0, 0(a0)
    bge  t0, zero, keep
    li   t0, 0
keep:
    sw   t0, 0(a1)
    addi a0, a0, 4
    addi a1, a1, 4
    addi a2, a2, -1
    j    loop
done:
    ebreak
"""


def run(kernel: str, config: str = "C2", **kw):
    return evaluate(kernel, SPEC, TASK, "boom", config, **kw)


def test_layout_follows_the_abi():
    lay = abi_layout(SPEC, TASK, "boom", "C2")
    assert lay.placements["x"].address == 0x1000 and lay.placements["y"].address == 0x8000
    assert lay.args == [("a0", 0x1000, "address of x"), ("a1", 0x8000, "address of y"), ("a2", 64, "N")]
    text = lay.prompt()
    assert "x: i32[64], row-major, in ram at address 0x1000" in text and "a2 = 64 (N)" in text


@pytest.mark.parametrize("config", taskspec.CONFIGS)
def test_correct_kernel_passes_every_config(config):
    r = run(RELU, config, trials=5)
    assert r.correct and r.match_rate == 1.0 and r.max_abs_err == 0, r.summary()
    assert r.profiles == ["normal", "uniform", "small", "large", "sparse"] and len(set(r.seeds)) == 5
    n = TASK.configs[config]["N"]
    assert r.instret >= 8 * n  # the loop ran over every element
    assert r.cycles >= r.instret


def test_speedup_and_roofline_are_reported():
    r = run(RELU, baseline_cycles=10_000, roofline_cycles=100)
    assert r.correct and r.speedup == pytest.approx(10_000 / r.cycles)
    assert r.roofline_fraction == pytest.approx(100 / r.cycles)
    assert "speedup" in r.summary() and "roofline 100 cycles" in r.summary()


def test_constant_writer_fails():
    kernel = RELU.replace("sw   t0, 0(a1)", "sw   zero, 0(a1)")
    r = run(kernel)
    assert not r.correct and 0 < r.match_rate < 1  # the negative inputs' zeros happen to match
    assert "do not match" in r.summary()


def test_kernel_tuned_to_one_seed_fails():
    lay = abi_layout(SPEC, TASK, "boom", "C1")
    rng = np.random.default_rng(1234)
    from kcgen.evaluation import draw
    x = draw(rng, "normal", (16,), np.dtype(np.int32))
    lines = [f"li t0, {max(int(v), 0)}\nsw t0, {4 * i}(a1)" for i, v in enumerate(x)]
    kernel = "\n".join(lines) + "\nebreak\n"
    assert lay.placements["y"].address == 0x8000
    seen = run(kernel, "C1", seed=1234, trials=1)
    assert seen.correct  # it memorised exactly that input ...
    r = run(kernel, "C1", seed=99, trials=3)
    assert not r.correct  # ... and fails on fresh ones
    r = run(kernel, "C1", seed=1234, trials=3)
    assert not r.correct  # and on the later trials of the same evaluation


def test_out_of_bounds_access_traps():
    r = run("lui t0, 0x10\nsw zero, 0(t0)\n" + RELU)
    assert not r.correct and "out of bounds: ram" in r.trap and r.trap.startswith("line 2")


def test_immediate_halt_leaves_poison():
    r = run("ebreak\n")
    assert not r.correct and r.match_rate == 0.0 and r.trap is None


def test_endless_loop_hits_the_budget():
    r = run("spin: j spin\n", max_steps=10_000)
    assert not r.correct and r.trap == "did not halt within 10000 steps"


def test_stale_outputs_from_an_earlier_evaluation_do_not_pass():
    assert run(RELU, seed=5).correct
    r = run("ebreak\n", seed=5)  # same inputs as before; the outputs are still where RELU put them?
    assert not r.correct and r.match_rate == 0.0


def test_assembly_errors_are_reported_not_raised():
    r = run("addi a0, a0, 99999\n")
    assert not r.correct and "kernel.s:1:14: error: immediate 99999 is out of range" in r.error


def test_view_rows_show_kernel_and_reference():
    r = run(RELU.replace("li   t0, 0", "li   t0, 1"), trials=1)
    assert not r.correct
    rows = r.outputs["y"].rows(0, 1)
    assert rows[0]["row"] == 0 and len(rows[0]["kernel"]) == 64 and rows[0]["mismatches"] > 0


def test_evaluator_runs_in_a_worker_process(tmp_path):
    from kcgen.evaluation import Evaluator
    task_file = tmp_path / "relu.yaml"
    task_file.write_text(_TASK_TEXT)
    with Evaluator() as ev:
        r = ev.evaluate(RELU, ROOT / "tests" / "isadl" / "fixtures" / "rv32i_mini.isa", task_file, "boom", "C2")
        assert r.correct, r.summary()
        r = ev.evaluate("ebreak\n", ROOT / "tests" / "isadl" / "fixtures" / "rv32i_mini.isa", task_file, "boom", "C2")
        assert not r.correct



def test_cli_eval(tmp_path):
    import json
    import subprocess
    import sys
    (tmp_path / "relu.yaml").write_text(_TASK_TEXT)
    (tmp_path / "k.s").write_text(RELU)
    isa = ROOT / "tests" / "isadl" / "fixtures" / "rv32i_mini.isa"
    cmd = [sys.executable, "-m", "kcgen.cli", "eval", str(isa), str(tmp_path / "relu.yaml"), str(tmp_path / "k.s"),
           "--as", "boom", "--config", "C2"]
    done = subprocess.run(cmd + ["--json", "--seed", "7"], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["correct"] and out["match_rate"] == 1.0 and out["seeds"] == list(range(7, 15)) and out["cycles"] > 0
    (tmp_path / "k.s").write_text("ebreak\n")
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 1 and "100.0% of elements do not match" in done.stdout
    done = subprocess.run(cmd[:-4] + ["--as", "plena"], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 1 and "does not apply to plena" in done.stderr


def test_a_program_image_that_overlaps_a_tensor_is_an_error():
    """amdnpu loads the program into the data memory below its tensors; a program too large for
    that room would have its code overwritten by the inputs."""
    spec = isadl.load(ROOT / "targets" / "amdnpu.isa")
    task = taskspec.find("relu")
    lay = __import__("kcgen.evaluation", fromlist=["layout_for"]).layout_for(spec, task, "amdnpu", "C1")
    first = min(p.address for p in lay.placements.values())
    big = "".join("nopa\n" for _ in range(first // 2 + 64)) + "done\n"  # more bytes than the room below the tensors
    r = evaluate(big, spec, task, "amdnpu", "C1", trials=1, seed=1)
    assert not r.correct and "overlaps tensor x" in r.error and "larger than the ABI leaves" in r.error


# ---- requantised integer outputs ------------------------------------------------------------------
from kcgen.evaluation import requantize, statement  # noqa: E402


def test_requantize_rounds_half_up_and_saturates():
    acc = np.array([2, -2, 6, -6, 5, -5, 1000, -1000, 0])
    assert requantize(acc, 2, np.dtype(np.int8)).tolist() == [1, 0, 2, -1, 1, -1, 127, -128, 0]
    # half up, not half to even: 2/4 = 0.5 -> 1 and 6/4 = 1.5 -> 2, but 10/4 = 2.5 -> 3 (even would give 2)
    assert requantize(np.array([10, -10]), 2, np.dtype(np.int8)).tolist() == [3, -2]
    assert requantize(np.array([300, -300]), 0, np.dtype(np.int8)).tolist() == [127, -128]
    with pytest.raises(ValueError, match="exact integer"):
        requantize(np.array([0.5]), 1, np.dtype(np.int8))


_RQ_TASK = taskspec.load_text(_TASK_TEXT.replace("  i32: {atol: 0, rtol: 0}", "  i32: {atol: 0, rtol: 0}\n"
                                                 "  i8: {atol: 0, rtol: 0}")
                              .replace("boom: {dtype: i32}", "boom: {dtype: i32, dtypes: {y: i8}, "
                                                            "requant: {y: 8 + log2(N) // 6}}"), "<requant test>")
# y = (max(x, 0) + 256) >> 9 (shift 9 at C2; x < 2^15, so no saturation), one byte per element
RELU_RQ = RELU.replace("keep:\n    sw   t0, 0(a1)\n    addi a0, a0, 4\n    addi a1, a1, 4\n",
                       "keep:\n    addi t0, t0, 256\n    srai t0, t0, 9\n    sb   t0, 0(a1)\n"
                       "    addi a0, a0, 4\n    addi a1, a1, 1\n")
assert RELU_RQ != RELU


def test_requantised_output_passes_with_the_stated_rounding_and_fails_truncated():
    assert _RQ_TASK.requant_shift("boom", "y", _RQ_TASK.config("boom", "C2")) == 9
    r = evaluate(RELU_RQ, SPEC, _RQ_TASK, "boom", "C2", trials=3, seed=5)
    assert r.correct, r.summary()
    truncating = RELU_RQ.replace("    addi t0, t0, 256\n", "")
    r = evaluate(truncating, SPEC, _RQ_TASK, "boom", "C2", trials=3, seed=5)
    assert not r.correct and 0 < r.match_rate < 1


def test_statement_gives_the_requant_rule():
    text = statement(_RQ_TASK, "boom", "C2", abi_layout(SPEC, _RQ_TASK, "boom", "C2"), SPEC)
    assert "y = clamp((acc + 256) >> 9, -128, 127)" in text and "rounding half up" in text
