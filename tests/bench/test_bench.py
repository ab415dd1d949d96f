"""`kcgen bench` and `kcgen report`: the matrix, resuming, isolation of a dying run, concurrent
database writers, the Ray executor giving the local executor's rows, and the report's tables."""
from __future__ import annotations

import multiprocessing
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kcgen import bench, report
from kcgen.paths import REPO

MODELS = ["scripted/reference", "scripted/fail"]


def small(trials=1):
    return bench.expand(MODELS, ["boom"], "relu,gemm", "C1", trials)


def rows(rundir):
    return {tuple(r[k] for k in bench.KEY): r for r in bench.read_rows(rundir)}


def test_expand_selects_the_cells_the_tasks_apply_to():
    cells = bench.expand(["m"], ["plena", "coral"], "conv2d,relu", "C1,C3", 2)
    assert {(c.target, c.task) for c in cells} == {("plena", "relu"), ("coral", "relu"), ("coral", "conv2d")}
    assert len(cells) == 3 * 2 * 2  # conv2d is not a plena task
    level1 = bench.expand(["m"], bench.TARGETS, "level1", "all", 1)
    assert len(level1) == (10 + 12 + 12 + 12) * 5
    for bad, msg in [((["m"], ["vax"], "relu", "C1", 1), "unknown target 'vax'"),
                     ((["m"], ["boom"], "nope", "C1", 1), "unknown task 'nope'"),
                     ((["m"], ["boom"], "relu", "C9", 1), "unknown configuration 'C9'"),
                     (([""], ["boom"], "relu", "C1", 1), "at least one model")]:
        with pytest.raises(bench.BenchError, match=msg):
            bench.expand(*bad)


def test_local_run_resume_and_retry(tmp_path):
    cells = small()
    progress = bench.run(cells, tmp_path, bench.Options(), workers=2)
    assert progress.done == 4 and progress.errors == 0
    got = rows(tmp_path)
    assert {k: (r["status"], r["success"]) for k, r in got.items()} == {
        ("scripted/reference", "boom", "gemm", "C1", 1): ("done", 1),
        ("scripted/reference", "boom", "relu", "C1", 1): ("done", 1),
        ("scripted/fail", "boom", "gemm", "C1", 1): ("done", 0),
        ("scripted/fail", "boom", "relu", "C1", 1): ("done", 0)}
    ok = got[("scripted/reference", "boom", "gemm", "C1", 1)]
    assert ok["speedup"] == pytest.approx(ok["baseline_cycles"] / ok["best_cycles"]) and ok["scripted"] == 1
    assert Path(ok["trajectory"]).exists()
    # the same command again: nothing runs
    again = bench.run(cells, tmp_path, bench.Options(), workers=2)
    assert again.done == 0 and again.skipped == 4
    assert {k: r["updated"] for k, r in rows(tmp_path).items()} == {k: r["updated"] for k, r in got.items()}
    # an error row reruns only with retry_failed; unsuccessful ones never
    db = bench.connect(tmp_path)
    db.execute("UPDATE runs SET status='error', error='injected' WHERE task='relu' AND model='scripted/reference'")
    db.close()
    assert bench.run(cells, tmp_path, bench.Options(), workers=1).done == 0
    retried = bench.run(cells, tmp_path, bench.Options(), workers=1, retry_failed=True)
    assert retried.done == 1 and rows(tmp_path)[("scripted/reference", "boom", "relu", "C1", 1)]["status"] == "done"


def test_a_dying_run_marks_only_its_cell(tmp_path):
    cells = bench.expand(["scripted/crash", "scripted/reference"], ["boom"], "relu", "C1", 1)
    progress = bench.run(cells, tmp_path, bench.Options(), workers=1)  # one worker: it dies, is replaced, goes on
    got = rows(tmp_path)
    crash = got[("scripted/crash", "boom", "relu", "C1", 1)]
    assert crash["status"] == "error" and "worker process died (exit code 3)" in crash["error"]
    assert got[("scripted/reference", "boom", "relu", "C1", 1)]["success"] == 1
    assert progress.errors == 1


