"""The agent loop end to end on the offline scripted models (no network, no key): the session it
plays, trajectories, resuming a killed run, tool schemas and the tools' handling of bad arguments.
Model and server faults are in test_model_server.py (a scripted HTTP server, litellm's real path)."""
from __future__ import annotations

import json

import jsonschema
import pytest

from kcgen.paths import agent

A = agent()
tools_mod, models, trajectory = A.tools, A.models, A.trajectory


def settings(tmp_path, model="scripted/reference", target="boom", task="relu", **kw):
    kw.setdefault("seed", 2026)  # evaluations draw reproducible inputs
    return A.RunSettings(model=model, target=target, task=task, out=tmp_path / "run", **kw)


def records(tmp_path):
    return list(trajectory.read(tmp_path / "run" / "trajectory.jsonl"))


# ---- the whole loop ----------------------------------------------------------------------------------
@pytest.mark.parametrize("target,task", [("boom", "relu"), ("coral", "gemm"), ("plena", "softmax"), ("amdnpu", "relu")])
def test_scripted_reference_plays_a_session_to_success(tmp_path, target, task):
    summary = A.run(settings(tmp_path, target=target, task=task))
    recs = records(tmp_path)
    assert recs[0]["type"] == "meta" and recs[0]["scripted"] is True
    assert recs[-1] == {**summary, "time": recs[-1]["time"]} and recs[-1]["type"] == "summary"
    assert summary["success"], summary
    tools = [r["name"] for r in recs if r["type"] == "tool"]
    # grep the docs, write, check, evaluate (fails), look at the output, fix, evaluate (passes)
    assert tools[0] == "grep_docs" and "view_output" in tools and tools[-1] == "run_evaluation"
    evals = [r["evaluation"] for r in recs if r["type"] == "tool" and "evaluation" in r]
    assert not evals[0]["correct"] and evals[-1]["correct"]
    assert summary["turns_to_first_success"] > 1 and summary["best_cycles"] == evals[-1]["cycles"]
    assert summary["baseline_cycles"] and summary["speedup"] == pytest.approx(
        summary["baseline_cycles"] / summary["best_cycles"])
    assert (tmp_path / "run" / "best.s").read_text() == evals[-1]["code"]
    assert all(r["content"].startswith("[scripted]") for r in recs if r["type"] == "assistant")


def test_scripted_fail_never_succeeds(tmp_path):
    summary = A.run(settings(tmp_path, model="scripted/fail"))
    assert not summary["success"] and summary["best_cycles"] is None and summary["speedup"] is None
    assert summary["stop"] == "answered without a tool call" and summary["evaluations"] >= 1


def test_turn_budget_stops_the_run(tmp_path):
    summary = A.run(settings(tmp_path, max_turns=3))
    assert summary["turns"] == 3 and summary["stop"] == "turn budget spent" and not summary["success"]


def test_one_shot_shows_a_reference_kernel_of_another_task(tmp_path):
    A.run(settings(tmp_path, max_turns=1, one_shot=True))
    system = records(tmp_path)[1]["content"]
    assert "Example: a correct kernel for another task on this machine." in system
    assert "Task relu" not in system.split("Example:")[1]  # another task, not the one being solved


def test_a_finished_run_returns_its_summary_without_calling_the_model(tmp_path, monkeypatch):
    first = A.run(settings(tmp_path))
    monkeypatch.setattr(models.litellm, "completion", lambda **kw: pytest.fail("the model was called again"))
    assert A.run(settings(tmp_path)) == first


class Killed(BaseException):
    """Stands in for SIGKILL: leaves the process at an arbitrary event."""


@pytest.mark.parametrize("kill_after", [3, 6, 9])
def test_a_killed_run_resumes_without_repeating_completed_tool_calls(tmp_path, kill_after):
    seen = []

    def kill(rec):
        seen.append(rec)
        if len(seen) == kill_after:
            raise Killed

    with pytest.raises(Killed):
        A.Run(settings(tmp_path), on_event=kill).run()
    with open(tmp_path / "run" / "trajectory.jsonl", "a") as f:
        f.write('{"type": "tool", "turn": 9, "na')  # a record torn by the kill
    summary = A.run(settings(tmp_path))
    assert summary["success"]
    recs = records(tmp_path)
    calls = [r["id"] for r in recs if r["type"] == "tool"]
    assert len(calls) == len(set(calls)), "a completed tool call was repeated"
    asked = [c["id"] for r in recs if r["type"] == "assistant" for c in r["tool_calls"]]
    assert sorted(asked) == sorted(calls), "every tool call the model made has exactly one result"
    assert any(r["type"] == "resume" for r in recs)


def test_a_trajectory_of_another_run_is_not_resumed(tmp_path):
    A.run(settings(tmp_path, max_turns=1))
    with pytest.raises(A.RunError, match="is a run of task 'relu', not 'gelu'"):
        A.Run(settings(tmp_path, task="gelu"))


