"""The benchmark runner: a matrix of agent runs (cells), local worker processes or a Ray cluster,
results in SQLite, resumable.

A cell is (model, target, task, config, trial): one agent run, in RUNDIR/runs/<model>/<target>/
<task>/<config>/t<trial>/ (its trajectory, workspace and best kernel). RUNDIR/results.sqlite holds
one row per cell in table `runs`: success is the agent run's final verification (its best kernel on
fresh OS-seeded trials over every value profile), and each row records the seeds that reproduce it
(`seed`: the run's evaluations; `verification_seeds`) and any suspicious flags. Rerunning the same
command resumes: cells marked done are skipped, interrupted ones (marked running, or never
started) run again and their agent resumes from its trajectory, and so do cells that ended on an
infrastructure error (the model unreachable or refusing); cells that ended in an error of kcgen's
own rerun only with retry_failed (an unsuccessful run is an outcome, never rerun). Only the driver process writes the database (WAL journal, busy timeout, one
transaction per row), so workers dying cannot corrupt it. One driver per RUNDIR: it holds
RUNDIR/.lock (kcgen.runlock) and a second one is refused (BenchError naming the holder); each cell's
agent run locks its own directory, and local workers end when their driver dies. Everything written
(bench.json, every row) goes through kcgen.redact.
"""
from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Optional

CONFIGS = ("C1", "C2", "C3", "C4", "C5")
TARGETS = ("plena", "amdnpu", "coral", "boom")

COLUMNS = [  # name, SQL type
    ("model", "TEXT"), ("target", "TEXT"), ("task", "TEXT"), ("config", "TEXT"), ("trial", "INTEGER"),
    ("level", "INTEGER"), ("status", "TEXT"), ("success", "INTEGER"), ("best_cycles", "INTEGER"),
    ("baseline_cycles", "INTEGER"), ("speedup", "REAL"), ("roofline_cycles", "INTEGER"),
    ("roofline_fraction", "REAL"), ("turns", "INTEGER"), ("turns_to_first_success", "INTEGER"),
    ("tokens_in", "INTEGER"), ("tokens_out", "INTEGER"), ("tokens_reasoning", "INTEGER"), ("cost", "REAL"),
    ("wall_seconds", "REAL"), ("scripted", "INTEGER"), ("stop", "TEXT"), ("error", "TEXT"),
    ("trajectory", "TEXT"), ("updated", "REAL"),
    # the final verification (success is its verdict), its flags, and the seeds that reproduce the cell
    ("verified", "INTEGER"), ("loop_best_cycles", "INTEGER"), ("suspicious", "TEXT"), ("seed", "INTEGER"),
    ("verification_seeds", "TEXT"),
    # why a cell is an error: "infrastructure" (the model could not be reached or refused the request:
    # not the model's failure) or "harness" (kcgen's own tooling, a worker that died, a bad setup)
    ("error_kind", "TEXT")]
KEY = ("model", "target", "task", "config", "trial")
APPLICATION_ID = 0x4B435242  # "KCRB" in the SQLite header: a KernelCraft results database


@dataclass(frozen=True)
class Cell:
    model: str
    target: str
    task: str
    config: str
    trial: int

    @property
    def key(self) -> tuple:
        return (self.model, self.target, self.task, self.config, self.trial)

    def directory(self, rundir: Path) -> Path:
        return Path(rundir) / "runs" / self.model.replace("/", "_") / self.target / self.task / self.config / \
            f"t{self.trial}"


@dataclass
class Options:
    """What every cell's agent run shares."""
    thinking: bool = False
    one_shot: bool = False
    max_turns: Optional[int] = None
    trials: Optional[int] = None  # input sets per evaluation in the loop (default: one per value profile)
    api_base: Optional[str] = None
    timeout: float = 600.0  # seconds per model request
    attempts: int = 6  # requests per model turn (transient failures retried)


class BenchError(Exception):
    """A bad selection (unknown model list, task, target, config)."""


class DatabaseError(Exception):
    """RUNDIR/results.sqlite is not ours (not SQLite, corrupt, or another program's) or cannot be used."""


