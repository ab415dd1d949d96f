"""The agent against a scripted OpenAI-compatible HTTP server (tests/agent/fakeserver.py, 127.0.0.1
only) through litellm's real HTTP path: the faults real servers and small models produce. The
server checks every request the way vLLM does (each replayed call's arguments must parse as JSON,
each call must have its result), so a history a real server would refuse fails the test.
Every scenario ends with a summary that says why, and no traceback."""
from __future__ import annotations

import json
import time

import pytest

from kcgen.paths import agent

from .fakeserver import Answer, FakeServer, reply

A = agent()
trajectory = A.trajectory
KEY = "sk-test-abcdefghijklmnopqrstuvwx0123"  # what the client sends; must never be written


@pytest.fixture(autouse=True)
def key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)


def strict(entry):
    """A script entry behind vLLM's checks of the request: 400 for a replayed call whose arguments
    are not JSON, or a call without its result (both end a real run)."""
    def answer(body, index):
        msgs = body["messages"]
        for i, m in enumerate(msgs):
            for c in m.get("tool_calls") or []:
                try:
                    json.loads(c["function"]["arguments"])
                except ValueError:
                    return Answer(400, {"error": {"message": "tool call arguments are not valid JSON"}})
                following = [x.get("tool_call_id") for x in msgs[i + 1:i + 1 + len(m["tool_calls"])]]
                if c["id"] not in following:
                    return Answer(400, {"error": {"message": f"tool call {c['id']} has no result"}})
        return entry(body, index) if callable(entry) else entry
    return answer


def by_turn(*replies):
    """A script that answers turn k (one more than the assistant messages in the request) with
    replies[k-1], whichever server or process asks: a resumed run continues the same script."""
    def answer(body, index):
        k = sum(m["role"] == "assistant" for m in body["messages"])
        return replies[k] if k < len(replies) else reply("[done]")
    return strict(answer)


def settings(tmp_path, srv, **kw):
    kw.setdefault("seed", 7)
    kw.setdefault("backoff", 0.01)
    kw.setdefault("attempts", 3)
    kw.setdefault("timeout", 5.0)
    return A.RunSettings(model="openai/test-model", target="boom", task="relu", out=tmp_path / "run",
                         api_base=srv.url, **kw)


def records(tmp_path):
    return list(trajectory.read(tmp_path / "run" / "trajectory.jsonl"))


def text(tmp_path):
    return (tmp_path / "run" / "trajectory.jsonl").read_text(encoding="utf-8")


def reference_kernel() -> str:
    import isadl
    from kcgen import kernels, taskspec
    from kcgen.evaluation import layout_for
    from kcgen.paths import TARGETS
    spec, task = isadl.load(TARGETS / "boom.isa"), taskspec.find("relu")
    return kernels.find("reference", spec, task, "boom", "C1", layout_for(spec, task, "boom", "C1")).text


def assert_consistent(recs):
    """No duplicated or lost turn; each call of each turn has exactly one result."""
    turns = [r["turn"] for r in recs if r["type"] == "assistant"]
    assert turns == list(range(1, len(turns) + 1)), turns
    calls = {(r["turn"], i) for r in recs if r["type"] == "assistant" for i in range(len(r["tool_calls"]))}
    done = [(r["turn"], r["index"]) for r in recs if r["type"] == "tool"]
    assert sorted(done) == sorted(calls), (done, calls)
    assert recs[-1]["type"] == "summary"


# ---- a good run, with what a local server sends ---------------------------------------------------------
def test_a_run_against_an_http_server_succeeds_with_parallel_calls_and_reasoning(tmp_path):
    code = reference_kernel()
    script = [reply("Writing, checking and evaluating at once.", reasoning="relu is max(x, 0) ...",
                    calls=[("write_code", {"code": code}), ("check_syntax", {}), ("run_evaluation", {})]),
              reply("Done.")]
    with FakeServer([strict(e) for e in script]) as srv:
        summary = A.run(settings(tmp_path, srv))
    assert summary["success"] and summary["best_cycles"] > 0 and summary["stop"] == "answered without a tool call"
    assert not summary["infrastructure_error"] and summary["retries"] == 0
    second = srv.requests[1]["messages"]
    assert [m["role"] for m in second[-4:]] == ["assistant", "tool", "tool", "tool"]
    assert [m["tool_call_id"] for m in second[-3:]] == ["call_0", "call_1", "call_2"]
    assert "All checks passed" in second[-2]["content"] and "100% of elements match" in second[-1]["content"]
    assert srv.requests[0]["max_tokens"] == A.models.DEFAULT_MAX_TOKENS
    first = next(r for r in records(tmp_path) if r["type"] == "assistant")
    assert first["reasoning"] == "relu is max(x, 0) ..." and first["finish_reason"] == "tool_calls"
    assert srv.headers[0].get("authorization") == f"Bearer {KEY}" and KEY not in text(tmp_path)