def test_killing_the_driver_loses_no_completed_cell(tmp_path):
    cmd = [sys.executable, "-m", "kcgen", "bench", "--models", ",".join(MODELS), "--targets", "boom",
           "--tasks", "relu,gemm,softmax", "--workers", "1", "--out", str(tmp_path)]
    proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:  # wait until some cells are done, then SIGKILL the whole group
        if sum(r["status"] == "done" for r in rows(tmp_path).values()) >= 2:
            break
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    before = {k: r["updated"] for k, r in rows(tmp_path).items() if r["status"] == "done"}
    assert len(before) >= 2
    done = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    after = rows(tmp_path)
    assert len(after) == 6 and all(r["status"] == "done" for r in after.values())
    assert all(after[k]["updated"] == t for k, t in before.items()), "a completed cell was run again"


def _writer(path, start, n):
    for i in range(start, start + n):
        db = bench.connect(path)
        bench.write_row(db, {"model": "m", "target": "boom", "task": "relu", "config": "C1", "trial": i,
                             "status": "done", "success": i % 2, "updated": time.time()})
        db.close()


def test_concurrent_writers_cannot_corrupt_the_database(tmp_path):
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(tmp_path, k * 100, 60)) for k in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    db = sqlite3.connect(tmp_path / "results.sqlite")
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert db.execute("SELECT count(*) FROM runs").fetchone()[0] == 240


def test_ray_executor_gives_the_local_executors_rows(tmp_path):
    pytest.importorskip("ray", reason="the Ray executor needs pip install 'kernelcraft[ray]'")
    cells = small()
    bench.run(cells, tmp_path / "local", bench.Options(), workers=2)
    bench.run(cells, tmp_path / "ray", bench.Options(), workers=2, executor="ray")
    fields = ("status", "success", "best_cycles", "baseline_cycles", "turns", "turns_to_first_success", "stop")
    local, remote = rows(tmp_path / "local"), rows(tmp_path / "ray")
    assert {k: tuple(r[f] for f in fields) for k, r in local.items()} == \
           {k: tuple(r[f] for f in fields) for k, r in remote.items()}
    for r in remote.values():
        assert Path(r["trajectory"]).exists() and str(tmp_path / "ray") in r["trajectory"]


def test_report_tables_follow_the_rows(tmp_path):
    bench.run(small(trials=2), tmp_path, bench.Options(), workers=2)
    rep = report.write(tmp_path)
    md = rep.markdown.read_text()
    assert "| L1 | gemm | 0/2 | 2/2 |" in md and "| L1 | **total** | 0/4 (0%) | 4/4 (100%) |" in md
    assert "| scripted/fail | boom | 0% | 0% | 0% | 0% |" in md
    assert "Scripted (offline) models took part" in md
    assert rep.html.read_text().count("data:image/png;base64,") == len(rep.plots) == 4
    assert len(rep.csv.read_text().splitlines()) == 1 + 8
    assert "scripted/reference  boom    4/4" in rep.summary
    both = report.write(tmp_path, compare=tmp_path)
    assert f"{tmp_path.name} vs {tmp_path.name}" in both.markdown.read_text()


def test_report_of_an_empty_run_is_an_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="no finished runs"):
        report.write(tmp_path)


def test_dry_run_lists_cells(tmp_path):
    from click.testing import CliRunner
    from kcgen.cli import main
    out = CliRunner().invoke(main, ["bench", "--models", "scripted/reference", "--targets", "boom,plena",
                                    "--tasks", "conv2d,relu", "--out", str(tmp_path), "--dry-run"])
    assert out.exit_code == 0 and "3 cells: 3 to run, 0 done" in out.output
    bad = CliRunner().invoke(main, ["bench", "--models", "m", "--tasks", "nope", "--out", str(tmp_path)])
    assert bad.exit_code == 2 and "unknown task 'nope'" in bad.output