# ---- the matrix -----------------------------------------------------------------------------------------
def expand(models: Iterable[str], targets: Iterable[str], tasks: str, configs: str, trials: int) -> list[Cell]:
    """Every cell of the selection, skipping (task, target) pairs the task does not apply to."""
    from . import taskspec
    models = [m for m in models if m]
    if not models:
        raise BenchError("give at least one model (--models)")
    targets = list(targets)
    for t in targets:
        if t not in TARGETS:
            raise BenchError(f"unknown target '{t}' (targets: {', '.join(TARGETS)})")
    every = taskspec.all_tasks()
    if tasks in ("all", "level1", "level2", "level3"):
        chosen = [t for t in every if tasks == "all" or t.level == int(tasks[-1])]
    else:
        by_name = {t.name: t for t in every}
        chosen = []
        for name in (n.strip() for n in tasks.split(",") if n.strip()):
            if name not in by_name:
                raise BenchError(f"unknown task '{name}'")
            chosen.append(by_name[name])
    cfgs = list(CONFIGS) if configs == "all" else [c.strip() for c in configs.split(",") if c.strip()]
    for c in cfgs:
        if c not in CONFIGS:
            raise BenchError(f"unknown configuration '{c}' (C1..C5 or all)")
    if trials < 1:
        raise BenchError("--trials must be at least 1")
    return [Cell(m, tg, t.name, c, k) for m in models for tg in targets for t in chosen if tg in t.targets
            for c in cfgs for k in range(1, trials + 1)]


# ---- the database -----------------------------------------------------------------------------------------
def connect(rundir: Path) -> sqlite3.Connection:
    """The run directory's database for writing: created if new, columns added to one of an older
    KernelCraft (rows kept). Raises DatabaseError for a file that is not a KernelCraft results database."""
    Path(rundir).mkdir(parents=True, exist_ok=True)
    path = Path(rundir) / "results.sqlite"
    db = _open(path)
    try:
        _ours(db, path)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA busy_timeout=60000")
        cols = ", ".join(f"{n} {t}" for n, t in COLUMNS)
        db.execute(f"CREATE TABLE IF NOT EXISTS runs ({cols}, PRIMARY KEY ({', '.join(KEY)}))")
        have = {r[1] for r in db.execute("PRAGMA table_info(runs)")}
        for name, sqltype in COLUMNS:
            if name not in have:
                try:
                    db.execute(f"ALTER TABLE runs ADD COLUMN {name} {sqltype}")
                except sqlite3.OperationalError as exc:  # another driver added it first
                    if "duplicate column" not in str(exc):
                        raise
        if db.execute("PRAGMA application_id").fetchone()[0] != APPLICATION_ID:
            db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    except sqlite3.DatabaseError as exc:
        db.close()
        raise _db_error(path, exc) from None
    except DatabaseError:
        db.close()
        raise
    return db


def _open(path: Path) -> sqlite3.Connection:
    if path.is_dir():
        raise DatabaseError(f"{path} is not a KernelCraft results database")
    try:
        return sqlite3.connect(path, timeout=60, isolation_level=None)
    except sqlite3.DatabaseError as exc:
        raise _db_error(path, exc) from None


def _ours(db: sqlite3.Connection, path: Path) -> None:
    """Raise DatabaseError unless `db` is empty, or ours: our application id, or (older files) a
    `runs` table with our key columns."""
    try:
        app = db.execute("PRAGMA application_id").fetchone()[0]
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        cols = {r[1] for r in db.execute("PRAGMA table_info(runs)")} if "runs" in tables else set()
    except sqlite3.DatabaseError as exc:
        raise _db_error(path, exc) from None
    if app == APPLICATION_ID or (app == 0 and not tables):
        return
    if app == 0 and {*KEY, "status", "success"} <= cols:
        return  # written before the application id was set
    raise DatabaseError(f"{path} is not a KernelCraft results database")


def _db_error(path: Path, exc: sqlite3.DatabaseError) -> DatabaseError:
    name = getattr(exc, "sqlite_errorname", "")
    text = str(exc)
    if name in ("SQLITE_NOTADB", "SQLITE_CORRUPT") or "not a database" in text or "malformed" in text:
        return DatabaseError(f"{path} is not a KernelCraft results database")
    return DatabaseError(f"cannot use {path}: {text}")


def write_row(db: sqlite3.Connection, row: dict) -> None:
    from .redact import redact
    names = [n for n, _ in COLUMNS]
    row = redact(row)
    values = [row.get(n) for n in names]
    with db:  # one transaction per row
        db.execute(f"INSERT OR REPLACE INTO runs ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})", values)


def read_rows(rundir: Path) -> list[dict]:
    """Every row (an older file's lack the newer columns); [] without a database. Raises
    DatabaseError for a file that is not a KernelCraft results database."""
    path = Path(rundir) / "results.sqlite"
    if not path.exists():
        return []
    db = _open(path)
    db.row_factory = sqlite3.Row
    try:
        _ours(db, path)
        if "runs" not in {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}:
            return []
        return [dict(r) for r in db.execute(f"SELECT * FROM runs ORDER BY {', '.join(KEY)}")]
    except sqlite3.DatabaseError as exc:
        raise _db_error(path, exc) from None
    finally:
        db.close()


