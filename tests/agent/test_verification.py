"""The final verification of an agent run (issue 17, items 3, 5 and 6): the best kernel is evaluated
again on >= 10 fresh trials over every value profile, on OS seeds the model never sees, and that
verdict alone is the run's success; the run's evaluation seed comes from the OS and is recorded;
suspicious results are flagged in the summary, never hidden or altered, and never shown to the model."""
from __future__ import annotations

import json

import pytest

from kcgen import kernels, taskspec, verify
from kcgen.paths import agent

A = agent()
models, trajectory = A.models, A.trajectory

RELU = """        .text
        .globl relu
relu:
        beqz    a2, 2f
        fmv.w.x ft1, zero
{clamp_setup}
1:      flw     ft0, 0(a0)
        fmax.s  ft0, ft0, ft1
{clamp}
        fsw     ft0, 0(a1)
        addi    a0, a0, 4
        addi    a1, a1, 4
        addi    a2, a2, -1
        bnez    a2, 1b
2:      ret
"""
GOOD = RELU.format(clamp_setup="", clamp="")
# wrong for every x > 8: passes the normal, uniform and small profiles, fails large and extremes
LUCKY = RELU.format(clamp_setup="        li      t0, 0x41000000\n        fmv.w.x ft2, t0",
                    clamp="        fmin.s  ft0, ft0, ft2")


def play(kernel: str, seen: list | None = None):
    """A stand-in for models.complete: writes `kernel`, evaluates it, then answers without a tool call."""
    def complete(model, messages, tools, **kw):
        if seen is not None:
            seen.append(json.dumps(messages))
        turn = sum(m["role"] == "assistant" for m in messages)
        calls = [("write_code", {"code": kernel}), ("run_evaluation", {})]
        if turn < len(calls):
            name, args = calls[turn]
            return models.Reply(f"step {turn}", [{"id": f"c{turn}", "name": name, "arguments": json.dumps(args)}])
        return models.Reply("done", [])
    return complete


def settings(tmp_path, model="hosted_vllm/player", task="relu", **kw):
    return A.RunSettings(model=model, target="boom", task=task, out=tmp_path / "run", **kw)


def records(tmp_path):
    return list(trajectory.read(tmp_path / "run" / "trajectory.jsonl"))


def test_verification_trials_cover_every_profile_at_least_ten_times_over():
    task = taskspec.find("relu")
    n = verify.verification_trials(task)
    assert n >= verify.MIN_TRIALS and n % len(task.profiles) == 0
    assert len({verify.fresh_seed() for _ in range(8)}) > 1  # from the OS, not a constant


def test_a_lucky_kernel_is_not_a_success(tmp_path, monkeypatch):
    """In-loop evaluations restricted to one trial (the normal profile) pass a relu that is wrong for
    x > 8; the final verification draws every profile and fails it."""
    monkeypatch.setattr(models, "complete", play(LUCKY))
    summary = A.run(settings(tmp_path, trials=1))
    evals = [r["evaluation"] for r in records(tmp_path) if r["type"] == "tool" and "evaluation" in r]
    assert evals and evals[-1]["correct"], "the in-loop evaluation should pass by luck"
    assert summary["loop_best_cycles"] == evals[-1]["cycles"]
    assert not summary["success"] and not summary["verified"]
    assert summary["best_cycles"] is None and summary["speedup"] is None and summary["turns_to_first_success"] is None
    check = summary["verification"]
    assert not check["correct"] and len(check["seeds"]) >= 10
    assert set(check["profiles"]) == set(taskspec.find("relu").profiles)


def test_a_correct_kernel_is_verified_on_seeds_the_model_never_sees(tmp_path, monkeypatch):
    seen = []
    monkeypatch.setattr(models, "complete", play(GOOD, seen))
    summary = A.run(settings(tmp_path))
    assert summary["success"] and summary["verified"]
    check = summary["verification"]
    task = taskspec.find("relu")
    assert check["correct"] and check["trials"] == verify.verification_trials(task) == len(check["seeds"])
    assert set(check["profiles"]) == set(task.profiles) and len(check["profiles"]) >= 10
    assert summary["best_cycles"] == check["cycles"] and summary["speedup"] == pytest.approx(
        summary["baseline_cycles"] / check["cycles"])
    # the verification's seeds are in the summary only: not in the conversation, nor any other record
    others = json.dumps([{k: v for k, v in r.items() if k != "time"} for r in records(tmp_path)
                         if r["type"] != "summary"]) + "".join(seen)
    for seed in check["seeds"]:
        assert str(seed) not in others
    # the loop's evaluations drew from an OS seed, recorded in meta and summary
    meta = records(tmp_path)[0]
    assert meta["seed_source"] == "os" and meta["settings"]["seed"] == summary["seed"] is not None
    assert summary["seed_source"] == "os"
    # a finished, verified run returns its summary again without verifying again
    monkeypatch.setattr(A.Run, "_verify", lambda self, code: pytest.fail("verified twice"))
    assert A.run(settings(tmp_path)) == summary


def test_two_runs_draw_different_seeds_and_a_given_seed_is_kept(tmp_path, monkeypatch):
    monkeypatch.setattr(models, "complete", play(GOOD))
    a = A.run(A.RunSettings(model="hosted_vllm/player", target="boom", task="relu", out=tmp_path / "a"))
    b = A.run(A.RunSettings(model="hosted_vllm/player", target="boom", task="relu", out=tmp_path / "b"))
    assert a["seed"] != b["seed"] and a["verification"]["seeds"] != b["verification"]["seeds"]
    c = A.run(A.RunSettings(model="hosted_vllm/player", target="boom", task="relu", out=tmp_path / "c", seed=77))
    assert c["seed"] == 77 and c["seed_source"] == "given"
    ev = next(r["evaluation"] for r in trajectory.read(tmp_path / "c" / "trajectory.jsonl") if "evaluation" in r)
    assert ev["seeds"][0] == 77  # evaluation 0 draws from the seed itself (reproducible with kcgen eval --seed)


