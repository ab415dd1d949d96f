"""`kcgen report RUNDIR`: the benchmark's results the way the field reads them.

Writes RUNDIR/report.md, a standalone RUNDIR/report.html (plots embedded), PNG plots and
RUNDIR/results.csv, from RUNDIR/results.sqlite. A success is a verified one: the run's best kernel
passed the final verification (fresh OS-seeded trials over every value profile); a row that says
success without it (a run from before verification) counts as a failure, and the report says how
many there were. Every table below counts that way:

- success per task and model, per target, as successes out of configs x trials, with level
  totals and the overall rate (the published table's layout);
- fast_p for p in {0, 1, 1.5, 2}: the share of cells whose kernel is correct and more than p
  times faster than the baseline (fast_0 is the success rate);
- speedup over the baseline per task and configuration (median over successful trials; ✗ where
  no trial succeeded), and the speedup buckets (>= 2x, 1-2x, < 1x, failed);
- fraction of the roofline per task and configuration;
- turns to the first success, and tokens (in / out / reasoning) and cost per run;
- the runs that could not run (infrastructure errors: the model could not be reached or refused the
  request), with their reasons: they are not the model's failures and no table counts them; errors
  of kcgen's own (a tool failure, a worker that died) stay in the tables as failures and are listed
  with their reasons too;
- the flagged results (kcgen.verify: much faster than the item's reference kernel, or at or below
  its roofline bound), one line each, for a human to look at; their numbers are in every table
  unchanged.
With `compare`, a second run directory's success and fast_p sit beside the first's.
"""
from __future__ import annotations

import base64
import csv
import html
import json
import statistics
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from .bench import COLUMNS, read_rows

FAST_P = (0.0, 1.0, 1.5, 2.0)
CONFIGS = ("C1", "C2", "C3", "C4", "C5")


@dataclass
class Table:
    title: str
    header: list[str]
    rows: list[list[str]]
    note: str = ""

    def markdown(self) -> str:
        out = [f"### {self.title}", "", "| " + " | ".join(self.header) + " |",
               "|" + "|".join("---" for _ in self.header) + "|"]
        out += ["| " + " | ".join(r) + " |" for r in self.rows]
        return "\n".join(out + ([f"\n{self.note}"] if self.note else []) + [""])

    def html(self) -> str:
        head = "".join(f"<th>{html.escape(h)}</th>" for h in self.header)
        body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>" for r in self.rows)
        note = f"<p class='note'>{html.escape(self.note)}</p>" if self.note else ""
        return f"<h3>{html.escape(self.title)}</h3><table><tr>{head}</tr>{body}</table>{note}"

    def text(self) -> str:
        widths = [max(len(h), *(len(r[i]) for r in self.rows)) if self.rows else len(h)
                  for i, h in enumerate(self.header)]
        line = lambda cells: "  ".join(c.ljust(w) for c, w in zip(cells, widths))  # noqa: E731
        return "\n".join([self.title, line(self.header)] + [line(r) for r in self.rows])


def _pct(k: int, n: int) -> str:
    return f"{100 * k / n:.0f}%" if n else "-"


def _done(rows: list[dict]) -> list[dict]:
    """The finished rows, `success` meaning verified success (see verified_only)."""
    return verified_only([r for r in rows if r["status"] in ("done", "error")])[0]


def verified_only(rows: list[dict]) -> tuple[list[dict], int]:
    """The rows with `success` set only where the final verification passed, and how many rows
    claimed a success without one."""
    out, unverified = [], 0
    for r in rows:
        ok = bool(r.get("success")) and bool(r.get("verified"))
        unverified += bool(r.get("success")) and not ok
        out.append(r if ok == bool(r.get("success")) else {**r, "success": 0, "turns_to_first_success": None})
    return out, unverified