# ---- resume keyed on (turn, call index) -------------------------------------------------------------
class Killed(BaseException):
    pass


def test_resume_with_ids_repeated_every_turn_runs_the_pending_calls(tmp_path):
    script = by_turn(reply("Look first.", calls=[("grep_docs", {"pattern": "addi"})]),  # id call_0
                     reply("Write and check.", calls=[("write_code", {"code": "    ret\n"}), ("check_syntax", {})]))
    seen = []

    def kill(rec):
        seen.append(rec)
        if rec["type"] == "assistant" and rec["turn"] == 2:
            raise Killed  # turn 2's call_0 and call_1 never ran; turn 1 also had a call_0

    with FakeServer([script] * 2) as srv:
        with pytest.raises(Killed):
            A.Run(settings(tmp_path, srv), on_event=kill).run()
    with FakeServer([script] * 3) as srv:
        summary = A.run(settings(tmp_path, srv))
    recs = records(tmp_path)
    assert_consistent(recs)
    turn2 = [r for r in recs if r["type"] == "tool" and r["turn"] == 2]
    assert [r["name"] for r in turn2] == ["write_code", "check_syntax"] and "All checks passed" in turn2[1]["result"]
    assert summary["stop"] == "answered without a tool call" and summary["turns"] == 3
    assert srv.requests[0]["messages"][-1]["content"].startswith("All checks passed")


# ---- what small models send --------------------------------------------------------------------------
def test_malformed_truncated_and_object_arguments_are_told_and_replayed_as_valid_json(tmp_path):
    script = by_turn(
        reply(calls=[("write_code", '{"code": "    addi a0, a0')], raw_arguments=True, finish_reason="length"),
        reply(calls=[("check_syntax", "{oops")], raw_arguments=True),
        reply(calls=[("grep_docs", {"pattern": "addi"})], raw_arguments=True))  # an object, not a JSON text
    with FakeServer([script] * 4) as srv:
        summary = A.run(settings(tmp_path, srv))
    assert summary["stop"] == "answered without a tool call" and summary["tool_failures"] == 0
    tools = [r for r in records(tmp_path) if r["type"] == "tool"]
    assert tools[0]["result"].startswith("error: the arguments are not valid JSON")
    assert "cut off at the output limit" in tools[0]["result"] and "send it again" in tools[0]["result"]
    assert tools[1]["result"].startswith("error: the arguments are not valid JSON") and "cut off" not in tools[1]["result"]
    assert not tools[2]["result"].startswith("error") and "addi" in tools[2]["result"].lower()
    assert tools[0]["arguments"] == '{"code": "    addi a0, a0'  # the trajectory keeps what was sent
    last = srv.requests[-1]["messages"]
    replayed = [c["function"]["arguments"] for m in last for c in m.get("tool_calls") or []]
    assert replayed[:2] == ["{}", "{}"] and json.loads(replayed[2]) == {"pattern": "addi"}
    assert len(srv.requests) == 4  # the strict server refused nothing (a 400 would have ended the run)


def test_a_reply_cut_by_the_token_limit_is_recorded_and_continued(tmp_path):
    script = by_turn(reply("I will now write the kernel: first we load", finish_reason="length"))
    with FakeServer([script] * 2) as srv:
        summary = A.run(settings(tmp_path, srv, max_tokens=64))
    recs = records(tmp_path)
    first = next(r for r in recs if r["type"] == "assistant")
    assert first["finish_reason"] == "length" and srv.requests[0]["max_tokens"] == 64
    ask = srv.requests[1]["messages"][-1]
    assert ask["role"] == "user" and "cut off at the output limit (64 tokens)" in ask["content"]
    assert summary["turns"] == 2 and summary["stop"] == "answered without a tool call"