# ---- model errors: through litellm's HTTP path on a scripted server (test_model_server.py) ------------------
def test_secrets_never_reach_the_trajectory(tmp_path, monkeypatch):
    monkeypatch.setenv("SOME_PROVIDER_API_KEY", "verysecretvalue123")
    t = trajectory.Trajectory(tmp_path / "t.jsonl")
    t.append({"type": "x", "headers": {"Authorization": "Bearer abcdefghijklmnopqrstuvwx"},
              "note": "key verysecretvalue123 and sk-proj-abcdefghijklmnopqrstu", "api_key": "anything"})
    text = (tmp_path / "t.jsonl").read_text()
    for secret in ("verysecretvalue123", "abcdefghijklmnopqrstuvwx", "sk-proj-abcdefghijklmnopqrstu", "anything"):
        assert secret not in text
    assert json.loads(text)["type"] == "x"


# ---- tools -------------------------------------------------------------------------------------------
def test_tool_schemas_are_valid_json_schemas():
    names = set()
    for schema in tools_mod.SCHEMAS:
        fn = schema["function"]
        jsonschema.Draft202012Validator.check_schema(fn["parameters"])
        assert schema["type"] == "function" and fn["description"] and callable(getattr(tools_mod.Tools, fn["name"]))
        assert set(fn["parameters"]["required"]) <= set(fn["parameters"]["properties"])
        names.add(fn["name"])
    assert names == {"write_code", "check_syntax", "run_evaluation", "view_output", "grep_docs",
                     "get_instruction_size"}


@pytest.fixture
def boom_tools(tmp_path):
    run = A.Run(settings(tmp_path))
    yield run.tools
    run.close()


def test_tools_answer_bad_arguments_with_an_error_text(boom_tools):
    t = boom_tools
    assert t.call("nope", "{}").startswith("error: there is no tool 'nope'")
    assert t.call("write_code", "{}") == "error: write_code needs the argument 'code'"
    assert t.call("write_code", '{"code": 5}').startswith("error: write_code: 'code' must be a string")
    assert t.call("write_code", '{"code": "x", "path": "../../etc/passwd"}').startswith(
        "error: write_code takes no argument 'path'")  # the workspace is the only place it writes
    assert t.call("check_syntax", "{not json").startswith("error: the arguments are not valid JSON")
    assert t.call("check_syntax", "{}") == "error: no kernel yet: call write_code first"
    assert t.call("view_output", '{"tensor": "y"}') == "error: no evaluation yet: call run_evaluation first"
    assert t.call("view_output", '{"tensor": "y", "rows": 0}').startswith("error: view_output: 'rows' must be in 1..32")
    assert t.call("grep_docs", json.dumps({"pattern": "x" * 300})) == \
        "error: grep_docs: 'pattern' is 300 characters; at most 200 are allowed"
    assert t.call("grep_docs", '{"pattern": "x", "context": true}') == \
        "error: grep_docs: 'context' must be an integer, got a boolean"
    assert t.call("write_code", json.dumps({"code": "ret\ud800"})).startswith(
        "error: write_code: 'code' is not valid Unicode (a lone surrogate '\\ud800' at character 3)")
    assert t.failures == 0  # all of them were the model's to fix, none a failure of the harness
    assert t.call("grep_docs", '{"pattern": "("}').startswith("error: bad pattern")


def test_check_syntax_reports_located_errors_and_counts(boom_tools):
    boom_tools.call("write_code", json.dumps({"code": "    addi a0, a0, 1\n    frob a1\n    ret\n"}))
    out = boom_tools.call("check_syntax", "{}")
    assert "kernel.s:2:" in out and "error" in out and out.strip().endswith("error(s), 0 warning(s)")
    boom_tools.call("write_code", json.dumps({"code": "    ret\n"}))
    assert boom_tools.call("check_syntax", "{}") == "All checks passed. 0 error(s), 0 warning(s)"
    assert boom_tools.call("get_instruction_size", "{}").startswith("1 instructions")


def test_grep_docs_is_bounded(boom_tools):
    out = boom_tools.call("grep_docs", '{"pattern": "."}')
    assert len(out) <= tools_mod.MAX_RESULT_CHARS + 100 and "more match" in out
    slow = boom_tools.call("grep_docs", json.dumps({"pattern": "(.*a){25}$"}))
    assert slow.startswith("error:") or len(slow) < tools_mod.MAX_RESULT_CHARS + 100


def test_cli_agent_runs_and_summarises(tmp_path):
    from click.testing import CliRunner
    from kcgen.cli import main
    out = CliRunner().invoke(main, ["agent", "boom", "relu", "--model", "scripted/reference", "--out",
                                    str(tmp_path / "cli")])
    assert out.exit_code == 0, out.output
    assert "[turn 1]" in out.output and "success [scripted model]" in out.output
    assert (tmp_path / "cli" / "trajectory.jsonl").exists()
    bad = CliRunner().invoke(main, ["agent", "boom", "nosuchtask", "--model", "scripted/reference", "--out",
                                    str(tmp_path / "bad")])
    assert bad.exit_code == 2 and "error:" in bad.output