def flags(row: dict) -> list[str]:
    """A row's suspicious flags (the column holds a JSON list)."""
    try:
        got = json.loads(row.get("suspicious") or "[]")
    except (TypeError, ValueError):
        return [str(row.get("suspicious"))]
    return [str(f) for f in got] if isinstance(got, list) else [str(got)]


def flagged_table(rows: list[dict]) -> Table:
    """Every verified success with a suspicious flag, for a human to look at."""
    from .verify import ROOFLINE_MARGIN, SUSPICIOUS_SPEEDUP
    body = []
    for r in rows:
        if r["success"] and flags(r):
            body.append([r["model"], r["target"], r["task"], r["config"], f"t{r['trial']}", str(r["best_cycles"]),
                         f"{r['speedup']:.2f}x" if r.get("speedup") else "-", "; ".join(flags(r)),
                         str(r.get("trajectory") or "")])
    note = (f"A verified kernel is flagged when it is more than {SUSPICIOUS_SPEEDUP:g}x faster than the item's "
            f"reference kernel, below the roofline bound, or at {100 * ROOFLINE_MARGIN:.0f}% of it or more while "
            f"faster than the reference. Flagged numbers are reported unchanged in every table; "
            + (f"{len(body)} result(s) to look at." if body else "none was flagged."))
    return Table("Flagged for a human to look at (suspicious results)",
                 ["model", "target", "task", "config", "trial", "cycles", "speedup", "why", "trajectory"], body, note)


def errors_table(rows: list[dict]) -> Table:
    """Every cell that ended in an error, infrastructure errors first, with its reason."""
    body = [[r.get("error_kind") or "harness", r["model"], r["target"], r["task"], r["config"], f"t{r['trial']}",
             (r.get("error") or "no reason recorded").splitlines()[0][:200]]
            for r in sorted(rows, key=lambda r: (r.get("error_kind") != "infrastructure", r["model"], r["target"],
                                                 r["task"], r["config"], r["trial"]))]
    return Table("Errors", ["kind", "model", "target", "task", "config", "trial", "reason"], body,
                 "infrastructure: the model could not be reached or refused the request (not counted in any table; "
                 "rerunning the same `kcgen bench` retries it); harness: kcgen's own failure (counted as a failed run).")


def success_tables(rows: list[dict]) -> list[Table]:
    """Per target: task rows (with level), model columns, 'successes/attempts'; level totals; overall."""
    tables = []
    models = sorted({r["model"] for r in rows})
    for target in sorted({r["target"] for r in rows}):
        mine = [r for r in rows if r["target"] == target]
        cells = defaultdict(lambda: [0, 0])
        levels: dict[str, int] = {}
        for r in mine:
            c = cells[(r["task"], r["model"])]
            c[0] += int(bool(r["success"]))
            c[1] += 1
            levels[r["task"]] = r["level"] or 0
        body = []
        for task in sorted(levels, key=lambda t: (levels[t], t)):
            body.append([f"L{levels[task]}", task] + [f"{cells[(task, m)][0]}/{cells[(task, m)][1]}"
                                                     if cells[(task, m)][1] else "-" for m in models])
        for level in sorted(set(levels.values())):
            tot = [sum(cells[(t, m)][i] for t in levels if levels[t] == level) for m in models for i in (0, 1)]
            body.append([f"L{level}", "**total**"] + [f"{tot[2 * j]}/{tot[2 * j + 1]} ({_pct(tot[2 * j], tot[2 * j + 1])})"
                                                      for j in range(len(models))])
        overall = [(sum(cells[(t, m)][0] for t in levels), sum(cells[(t, m)][1] for t in levels)) for m in models]
        body.append(["", "**overall**"] + [f"{k}/{n} ({_pct(k, n)})" for k, n in overall])
        tables.append(Table(f"Success on {target} (successes / configs x trials)", ["level", "task"] + models, body))
    return tables


