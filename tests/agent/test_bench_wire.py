"""kcgen bench and kcgen report against model-server faults: configuration checked before any cell,
one driver per run directory, every error's reason printed and reported, infrastructure errors
kept apart from the model's failures."""
from __future__ import annotations

import os
import sqlite3

from click.testing import CliRunner

from kcgen import bench, report
from kcgen.cli import main
from kcgen.runlock import RunLock

from .fakeserver import Answer, FakeServer
from .test_model_server import KEY

SELECT = ["--targets", "boom", "--tasks", "relu", "--configs", "C1"]


def test_bench_checks_keys_before_any_cell_and_refuses_a_second_driver(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    out = CliRunner().invoke(main, ["bench", "--models", "scripted/reference,openai/m", *SELECT,
                                    "--out", str(tmp_path / "a")])
    assert out.exit_code == 2 and "needs OPENAI_API_KEY" in out.output and "Traceback" not in out.output
    assert not (tmp_path / "a").exists()
    with RunLock(tmp_path / "b", "kcgen bench (first)"):
        out = CliRunner().invoke(main, ["bench", "--models", "scripted/reference", *SELECT, "--out", str(tmp_path / "b")])
    assert out.exit_code == 2 and f"in use by process {os.getpid()}" in out.output


def test_bench_prints_why_cells_failed_and_the_report_keeps_infrastructure_errors_apart(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    rundir = tmp_path / "run"
    refused = Answer(401, {"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}})
    with FakeServer([refused] * 4) as srv:
        out = CliRunner().invoke(
            main, ["bench", "--models", "openai/m", *SELECT, "--out", str(rundir), "--api-base", srv.url,
                   "--workers", "1", "--attempts", "2", "--timeout", "5"])
    assert out.exit_code == 1, out.output + out.stderr
    assert "error (infrastructure) in 1 cell(s) [openai/m boom relu C1 t1]: AuthenticationError" in out.stderr
    assert "Incorrect API key provided" in out.stderr and len(srv.requests) == 1  # a 401 is not retried
    row = sqlite3.connect(rundir / "results.sqlite").execute("SELECT status, error_kind, error FROM runs").fetchone()
    assert row[0] == "error" and row[1] == "infrastructure" and "Incorrect API key" in row[2]
    assert KEY not in (rundir / "bench.json").read_text() + row[2]
    cells = bench.expand(["openai/m"], ["boom"], "relu", "C1", 1)
    assert bench.to_run(cells, rundir, retry_failed=False) == (cells, 0)  # an infrastructure error runs again
    # a model's own failure next to it: the report counts that one and lists the other apart
    db = bench.connect(rundir)
    bench.write_row(db, {"model": "openai/m", "target": "boom", "task": "relu", "config": "C1", "trial": 2,
                         "level": 1, "status": "done", "success": 0, "verified": 0, "stop": "turn budget spent",
                         "turns": 15, "tokens_in": 1, "tokens_out": 1, "tokens_reasoning": 0, "cost": 0.0,
                         "scripted": 0})
    db.close()
    rep = report.write(rundir)
    md = rep.markdown.read_text()
    assert "1 run(s) could not run (infrastructure errors" in md
    assert "| infrastructure | openai/m | boom | relu | C1 | t1 | AuthenticationError" in md
    assert "| L1 | relu | 0/1 |" in md  # the success table counts the model's own failure only
    assert "could not run (infrastructure errors, not counted)" in rep.summary