def to_run(cells: list[Cell], rundir: Path, retry_failed: bool) -> tuple[list[Cell], int]:
    """The cells still to run, and how many are skipped as done (or failed, without retry_failed).
    A cell that ended on an infrastructure error (the model could not be reached or refused the
    request) always runs again: that is no outcome, and its agent run resumes where it stopped."""
    rows = {tuple(r[k] for k in KEY): r for r in read_rows(rundir)}

    def again(c: Cell) -> bool:
        r = rows.get(c.key)
        if r is None or r["status"] not in ("done", "error"):
            return True
        return r["status"] == "error" and (retry_failed or r.get("error_kind") == "infrastructure")
    todo = [c for c in cells if again(c)]
    return todo, len(cells) - len(todo)


# ---- one cell ---------------------------------------------------------------------------------------------
def run_cell(cell: Cell, rundir: Path, options: Options, evaluator=None) -> dict:
    """Run one cell's agent (resuming its trajectory if there is one); returns its row. Never raises
    for a failure of the run itself: that is the row's error. `evaluator`: one to reuse."""
    from .paths import agent
    t0 = time.monotonic()
    out = cell.directory(rundir)
    row = {**asdict(cell), "trajectory": str(out / "trajectory.jsonl")}
    try:
        A = agent()
        # no seed: the run draws its evaluations' seed from the OS (a resumed one keeps its own) and
        # its final verification's too; the summary records both
        settings = A.RunSettings(model=cell.model, target=cell.target, task=cell.task, config=cell.config,
                                 out=out, max_turns=options.max_turns, thinking=options.thinking,
                                 one_shot=options.one_shot, trials=options.trials, api_base=options.api_base,
                                 timeout=options.timeout, attempts=options.attempts)
        summary = A.Run(settings, evaluator=evaluator).run()
    except Exception as exc:  # a bug or a bad setup: this cell's error, not the benchmark's end
        name = "" if type(exc).__name__ == "RunError" else f"{type(exc).__name__}: "
        return {**row, "status": "error", "success": 0, "error": f"{name}{exc}"[:2000], "error_kind": "harness",
                "wall_seconds": round(time.monotonic() - t0, 3), "updated": time.time()}
    row.update({k: summary.get(k) for k in ("level", "best_cycles", "baseline_cycles", "speedup", "roofline_cycles",
                                              "roofline_fraction", "turns", "turns_to_first_success", "tokens_in",
                                              "tokens_out", "tokens_reasoning", "cost", "stop", "error")})
    if summary.get("tool_failures") and not row.get("error"):
        row["error"] = f"{summary['tool_failures']} tool call(s) failed inside kcgen (see the trajectory)"
    check = summary.get("verification") or {}
    row.update(verified=int(bool(summary.get("verified"))), loop_best_cycles=summary.get("loop_best_cycles"),
               suspicious=json.dumps(summary.get("suspicious") or []), seed=summary.get("seed"),
               verification_seeds=json.dumps(check.get("seeds") or []) if check else None)
    # success is the final verification's verdict alone
    row.update(success=int(bool(summary.get("success")) and bool(summary.get("verified"))),
               scripted=int(bool(summary.get("scripted"))),
               # a model error (auth, bad request, retries exhausted) or a failure of our own tooling is
               # an error; no success is an outcome
               status="error" if summary.get("stop") == "model error" or summary.get("tool_failures") else "done",
               error_kind="infrastructure" if summary.get("stop") == "model error" else
               "harness" if summary.get("tool_failures") else None,
               wall_seconds=round(time.monotonic() - t0, 3), updated=time.time())
    return row


# ---- executors --------------------------------------------------------------------------------------------
def _worker_main(conn, rundir: str, options: dict, parent: Optional[int] = None) -> None:
    """A local worker process: runs the cells the driver sends until it sends None (or dies)."""
    from .evaluation import Evaluator
    opts = Options(**options)
    with Evaluator() as evaluator:  # one per worker: its process keeps simulators loaded across cells
        if parent is not None:
            from .runlock import die_with_parent
            die_with_parent(parent, lambda: evaluator.close(kill=True))
        while True:
            try:
                msg = conn.recv()
            except EOFError:
                return
            if msg is None:
                return
            conn.send(run_cell(Cell(**msg), Path(rundir), opts, evaluator))


@dataclass
class _Worker:
    proc: object
    conn: object
    cell: Optional[Cell] = None
    since: float = 0.0