def test_a_summary_without_verification_is_verified_on_resume(tmp_path, monkeypatch):
    monkeypatch.setattr(models, "complete", play(GOOD))
    A.run(settings(tmp_path))
    path = tmp_path / "run" / "trajectory.jsonl"
    lines = path.read_text().splitlines()
    old = json.loads(lines[-1])
    for key in ("verified", "verification", "loop_best_cycles", "suspicious", "seed", "seed_source"):
        old.pop(key)
    lines = [l for l in lines[:-1] if json.loads(l)["type"] != "end"] + [json.dumps(old)]  # as an older kcgen wrote it
    path.write_text("\n".join(lines) + "\n")
    monkeypatch.setattr(models, "complete", lambda *a, **k: pytest.fail("the model was called again"))
    summary = A.run(settings(tmp_path))
    assert summary["verified"] and summary["success"] and summary["verification"]["seeds"]
    recs = records(tmp_path)
    assert recs[-1]["type"] == "summary" and recs[-1]["verified"]
    assert any(r["type"] == "resume" and r.get("verify_only") for r in recs)


class Killed(BaseException):
    """Stands in for SIGKILL."""


def test_a_run_killed_before_its_verification_verifies_on_resume(tmp_path, monkeypatch):
    monkeypatch.setattr(models, "complete", play(GOOD))

    def kill(rec):
        if rec["type"] == "end":
            raise Killed
    with pytest.raises(Killed):
        A.Run(settings(tmp_path), on_event=kill).run()
    assert not any(r["type"] == "summary" for r in records(tmp_path))
    monkeypatch.setattr(models, "complete", lambda *a, **k: pytest.fail("the model was called again"))
    summary = A.run(settings(tmp_path))
    assert summary["verified"] and summary["stop"] == "answered without a tool call"


def test_scripted_reference_is_verified_and_counted(tmp_path):
    summary = A.run(A.RunSettings(model="scripted/reference", target="boom", task="relu", out=tmp_path / "run"))
    assert summary["success"] and summary["verified"] and summary["best_cycles"] == summary["verification"]["cycles"]
    assert summary["suspicious"] == []  # the reference kernel itself is never suspicious of itself


# ---- suspicious results ----------------------------------------------------------------------------------
def test_flags_rule():
    assert verify.flags(100, 140, 50) == []
    assert "faster than the item's reference kernel" in verify.flags(100, 151, 50)[0]
    assert "below the roofline bound" in verify.flags(100, None, 101)[0]
    assert "of the roofline bound" in verify.flags(100, None, 95)[0]
    assert "of the roofline bound" in verify.flags(100, 105, 95)[0]  # near the bound and beyond the reference
    assert verify.flags(100, 100, 99) == []  # as near the bound as the reference: nothing new
    assert verify.flags(None, 100, 99) == []


class InProcessEvaluator:
    """Runs the evaluator's worker function in this process (so monkeypatches reach it)."""

    def evaluate(self, kernel, isa_path, task_path, target, config="C1", defines=None, timeout=None, **kw):
        from kcgen.evaluation import _worker_evaluate
        return _worker_evaluate(str(isa_path), (), str(task_path), target, config, kernel, kw)

    def close(self, kill=False):
        pass


def test_evaluate_item_flags_but_never_alters(monkeypatch):
    import isadl
    from kcgen.evaluation import evaluate_item
    from kcgen.paths import TARGETS
    spec, task = isadl.load(TARGETS / "boom.isa"), taskspec.find("relu")
    plain = evaluate_item(GOOD, spec, task, "boom", "C1", seed=5)
    assert plain.correct and plain.suspicious == [] and plain.as_json()["suspicious"] == []
    monkeypatch.setattr(kernels, "reference_cycles", lambda *a, **k: 2 * plain.cycles)
    fast = evaluate_item(GOOD, spec, task, "boom", "C1", seed=5)
    assert fast.cycles == plain.cycles and fast.speedup == plain.speedup and fast.correct
    assert len(fast.suspicious) == 1 and "2.00x faster than the item's reference kernel" in fast.suspicious[0]
    assert fast.as_json()["suspicious"] == fast.suspicious and "suspicious" in fast.summary()
    assert "suspicious" not in fast.summary(flags=False)
    near = evaluate_item(GOOD, spec, task, "boom", "C1", seed=5, roofline_cycles=plain.cycles - 1)
    assert any("of the roofline bound" in f for f in near.suspicious) and near.cycles == plain.cycles
    wrong = evaluate_item(LUCKY, spec, task, "boom", "C1", seed=5)
    assert not wrong.correct and wrong.suspicious == []  # only a correct kernel is flagged


def test_the_summary_carries_the_flags_and_the_model_never_sees_them(tmp_path, monkeypatch):
    monkeypatch.setattr(kernels, "reference_cycles", lambda *a, **k: 10 ** 6)
    seen = []
    monkeypatch.setattr(models, "complete", play(GOOD, seen))
    summary = A.Run(settings(tmp_path), evaluator=InProcessEvaluator()).run()
    assert summary["verified"] and summary["suspicious"] == summary["verification"]["suspicious"]
    assert "faster than the item's reference kernel" in summary["suspicious"][0]
    assert summary["best_cycles"] == summary["verification"]["cycles"]  # flagged, not altered
    tool_text = " ".join(r["result"] for r in records(tmp_path) if r["type"] == "tool")
    assert "suspicious" not in tool_text and "suspicious" not in "".join(seen)