def fast_p(rows: list[dict], p: float) -> tuple[int, int]:
    n = len(rows)
    k = sum(1 for r in rows if r["success"] and r["speedup"] is not None and (r["speedup"] > p if p else True))
    return k, n


def fast_p_table(rows: list[dict], label: str = "") -> Table:
    body = []
    for model in sorted({r["model"] for r in rows}):
        for target in sorted({r["target"] for r in rows}):
            mine = [r for r in rows if r["model"] == model and r["target"] == target]
            if mine:
                body.append([model, target] + [_pct(*fast_p(mine, p)) for p in FAST_P])
    return Table(f"fast_p{label}: correct and more than p x faster than the baseline",
                 ["model", "target"] + [f"fast_{p:g}" for p in FAST_P], body,
                 "fast_0 is the success rate; speedup = baseline cycles / kernel cycles.")


def per_config_tables(rows: list[dict], field: str, title: str, fmt) -> list[Table]:
    """Per model and target: tasks x configs of the median `field` over successful trials, ✗ if none."""
    tables = []
    for model in sorted({r["model"] for r in rows}):
        for target in sorted({r["target"] for r in rows}):
            mine = [r for r in rows if r["model"] == model and r["target"] == target]
            if not mine:
                continue
            body = []
            for task in sorted({r["task"] for r in mine}):
                line = [task]
                for c in CONFIGS:
                    cell = [r for r in mine if r["task"] == task and r["config"] == c]
                    vals = [r[field] for r in cell if r["success"] and r[field] is not None]
                    line.append(fmt(statistics.median(vals)) if vals else ("✗" if cell else ""))
                body.append(line)
            tables.append(Table(f"{title}: {model} on {target}", ["task"] + list(CONFIGS), body))
    return tables


def buckets(rows: list[dict]) -> dict[str, dict[str, int]]:
    """Per model: how many cells fall in >= 2x, 1-2x, < 1x (slowdown), failed."""
    out: dict[str, dict[str, int]] = {}
    for r in rows:
        b = out.setdefault(r["model"], {">= 2x": 0, "1-2x": 0, "< 1x": 0, "failed": 0})
        s = r["speedup"] if r["success"] else None
        b["failed" if s is None else ">= 2x" if s >= 2 else "1-2x" if s >= 1 else "< 1x"] += 1
    return out


def effort_table(rows: list[dict]) -> Table:
    body = []
    for model in sorted({r["model"] for r in rows}):
        mine = [r for r in rows if r["model"] == model]
        firsts = [r["turns_to_first_success"] for r in mine if r["turns_to_first_success"]]
        mean = lambda k: statistics.mean([r[k] or 0 for r in mine]) if mine else 0  # noqa: E731
        costs = [r["cost"] for r in mine]
        cost = "unknown" if any(c is None for c in costs) else f"${sum(costs):.4f}"
        body.append([model + (" (scripted)" if any(r["scripted"] for r in mine) else ""), str(len(mine)),
                     f"{statistics.mean(firsts):.1f}" if firsts else "-", f"{mean('turns'):.1f}",
                     f"{mean('tokens_in'):.0f}", f"{mean('tokens_out'):.0f}", f"{mean('tokens_reasoning'):.0f}", cost])
    return Table("Turns and tokens per run", ["model", "runs", "turns to first success", "turns", "tokens in",
                                              "tokens out", "tokens reasoning", "total cost"], body)


