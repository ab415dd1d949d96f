"""The bench and the report count only verified successes, record the seeds that reproduce a cell
(drawn from the OS, never from the cell's name), list flagged results for a human, and refuse a
results database that is not theirs with one clear line (issue 17, items 3, 5, 6 and 10)."""
from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import time

import pytest
from click.testing import CliRunner

from kcgen import bench, report
from kcgen.cli import main
from kcgen.paths import REPO, agent

A = agent()

LUCKY = """        .text
        .globl relu
relu:
        beqz    a2, 2f
        fmv.w.x ft1, zero
        li      t0, 0x41000000
        fmv.w.x ft2, t0
1:      flw     ft0, 0(a0)
        fmax.s  ft0, ft0, ft1
        fmin.s  ft0, ft0, ft2
        fsw     ft0, 0(a1)
        addi    a0, a0, 4
        addi    a1, a1, 4
        addi    a2, a2, -1
        bnez    a2, 1b
2:      ret
"""  # relu wrong for every x > 8: passes the normal profile, fails large and extremes


def test_two_bench_runs_of_a_cell_draw_and_record_different_seeds(tmp_path):
    cells = bench.expand(["scripted/reference"], ["boom"], "relu", "C1", 1)
    got = []
    for name in ("first", "second"):
        bench.run(cells, tmp_path / name, bench.Options(), workers=1)
        (row,) = bench.read_rows(tmp_path / name)
        got.append(row)
    for row in got:
        assert row["status"] == "done" and row["success"] == 1 and row["verified"] == 1
        assert isinstance(row["seed"], int)
        seeds = json.loads(row["verification_seeds"])
        assert len(seeds) >= 10 and json.loads(row["suspicious"]) == []
        summary = [r for r in A.trajectory.read(row["trajectory"]) if r["type"] == "summary"][-1]
        assert summary["seed"] == row["seed"] and summary["verification"]["seeds"] == seeds
    assert got[0]["seed"] != got[1]["seed"]
    assert json.loads(got[0]["verification_seeds"]) != json.loads(got[1]["verification_seeds"])


def test_a_cell_that_passes_only_by_luck_is_not_a_success(tmp_path, monkeypatch):
    def complete(model, messages, tools, **kw):
        turn = sum(m["role"] == "assistant" for m in messages)
        calls = [("write_code", {"code": LUCKY}), ("run_evaluation", {})]
        if turn < len(calls):
            return A.models.Reply("", [{"id": f"c{turn}", "name": calls[turn][0],
                                        "arguments": json.dumps(calls[turn][1])}])
        return A.models.Reply("done", [])
    monkeypatch.setattr(A.models, "complete", complete)
    row = bench.run_cell(bench.Cell("hosted_vllm/lucky", "boom", "relu", "C1", 1), tmp_path, bench.Options(trials=1))
    assert row["status"] == "done" and row["loop_best_cycles"], row  # it passed its in-loop evaluation
    assert row["success"] == 0 and row["verified"] == 0 and row["best_cycles"] is None
    assert len(json.loads(row["verification_seeds"])) >= 10


def _row(task, trial=1, **kw):
    base = {"model": "m", "target": "boom", "task": task, "config": "C1", "trial": trial, "level": 1,
            "status": "done", "success": 0, "scripted": 0, "turns": 3, "tokens_in": 10, "tokens_out": 5,
            "tokens_reasoning": 0, "cost": 0.0, "trajectory": f"/runs/{task}/t{trial}/trajectory.jsonl",
            "updated": time.time()}
    return {**base, **kw}


def test_report_counts_only_verified_successes_and_lists_flagged_ones(tmp_path):
    db = bench.connect(tmp_path)
    flag = "2.40x faster than the item's reference kernel (100 vs 240 cycles; flagged above 1.5x)"
    bench.write_row(db, _row("relu", success=1, verified=1, best_cycles=100, baseline_cycles=300, speedup=3.0,
                             suspicious=json.dumps([flag])))
    bench.write_row(db, _row("gemm", success=1, verified=1, best_cycles=100, baseline_cycles=150, speedup=1.5,
                             suspicious="[]"))
    bench.write_row(db, _row("gelu", success=1, verified=None, best_cycles=10, baseline_cycles=500, speedup=50.0))
    bench.write_row(db, _row("silu", success=0, verified=0))
    db.close()
    rep = report.write(tmp_path)
    md = rep.markdown.read_text()
    assert "| L1 | **total** | 2/4 (50%) |" in md  # gelu's unverified success does not count
    assert "| L1 | gelu | 0/1 |" in md
    assert "1 run(s) recorded a success without a final verification" in md
    assert "| m | boom | 50% | 50% | 25% | 25% |" in md  # fast_p: gelu's 50x is not counted
    assert "Flagged for a human to look at" in md and flag in md and "/runs/relu/t1/trajectory.jsonl" in md
    assert "1 result(s) are flagged as suspicious" in md
    assert "3.00x" in md  # a flagged number is reported unchanged
    assert "1 flagged result(s)" in rep.summary
    assert any(line.split()[:3] == ["m", "boom", "2/4"] for line in rep.summary.splitlines())