def run_local(cells: list[Cell], rundir: Path, options: Options, workers: int,
              on_row: Callable[[dict], None], on_start: Callable[[Cell], None] = lambda c: None) -> None:
    """Run cells on `workers` long-lived worker processes. A worker that dies takes only its current
    cell with it (an error row) and is replaced."""
    import multiprocessing
    import os
    from multiprocessing.connection import wait
    ctx = multiprocessing.get_context("spawn")
    pending = list(cells)
    pool: list[_Worker] = []

    def spawn() -> _Worker:
        parent, child = ctx.Pipe()
        # not daemonic: a cell's agent starts its own evaluator process
        proc = ctx.Process(target=_worker_main, args=(child, str(rundir), asdict(options), os.getpid()))
        proc.start()
        child.close()
        return _Worker(proc, parent)

    try:
        pool = [spawn() for _ in range(max(1, min(workers, len(pending))))]
        while pending or any(w.cell for w in pool):
            for w in pool:
                if w.cell is None and pending:
                    w.cell, w.since = pending.pop(0), time.monotonic()
                    on_start(w.cell)
                    w.conn.send(asdict(w.cell))
            busy = [w for w in pool if w.cell is not None]
            ready = wait([w.conn for w in busy] + [w.proc.sentinel for w in busy], timeout=1.0)
            for i, w in enumerate(pool):
                if w.cell is None:
                    continue
                if w.conn in ready:
                    try:
                        row = w.conn.recv()
                    except (EOFError, OSError):
                        row = None
                    if row is not None:
                        w.cell = None
                        on_row(row)
                        continue
                if w.conn in ready or w.proc.sentinel in ready or not w.proc.is_alive():
                    w.proc.join(timeout=10)  # its pipe closed: the process is exiting; get its exit code
                    cell, w.cell = w.cell, None
                    on_row({**asdict(cell), "status": "error", "success": 0,
                            "error": f"the worker process died (exit code {w.proc.exitcode}) running this cell",
                            "error_kind": "harness",
                            "wall_seconds": round(time.monotonic() - w.since, 3), "updated": time.time(),
                            "trajectory": str(cell.directory(rundir) / "trajectory.jsonl")})
                    pool[i] = spawn()
    finally:
        for w in pool:
            try:
                w.conn.send(None)
            except (OSError, ValueError):
                pass
        for w in pool:
            w.proc.join(timeout=5)
            if w.proc.is_alive():
                w.proc.kill()


def _ray_cell(cell: dict, options: dict, previous: Optional[str]) -> tuple[dict, str]:
    """On a Ray worker: run the cell in a scratch directory (seeded with the trajectory of an earlier,
    interrupted attempt) and ship the row and the trajectory back to the driver."""
    import tempfile
    c = Cell(**cell)
    with tempfile.TemporaryDirectory(prefix="kcgen-cell-") as tmp:
        out = c.directory(Path(tmp))
        if previous:
            out.mkdir(parents=True, exist_ok=True)
            (out / "trajectory.jsonl").write_text(previous, encoding="utf-8")
        row = run_cell(c, Path(tmp), Options(**options))
        traj = out / "trajectory.jsonl"
        return row, traj.read_text(encoding="utf-8") if traj.exists() else ""


def run_ray(cells: list[Cell], rundir: Path, options: Options, workers: int, address: Optional[str],
            on_row: Callable[[dict], None], on_start: Callable[[Cell], None] = lambda c: None) -> None:
    """Run cells as Ray tasks (a local instance, or the cluster at `address`); the driver writes
    every trajectory into RUNDIR and every row into the database."""
    try:
        import ray
    except ImportError:
        raise BenchError("the ray executor needs Ray: pip install 'kernelcraft[ray]'") from None
    from .paths import REPO
    started_here = not ray.is_initialized()
    if started_here:
        kwargs = {"address": address} if address else {"num_cpus": workers, "include_dashboard": False}
        # a cluster's workers need kcgen installed (pip install 'kernelcraft[ray]') and this source
        # tree's tasks/ and agent/: ship the tree as the job's working directory
        ray.init(ignore_reinit_error=True, log_to_driver=False, configure_logging=False,
                 runtime_env={"working_dir": str(REPO), "excludes": [".venv", ".git", "runs"]} if address else None,
                 **kwargs)
    remote = ray.remote(num_cpus=1, max_retries=0)(_ray_cell)
    try:
        refs = {}
        for cell in cells:
            traj = cell.directory(rundir) / "trajectory.jsonl"
            on_start(cell)
            refs[remote.remote(asdict(cell), asdict(options), traj.read_text() if traj.exists() else None)] = cell
        while refs:
            done, _ = ray.wait(list(refs), num_returns=1)
            for ref in done:
                cell = refs.pop(ref)
                out = cell.directory(rundir)
                try:
                    row, traj_text = ray.get(ref)
                except Exception as exc:  # the Ray worker died or the task could not run
                    row, traj_text = {**asdict(cell), "status": "error", "success": 0, "updated": time.time(),
                                      "error_kind": "harness",
                                      "error": f"ray task failed: {type(exc).__name__}: {str(exc)[:500]}"}, ""
                if traj_text:
                    out.mkdir(parents=True, exist_ok=True)
                    (out / "trajectory.jsonl").write_text(traj_text, encoding="utf-8")
                    _write_best(out / "trajectory.jsonl")
                row["trajectory"] = str(out / "trajectory.jsonl")
                on_row(row)
    finally:
        if started_here:
            ray.shutdown()