# ---- plots ------------------------------------------------------------------------------------------------
def _plots(rows: list[dict], outdir: Path) -> list[Path]:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    paths = []
    models = sorted({r["model"] for r in rows})
    targets = sorted({r["target"] for r in rows})
    # success rate per target and model
    fig, ax = plt.subplots(figsize=(7, 3.5))
    width = 0.8 / max(len(models), 1)
    for i, m in enumerate(models):
        rates = []
        for t in targets:
            mine = [r for r in rows if r["model"] == m and r["target"] == t]
            rates.append(100 * sum(bool(r["success"]) for r in mine) / len(mine) if mine else 0)
        ax.bar([j + i * width for j in range(len(targets))], rates, width, label=m)
    ax.set_xticks([j + width * (len(models) - 1) / 2 for j in range(len(targets))], targets)
    ax.set_ylabel("success %")
    ax.set_ylim(0, 100)
    ax.legend(fontsize=7)
    ax.set_title("Success rate per target")
    paths.append(_save(fig, outdir / "success.png"))
    # speedup buckets per model
    fig, ax = plt.subplots(figsize=(7, 3.5))
    b = buckets(rows)
    bottom = [0] * len(models)
    for name, colour in ((">= 2x", "#2b8a3e"), ("1-2x", "#8ce99a"), ("< 1x", "#ffa94d"), ("failed", "#e03131")):
        vals = [b[m][name] for m in models]
        ax.bar(models, vals, bottom=bottom, label=name, color=colour)
        bottom = [x + y for x, y in zip(bottom, vals)]
    ax.set_ylabel("cells")
    ax.legend(fontsize=7)
    ax.set_title("Speedup over the baseline")
    paths.append(_save(fig, outdir / "speedup_buckets.png"))
    # fast_p curves
    fig, ax = plt.subplots(figsize=(7, 3.5))
    ps = [x / 10 for x in range(0, 41)]
    for m in models:
        mine = [r for r in rows if r["model"] == m]
        ax.plot(ps, [100 * fast_p(mine, p)[0] / max(len(mine), 1) for p in ps], label=m)
    ax.set_xlabel("p (speedup threshold)")
    ax.set_ylabel("fast_p %")
    ax.legend(fontsize=7)
    ax.set_title("fast_p")
    paths.append(_save(fig, outdir / "fast_p.png"))
    # tokens per run
    fig, ax = plt.subplots(figsize=(7, 3.5))
    for i, key in enumerate(("tokens_in", "tokens_out", "tokens_reasoning")):
        vals = [statistics.mean([r[key] or 0 for r in rows if r["model"] == m]) for m in models]
        ax.bar([j + i * 0.27 for j in range(len(models))], vals, 0.27, label=key.replace("_", " "))
    ax.set_xticks([j + 0.27 for j in range(len(models))], models)
    ax.set_yscale("log")
    ax.legend(fontsize=7)
    ax.set_title("Tokens per run (mean)")
    paths.append(_save(fig, outdir / "tokens.png"))
    plt.close("all")
    return paths