def test_an_older_results_database_gets_the_new_columns(tmp_path):
    old = [(n, t) for n, t in bench.COLUMNS if n not in ("verified", "loop_best_cycles", "suspicious", "seed",
                                                          "verification_seeds")]
    db = sqlite3.connect(tmp_path / "results.sqlite")
    db.execute(f"CREATE TABLE runs ({', '.join(f'{n} {t}' for n, t in old)}, PRIMARY KEY ({', '.join(bench.KEY)}))")
    db.execute("INSERT INTO runs (model, target, task, config, trial, status, success) "
               "VALUES ('m', 'boom', 'relu', 'C1', 1, 'done', 1)")
    db.commit()
    db.close()
    (row,) = bench.read_rows(tmp_path)  # read as it is
    assert row["success"] == 1 and "verified" not in row
    bench.connect(tmp_path).close()
    (row,) = bench.read_rows(tmp_path)
    assert row["success"] == 1 and row["verified"] is None and "verification_seeds" in row
    check = sqlite3.connect(tmp_path / "results.sqlite")
    assert check.execute("PRAGMA application_id").fetchone()[0] == bench.APPLICATION_ID
    check.close()


def _not_ours(path, kind):
    db = path / "results.sqlite"
    if kind == "garbage":
        db.write_bytes(b"this is not a database\n" * 200)
    elif kind == "truncated":
        good = path / "good"
        bench.connect(good).close()
        db.write_bytes((good / "results.sqlite").read_bytes()[:60] + b"\0garbage" * 100)
    elif kind == "directory":
        db.mkdir()
    else:
        con = sqlite3.connect(db)
        con.execute("CREATE TABLE notes (a, b)" if kind == "foreign" else "CREATE TABLE runs (id INTEGER, x TEXT)")
        con.execute("INSERT INTO " + ("notes" if kind == "foreign" else "runs") + " VALUES (1, 'x')")
        con.commit()
        con.close()
    return db


@pytest.mark.parametrize("kind", ["garbage", "truncated", "directory", "foreign", "foreign_runs"])
def test_a_results_database_not_ours_is_one_clear_line(tmp_path, kind):
    rundir = tmp_path / "x"
    rundir.mkdir()
    db = _not_ours(rundir, kind)
    before = db.read_bytes() if db.is_file() else None
    line = f"error: {rundir / 'results.sqlite'} is not a KernelCraft results database"
    sel = ["--models", "scripted/reference", "--targets", "boom", "--tasks", "relu", "--out", str(rundir)]
    for args in (["report", str(rundir)], ["bench", *sel, "--dry-run"], ["bench", *sel]):
        out = CliRunner().invoke(main, args)
        assert out.exit_code == 1, (args, out.output)
        assert out.output.strip().splitlines() == [line], (args, out.output)
        assert out.exception is None or isinstance(out.exception, SystemExit)
    assert (db.read_bytes() if db.is_file() else None) == before  # never changed
    with pytest.raises(bench.DatabaseError, match="is not a KernelCraft results database"):
        bench.connect(rundir)


def test_a_corrupt_database_gives_no_traceback_from_the_command(tmp_path):
    _not_ours(tmp_path, "garbage")
    for args in (["report", str(tmp_path)], ["bench", "--models", "m", "--targets", "boom", "--tasks", "relu",
                                             "--out", str(tmp_path), "--dry-run"]):
        done = subprocess.run([sys.executable, "-m", "kcgen", *args], cwd=REPO, capture_output=True, text=True,
                              timeout=120)
        assert done.returncode == 1 and done.stdout == ""
        assert done.stderr == f"error: {tmp_path / 'results.sqlite'} is not a KernelCraft results database\n"