def test_a_rejected_huge_argument_is_not_sent_again(tmp_path):
    huge = "    nop\n" * 150_000  # 1.2 MB: over the kernel limit
    script = by_turn(reply(calls=[("write_code", {"code": huge})]), reply(calls=[("grep_docs", {"pattern": "nop"})]))
    with FakeServer([script] * 3) as srv:
        A.run(settings(tmp_path, srv))
    tool = next(r for r in records(tmp_path) if r["type"] == "tool")
    assert tool["result"].startswith("error: the kernel is 1200000 characters")
    later = [len(json.dumps(r)) for r in srv.requests[1:]]
    assert len(later) == 2 and max(later) < 100_000, later
    replayed = srv.requests[2]["messages"][2]["tool_calls"][0]["function"]["arguments"]
    assert json.loads(replayed) == {"code": "[1200000 characters not kept: the call was rejected]"}


def test_a_bad_proposal_and_a_lone_surrogate_are_the_models_to_fix(tmp_path):
    script = by_turn(
        reply(calls=[("propose_instruction", {"isadl": "instruction X { }"})]),  # no rationale
        reply(calls=[("write_code", '{"code": "    ret \\ud800"}')], raw_arguments=True))
    with FakeServer([script] * 3) as srv:
        summary = A.run(settings(tmp_path, srv, codesign=True))
    tools = [r for r in records(tmp_path) if r["type"] == "tool"]
    assert tools[0]["result"] == "error: propose_instruction needs the argument 'rationale'"
    assert tools[1]["result"].startswith("error: write_code: 'code' is not valid Unicode (a lone surrogate")
    assert summary["tool_failures"] == 0 and summary["stop"] == "answered without a tool call"


# ---- server faults -------------------------------------------------------------------------------------
def test_empty_choices_end_with_a_summary_and_a_rerun_retries(tmp_path):
    empty = {"id": "x", "object": "chat.completion", "created": 1, "model": "m", "choices": []}
    with FakeServer([empty] * 3) as srv:
        summary = A.run(settings(tmp_path, srv))
    assert summary["stop"] == "model error" and summary["infrastructure_error"]
    assert "EmptyReply: the server answered 200 with no choices (after 3 attempts)" in summary["error"]
    error = next(r for r in records(tmp_path) if r["type"] == "error")
    assert len(error["retries"]) == 3 and summary["retries"] == 3 and len(srv.requests) == 3
    with FakeServer([strict(reply("[done]"))]) as srv:  # the server is fixed: rerunning retries the run
        again = A.run(settings(tmp_path, srv))
    assert again["stop"] == "answered without a tool call" and not again["infrastructure_error"]
    assert any(r["type"] == "resume" and "model error" in r.get("retrying", "") for r in records(tmp_path))
    assert_consistent(records(tmp_path))
    with FakeServer([]) as srv:  # ended by the model's own doing: stays ended, no request
        assert A.run(settings(tmp_path, srv)) == {**again, "time": again["time"]}
        assert srv.requests == []
    with FakeServer([strict(reply("[done]"))]) as srv:  # unless restarted
        fresh = A.run(settings(tmp_path, srv), restart=True)
    assert fresh["turns"] == 1 and (tmp_path / "run" / "trajectory.1.jsonl").exists()


def test_rate_limits_honour_retry_after_and_5xx_are_retried_once_each(tmp_path):
    script = [Answer(429, {"error": {"message": "slow down"}}, headers={"Retry-After": "1"}),
              Answer(500, {"error": {"message": "overloaded"}}), strict(reply("[done]"))]
    t0 = time.monotonic()
    with FakeServer(script) as srv:
        summary = A.run(settings(tmp_path, srv, attempts=4))
    assert time.monotonic() - t0 >= 1.0  # the Retry-After, not our 10 ms backoff
    assert len(srv.requests) == 3  # the SDK's own retries are off: every request is one of ours
    first = next(r for r in records(tmp_path) if r["type"] == "assistant")
    assert [e.split(":")[0] for e in first["retries"]] == ["RateLimitError", "InternalServerError"]
    assert summary["retries"] == 2 and summary["stop"] == "answered without a tool call"