def _save(fig, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return path


# ---- the report -------------------------------------------------------------------------------------------
@dataclass
class Report:
    markdown: Path
    html: Path
    csv: Path
    plots: list[Path]
    summary: str  # the overall table as plain text


def write(rundir: Path, compare: Optional[Path] = None) -> Report:
    """The report of a bench run directory, with a co-design section for every `kcgen codesign` session
    under it (its summary.json); a directory of co-design sessions alone gives that section alone."""
    rundir = Path(rundir)
    finished = [r for r in read_rows(rundir) if r["status"] in ("done", "error")]
    infra = [r for r in finished if r.get("error_kind") == "infrastructure"]
    rows, unverified = verified_only([r for r in finished if r.get("error_kind") != "infrastructure"])
    sessions = codesign_sessions(rundir)
    if not rows and not sessions and not infra:
        raise FileNotFoundError(f"{rundir / 'results.sqlite'} holds no finished runs (and {rundir} no co-design "
                                f"session's summary.json)")
    tables: list[Table] = []
    flagged = flagged_table(rows)
    if rows:
        tables = success_tables(rows) + [fast_p_table(rows), flagged]
        tables += per_config_tables(rows, "speedup", "Speedup over the baseline", lambda v: f"{v:.2f}x")
        tables += per_config_tables(rows, "roofline_fraction", "Fraction of the roofline", lambda v: f"{100 * v:.0f}%")
        tables.append(effort_table(rows))
        b = buckets(rows)
        tables.append(Table("Speedup buckets (cells)", ["model", ">= 2x", "1-2x", "< 1x", "failed"],
                            [[m] + [str(v) for v in b[m].values()] for m in sorted(b)]))
    errors = errors_table(infra + [r for r in rows if r["status"] == "error"])
    if errors.rows:
        tables.append(errors)
    if sessions:
        tables.append(codesign_table(sessions))
    if compare is not None:
        other = _done(read_rows(Path(compare)))
        tables.append(_compare_table(rows, other, rundir, Path(compare)))
        tables.append(fast_p_table(other, f" ({Path(compare).name})"))
    plots = _plots(rows, rundir) if rows else []
    scripted = any(r["scripted"] for r in rows) or any(s.get("scripted") for s in sessions)
    head = (f"# KernelCraft benchmark report: {rundir.name}\n\n{len(rows)} runs, "
            f"{len({r['model'] for r in rows})} model(s), {len({r['target'] for r in rows})} target(s)"
            + (f", {len(sessions)} co-design session(s)" if sessions else "") + ". "
            "A success is a verified one: the run's best kernel passed the final verification on fresh inputs "
            "(OS seeds the model never saw, every value profile)."
            + (f"\n\n**{unverified} run(s) recorded a success without a final verification (runs from before it "
               "existed): counted as failures.**" if unverified else "")
            + (f"\n\n**{len(infra)} run(s) could not run (infrastructure errors: the model could not be reached "
               "or refused the request): not counted as failures; see 'Errors' for the reasons.**" if infra else "")
            + (f"\n\n**{len(flagged.rows)} result(s) are flagged as suspicious: see 'Flagged for a human to look "
               "at'.**" if flagged.rows else "")
            + ("\n\n**Scripted (offline) models took part: their results show the harness working, not a "
               "model's ability.**" if scripted else ""))
    md = [head, ""] + [t.markdown() for t in tables] + [f"![{p.stem}]({p.name})" for p in plots]
    md_path = rundir / "report.md"
    md_path.write_text("\n".join(md) + "\n", encoding="utf-8")
    html_path = rundir / "report.html"
    html_path.write_text(_html(head, tables, plots), encoding="utf-8")
    csv_path = rundir / "results.csv"
    with open(csv_path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        names = [n for n, _ in COLUMNS]
        w.writerow(names)
        w.writerows([[r.get(n) for n in names] for r in rows])
    text = _overall_table(rows).text() if rows else ""
    if sessions:
        text += ("\n" if text else "") + codesign_table(sessions).text()
    if flagged.rows:
        text += f"\n{len(flagged.rows)} flagged result(s) for a human to look at: see the report"
    if infra:
        text += (f"\n{len(infra)} run(s) could not run (infrastructure errors, not counted): "
                 + "; ".join(sorted({(r.get('error') or '?').splitlines()[0][:120] for r in infra})))
    if unverified:
        text += f"\n{unverified} unverified success(es) (runs from before the final verification) counted as failures"
    return Report(md_path, html_path, csv_path, plots, text)


def codesign_sessions(rundir: Path) -> list[dict]:
    """The summary.json of every co-design session under `rundir` (kcgen codesign --out), by path."""
    out = []
    for path in sorted(Path(rundir).rglob("summary.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and {"base_cycles", "extended_cycles", "accepted"} <= data.keys():
            out.append({**data, "session": str(path.parent.relative_to(rundir)) or "."})
    return out


def codesign_table(sessions: list[dict]) -> Table:
    """Per session: the cycles before and after, and what the accepted instructions cost in silicon
    (kcgen.hwcost: area in lanes of the base target's vector unit, minimum latency from the critical path)."""
    def num(v, fmt):
        return fmt.format(v) if isinstance(v, (int, float)) else "-"
    rows = []
    for s in sessions:
        lat = s.get("min_latency") or {}
        declared = {m: c.get("declared") for m, c in (s.get("hw_cost") or {}).items()}
        rows.append([s["session"], s.get("target", "?"), s.get("task", "?"), s.get("config", "?"), s.get("model", "?"),
                     ", ".join(s.get("accepted") or []) or "none", str(len(s.get("rejected") or [])),
                     num(s.get("base_cycles"), "{:,}"), num(s.get("extended_cycles"), "{:,}"),
                     num(s.get("speedup"), "{:.2f}x"), num(s.get("added_area"), "{:.2f}"),
                     ", ".join(f"{m} {v} (declared {declared.get(m, '?')})" for m, v in lat.items()) or "-",
                     num(s.get("speedup_per_area"), "{:.2f}")])
    return Table("Co-design sessions", ["session", "target", "task", "config", "model", "accepted", "rejected",
                                        "base cycles", "extended cycles", "speedup", "added area (base lanes)",
                                        "min latency (cycles)", "speedup per area"], rows,
                 note="Added area is in lanes of the base target's vector unit, minimum latency the critical path "
                      "of the new datapath (docs/codesign.md, 'Hardware cost model'); speedup per area above 1 pays "
                      "for its silicon better than widening the base would.")


def _overall_table(rows: list[dict]) -> Table:
    body = []
    for model in sorted({r["model"] for r in rows}):
        for target in sorted({r["target"] for r in rows}):
            mine = [r for r in rows if r["model"] == model and r["target"] == target]
            if not mine:
                continue
            ok = [r for r in mine if r["success"]]
            speed = [r["speedup"] for r in ok if r["speedup"]]
            body.append([model, target, f"{len(ok)}/{len(mine)}", _pct(len(ok), len(mine)),
                         f"{statistics.geometric_mean(speed):.2f}x" if speed else "-",
                         _pct(*fast_p(mine, 1.0))])
    return Table("Summary", ["model", "target", "success", "rate", "geomean speedup", "fast_1"], body)


def _compare_table(a: list[dict], b: list[dict], na: Path, nb: Path) -> Table:
    body = []
    keys = sorted({(r["model"], r["target"]) for r in a} | {(r["model"], r["target"]) for r in b})
    for model, target in keys:
        ra = [r for r in a if r["model"] == model and r["target"] == target]
        rb = [r for r in b if r["model"] == model and r["target"] == target]
        sa, sb = sum(bool(r["success"]) for r in ra), sum(bool(r["success"]) for r in rb)
        body.append([model, target, f"{sa}/{len(ra)} ({_pct(sa, len(ra))})", f"{sb}/{len(rb)} ({_pct(sb, len(rb))})",
                     _pct(*fast_p(ra, 1.0)), _pct(*fast_p(rb, 1.0))])
    return Table(f"{na.name} vs {nb.name}", ["model", "target", f"success {na.name}", f"success {nb.name}",
                                           f"fast_1 {na.name}", f"fast_1 {nb.name}"], body)


def _html(head: str, tables: list[Table], plots: list[Path]) -> str:
    title, _, rest = head.partition("\n\n")
    imgs = "".join(f"<figure><img alt='{p.stem}' src='data:image/png;base64,"
                   f"{base64.b64encode(p.read_bytes()).decode()}'></figure>" for p in plots)
    style = ("body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;color:#222}"
             "table{border-collapse:collapse;margin:.5em 0 1.5em}td,th{border:1px solid #ccc;padding:3px 8px;"
             "text-align:right}td:first-child,th:first-child{text-align:left}.note{color:#555;font-size:90%}"
             "img{max-width:100%}")
    body = "".join(t.html() for t in tables)
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title.lstrip('# '))}</title>"
            f"<style>{style}</style></head><body><h1>{html.escape(title.lstrip('# '))}</h1>"
            f"<p>{html.escape(rest).replace('**', '')}</p>{body}{imgs}</body></html>\n")