def _write_best(trajectory: Path) -> None:
    """best.s beside a trajectory shipped back from a Ray worker."""
    best = None
    for line in trajectory.read_text(encoding="utf-8").splitlines():
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            continue
        ev = rec.get("evaluation") or {}
        if ev.get("correct") and ev.get("cycles") is not None and (best is None or ev["cycles"] < best[0]):
            best = (ev["cycles"], ev.get("code") or "")
    if best:
        (trajectory.parent / "best.s").write_text(best[1], encoding="utf-8")


# ---- the driver -------------------------------------------------------------------------------------------
@dataclass
class Progress:
    total: int
    skipped: int
    done: int = 0
    successes: int = 0
    errors: int = 0
    error_rows: list = field(default_factory=list)  # the rows that ended in an error (their reasons)
    started: float = field(default_factory=time.monotonic)
    overhead: float = 0.0  # driver seconds spent per finished cell (dispatch, database)

    def eta(self) -> Optional[float]:
        if not self.done:
            return None
        return (time.monotonic() - self.started) / self.done * (self.total - self.skipped - self.done)


def run(cells: list[Cell], rundir: Path, options: Options, workers: int = 1, executor: str = "local",
        address: Optional[str] = None, retry_failed: bool = False,
        on_progress: Callable[[Progress, Optional[dict]], None] = lambda p, r: None) -> Progress:
    """Run the cells not yet done; returns the progress counts. Raises BenchError when another
    driver holds RUNDIR, or a model of the selection cannot be called as configured (a missing key):
    both before any cell runs."""
    from .paths import agent
    from .redact import redact
    from .runlock import LockedError, RunLock
    rundir = Path(rundir)
    models = agent().models
    for model in sorted({c.model for c in cells}):
        try:
            models.check_config(model, options.api_base)
        except models.ConfigError as exc:
            raise BenchError(str(exc)) from None
    lock = RunLock(rundir, "kcgen bench")
    try:
        lock.acquire()
    except LockedError as exc:
        raise BenchError(str(exc)) from None
    try:
        return _run(cells, rundir, options, workers, executor, address, retry_failed, on_progress, redact)
    finally:
        lock.release()


def _run(cells, rundir: Path, options: Options, workers: int, executor: str, address, retry_failed: bool,
         on_progress, redact) -> Progress:
    db = connect(rundir)
    (rundir / "bench.json").write_text(json.dumps(redact({"options": asdict(options), "cells": len(cells)}), indent=1))
    todo, skipped = to_run(cells, rundir, retry_failed)
    progress = Progress(len(cells), skipped)

    def on_start(cell: Cell) -> None:
        t0 = time.perf_counter()
        write_row(db, {**asdict(cell), "status": "running", "updated": time.time(),
                       "trajectory": str(cell.directory(rundir) / "trajectory.jsonl")})
        progress.overhead += time.perf_counter() - t0

    def on_row(row: dict) -> None:
        t0 = time.perf_counter()
        write_row(db, row)
        progress.done += 1
        progress.successes += int(bool(row.get("success")))
        if row.get("status") == "error":
            progress.errors += 1
            progress.error_rows.append(redact(row))
        progress.overhead += time.perf_counter() - t0
        on_progress(progress, row)

    on_progress(progress, None)
    try:
        if not todo:
            return progress
        if executor == "local":
            run_local(todo, rundir, options, workers, on_row, on_start)
        elif executor == "ray":
            run_ray(todo, rundir, options, workers, address, on_row, on_start)
        else:
            raise BenchError(f"unknown executor '{executor}' (local or ray)")
    finally:
        db.close()
    return progress