def test_a_hang_past_the_timeout_html_with_200_and_a_server_down_end_the_run_with_the_reason(tmp_path):
    with FakeServer([Answer(200, reply("late"), delay=10)] * 2) as srv:
        hung = A.run(settings(tmp_path, srv, timeout=0.5, attempts=2))
    assert hung["stop"] == "model error" and hung["error"] == "Timeout: no answer within 0.5 s (after 2 attempts)"
    html = Answer(200, "<html><body>502 Bad Gateway</body></html>", content_type="text/html")
    with FakeServer([html] * 2) as srv:
        bad = A.run(settings(tmp_path / "h", srv, attempts=2))
    assert bad["stop"] == "model error" and "invalid response" in bad["error"] and "502 Bad Gateway" in bad["error"]
    assert len(srv.requests) == 2
    odd = [{"id": "x", "object": "chat.completion", "created": 1, "model": "m", "choices": [c]} for c in
           ({"index": 0, "finish_reason": "stop"},  # no message
            {"index": 0, "message": {"role": "assistant", "content": [{"type": "text", "text": "hi"}]}},  # a list
            {"index": 0, "message": {"role": "assistant", "tool_calls": [{"id": "a", "type": "function"}]}})]
    for i, body in enumerate(odd + [Answer(200, ""), {"unexpected": 1}]):
        with FakeServer([body]) as srv:
            odd_run = A.run(settings(tmp_path / f"odd{i}", srv, attempts=1))
        assert odd_run["stop"] == "model error" and odd_run["error"].startswith("InternalServerError: "), odd_run
        assert "Traceback" not in odd_run["error"] and len(odd_run["error"]) < 400
    import socket
    with socket.socket() as sock:  # a port nothing listens on: the server is down
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    down = A.run(A.RunSettings(model="openai/test-model", target="boom", task="relu", out=tmp_path / "d" / "run",
                               api_base=f"http://127.0.0.1:{port}/v1", backoff=0.01, attempts=2, timeout=5))
    assert down["stop"] == "model error" and "Connection error" in down["error"]  # litellm: InternalServerError
    assert down["error"].endswith("(after 2 attempts)") and down["retries"] == 2


def test_a_server_error_that_is_not_transient_ends_the_run_at_once(tmp_path):
    with FakeServer([Answer(400, {"error": {"message": "messages: bad request"}})] * 3) as srv:
        summary = A.run(settings(tmp_path, srv))
    assert len(srv.requests) == 1 and summary["stop"] == "model error" and "BadRequestError" in summary["error"]
    refused = Answer(401, {"error": {"message": f"Incorrect API key provided: {KEY}", "type": "invalid_request_error"}})
    with FakeServer([refused] * 3) as srv:
        summary = A.run(settings(tmp_path / "auth", srv))
    assert len(srv.requests) == 1 and summary["error"].startswith("AuthenticationError: ")
    assert "Incorrect API key provided: [REDACTED]" in summary["error"] and summary["infrastructure_error"]
    assert KEY not in (tmp_path / "auth" / "run" / "trajectory.jsonl").read_text()


# ---- configuration, one writer ----------------------------------------------------------------------------
def test_a_missing_key_or_unknown_provider_exits_2_before_any_request(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from kcgen.cli import main
    monkeypatch.delenv("OPENAI_API_KEY")
    with FakeServer([]) as srv:
        out = CliRunner().invoke(main, ["agent", "boom", "relu", "--model", "openai/test-model", "--api-base", srv.url,
                                        "--out", str(tmp_path / "k")])
        assert out.exit_code == 2 and "set OPENAI_API_KEY" in out.output and "Traceback" not in out.output
        out = CliRunner().invoke(main, ["agent", "boom", "relu", "--model", "nosuchprovider/x", "--out",
                                        str(tmp_path / "p")])
        assert out.exit_code == 2 and "litellm knows no provider for model 'nosuchprovider/x'" in out.output
        assert srv.requests == [] and not (tmp_path / "k").exists() and not (tmp_path / "p").exists()


def test_a_second_writer_is_refused_with_the_holders_pid(tmp_path):
    import os

    from click.testing import CliRunner

    from kcgen.cli import main
    from kcgen.runlock import RunLock
    with RunLock(tmp_path / "run", "kcgen agent (the first)"):
        out = CliRunner().invoke(main, ["agent", "boom", "relu", "--model", "scripted/reference", "--out",
                                        str(tmp_path / "run")])
    assert out.exit_code == 2 and f"in use by process {os.getpid()}" in out.output and "(the first" in out.output
    assert not (tmp_path / "run" / "trajectory.jsonl").exists()


def test_timeout_option_reaches_the_model_call(tmp_path):
    from click.testing import CliRunner

    from kcgen.cli import main
    with FakeServer([Answer(200, reply("late"), delay=10)] * 8) as srv:
        t0 = time.monotonic()
        out = CliRunner().invoke(main, ["agent", "boom", "relu", "--model", "openai/test-model", "--api-base", srv.url,
                                        "--timeout", "0.3", "--attempts", "1", "--out", str(tmp_path / "t")])
    assert time.monotonic() - t0 < 8 and out.exit_code == 2, out.output
    assert "could not run: the model" in out.output and "Timeout: no answer within 0.3 s" in out.output
