"""kill -9 at each phase of a run, then rerun: the trajectory stays consistent (no duplicated or
lost turn, every call of every turn with exactly one result, one end, one summary). The run is a
separate process killed with SIGKILL (tests/agent/_killed_run.py) against a scripted server on
127.0.0.1; the rerun resumes it. Also: a bench worker dies with its killed driver."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kcgen.paths import REPO, agent

from .fakeserver import Answer, FakeServer, reply
from .test_model_server import KEY, assert_consistent, by_turn

A = agent()
HERE = Path(__file__).parent
pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")


def env():
    return {**os.environ, "OPENAI_API_KEY": KEY, "PYTHONPATH": str(REPO)}


def script(hold: dict):
    """Turn 1: one call; turn 2: two calls (ids call_0, call_1 both turns); turn 3: done. With
    hold["turn2"], the first request for turn 2 hangs (the test kills the process meanwhile)."""
    plain = by_turn(reply("look", calls=[("grep_docs", {"pattern": "addi"})]),
                    reply("write and check", calls=[("write_code", {"code": "    ret\n"}), ("check_syntax", {})]))

    def answer(body, index):
        if sum(m["role"] == "assistant" for m in body["messages"]) == 1 and hold.pop("turn2", False):
            return Answer(200, reply("too late"), delay=60)
        return plain(body, index)
    return answer


KILLED_AT = {"waiting for the model": ("tool", 1, 0),  # turn 1 done, turn 2 asked, no answer yet
             "assistant:2": ("assistant", 2, None),  # turn 2's reply recorded, none of its two calls run
             "tool:2": ("tool", 2, 0),  # turn 2's first call done, its second not
             "end:1": ("end", None, None)}  # the loop over, no summary yet


@pytest.mark.parametrize("phase", ["waiting for the model", "assistant:2", "tool:2", "end:1"])
def test_kill_9_at_each_phase_then_rerun_gives_a_consistent_trajectory(tmp_path, monkeypatch, phase):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    hold = {"turn2": phase == "waiting for the model"}
    kind, n = phase.split(":") if ":" in phase else ("never", "1")
    out = tmp_path / "run"
    with FakeServer([script(hold)] * 12, lifetime=90) as srv:
        proc = subprocess.Popen([sys.executable, str(HERE / "_killed_run.py"), str(out), srv.url, kind, n],
                                cwd=REPO, env=env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        if kind == "never":
            deadline = time.monotonic() + 60
            while len(srv.requests) < 2 and time.monotonic() < deadline and proc.poll() is None:
                time.sleep(0.05)
            assert len(srv.requests) == 2, proc.stderr.read().decode()[-2000:]
            proc.kill()  # the second request is held: the process is waiting for the model's answer
        assert proc.wait(timeout=60) == -signal.SIGKILL, proc.stderr.read().decode()[-2000:]
        last = list(A.trajectory.read(out / "trajectory.jsonl"))[-1]  # the phase the kill hit
        assert (last["type"], last.get("turn"), last.get("index")) == KILLED_AT[phase], last
        summary = A.run(A.RunSettings(model="openai/test-model", target="boom", task="relu", out=out,
                                      api_base=srv.url, seed=7, backoff=0.01, attempts=2, timeout=10))
    recs = list(A.trajectory.read(out / "trajectory.jsonl"))
    assert_consistent(recs)
    assert [r["type"] for r in recs].count("meta") == 1 and [r["type"] for r in recs].count("end") == 1
    assert [r["type"] for r in recs].count("summary") == 1 and any(r["type"] == "resume" for r in recs)
    assert summary["turns"] == 3 and summary["stop"] == "answered without a tool call"
    assert [r["name"] for r in recs if r["type"] == "tool"] == ["grep_docs", "write_code", "check_syntax"]


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "gone"


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_a_bench_worker_dies_with_its_killed_driver(tmp_path):
    with FakeServer([Answer(200, reply("slow"), delay=120)], lifetime=90) as srv:
        driver = subprocess.Popen([sys.executable, str(HERE / "_orphan_driver.py"), str(tmp_path), srv.url],
                                  cwd=REPO, env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        worker = None
        try:
            worker = int(driver.stdout.readline())
            deadline = time.monotonic() + 60
            while not srv.requests and time.monotonic() < deadline:  # the worker is busy in a model call
                time.sleep(0.05)
            assert srv.requests, driver.stderr.read1().decode()[-2000:]
            _kill_and_wait_for(driver, worker, "the worker outlived its driver")
        finally:
            _clean_up(driver, worker)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_an_evaluator_worker_dies_with_its_killed_caller():
    caller = subprocess.Popen([sys.executable, str(HERE / "_orphan_driver.py"), "evaluator"], cwd=REPO, env=env(),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    worker = None
    try:
        worker = int(caller.stdout.readline())
        _kill_and_wait_for(caller, worker, "the evaluator worker outlived the process that started it")
    finally:
        _clean_up(caller, worker)


def _kill_and_wait_for(parent, worker: int, message: str) -> None:
    """kill -9 `parent`; its worker must be gone (or a zombie) within 10 s."""
    parent.kill()
    parent.wait(timeout=10)
    deadline = time.monotonic() + 10
    while _state(worker) not in ("gone", "Z", "X") and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _state(worker) in ("gone", "Z", "X"), message


def _clean_up(parent, worker) -> None:
    if parent.poll() is None:
        parent.kill()
    if worker is not None and _state(worker) not in ("gone", "Z", "X"):
        os.kill(worker, signal.SIGKILL)  # only the process this test started
