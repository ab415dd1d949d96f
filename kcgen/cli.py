"""`kcgen`: the KernelCraft command line."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import click

import isadl
from isadl import canonical

REPO = Path(__file__).resolve().parent.parent


def parse_defines(values: tuple[str, ...]) -> dict[str, int]:
    out = {}
    for item in values:
        name, sep, value = item.partition("=")
        if not sep or not name.isidentifier():
            raise click.UsageError(f"-D {item}: expected NAME=VALUE")
        try:
            out[name] = int(value.replace("_", ""), 0)
        except ValueError:
            raise click.UsageError(f"-D {item}: value must be an integer") from None
    return out


def _report(exc: isadl.IsaError) -> None:
    click.echo(str(exc), err=True)
    n = len(exc.diagnostics)
    if n > 1:
        click.echo(f"{n} errors", err=True)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def main() -> None:
    """KernelCraft: ISA descriptions → assembler, simulator, docs; agent kernel benchmark."""


@main.command("check")
@click.argument("files", nargs=-1, required=True)
@click.option("-D", "defines", multiple=True, metavar="NAME=VALUE", help="Override a parameter.")
def check_cmd(files: tuple[str, ...], defines: tuple[str, ...]) -> None:
    """Check ISA descriptions; print a one-line summary per isa (exit 1 on any error)."""
    d = parse_defines(defines)
    sys.exit(_check_files(files, d, lambda f, spec: f"{isadl.find_target(f)}: {spec.summary()}"))


def _check_files(files, defines: dict, line) -> int:
    """Check each file, echo `line(file, spec)` per isa and every error; the exit status."""
    failed = False
    for f in files:
        try:
            for spec in isadl.load_all(f, defines):
                click.echo(line(f, spec))
        except isadl.IsaError as exc:
            _report(exc)
            failed = True
    return 1 if failed else 0


@main.command("ir")
@click.argument("file")
@click.option("-D", "defines", multiple=True, metavar="NAME=VALUE", help="Override a parameter.")
@click.option("--isa", "isa_name", default=None, help="Which isa block of the file (default: the last).")
@click.option("--hash", "show_hash", is_flag=True, help="Print only the content hash.")
def ir_cmd(file: str, defines: tuple[str, ...], isa_name: str | None, show_hash: bool) -> None:
    """Print the canonical JSON IR of an ISA."""
    spec = _load_target(file, defines, isa_name)
    click.echo(canonical.content_hash(spec) if show_hash else canonical.dumps(spec))


def _load_target(target: str, defines: tuple[str, ...], isa_name: str | None = None, status: int = 1):
    """The checked ISA, or its located errors on stderr and exit `status`."""
    try:
        return isadl.load(target, parse_defines(defines), isa_name)
    except isadl.IsaError as exc:
        _report(exc)
        sys.exit(status)


@main.command("asm")
@click.argument("target")
@click.argument("source", type=click.Path(dir_okay=False))
@click.option("-o", "output", type=click.Path(dir_okay=False), help="Write the flat binary image here.")
@click.option("--hex", "as_hex", is_flag=True, help="Print one instruction word per line, lowest address first.")
@click.option("-D", "defines", multiple=True, metavar="NAME=VALUE", help="Override a parameter.")
def asm_cmd(target: str, source: str, output: str | None, as_hex: bool, defines: tuple[str, ...]) -> None:
    """Assemble SOURCE for TARGET (a name such as plena, or a path to a .isa file)."""
    from kcgen.asm import Assembler
    spec = _load_target(target, defines)
    try:
        text = Path(source).read_text(encoding="utf-8-sig")  # editors may save a byte-order mark
    except OSError as exc:
        click.echo(f"{source}: error: cannot read file: {exc.strerror}", err=True)
        sys.exit(1)
    try:
        program = Assembler(spec).assemble(text, source)
    except isadl.IsaError as exc:
        _report(exc)
        sys.exit(1)
    for w in program.warnings:
        click.echo(w.render({source: text}), err=True)
    if as_hex:
        for p in program.placed:
            data = program.sections[".text"].data
            off = p.address - program.text.base
            order = "little" if program.endian == "little" else "big"
            click.echo(f"{int.from_bytes(data[off:off + p.size], order):0{2 * p.size}x}")
    if output:
        Path(output).write_bytes(program.image())
    if not as_hex and not output:
        click.echo(f"{source}: {len(program.placed)} instructions, {len(program.image())} bytes "
                   f"at {program.entry:#x}; write them with -o FILE or --hex")


@main.command("schedule")
@click.argument("target")
@click.argument("source", type=click.Path(dir_okay=False))
@click.option("-o", "output", type=click.Path(dir_okay=False), help="Write the scheduled program here (default: stdout).")
@click.option("--no-pipeline", is_flag=True, help="Pack bundles only; leave loops unpipelined.")
@click.option("-D", "defines", multiple=True, metavar="NAME=VALUE", help="Override a parameter.")
def schedule_cmd(target: str, source: str, output: str | None, no_pipeline: bool, defines: tuple[str, ...]) -> None:
    """Pack SOURCE into VLIW bundles and software-pipeline its counted inner loops (docs/schedule.md)."""
    from kcgen.schedule import ScheduleError, schedule
    spec = _load_target(target, defines)
    try:
        text = Path(source).read_text(encoding="utf-8-sig")
    except OSError as exc:
        click.echo(f"{source}: error: cannot read file: {exc.strerror}", err=True)
        sys.exit(1)
    try:
        out = schedule(spec, text, pipeline=not no_pipeline, path=source)
    except ScheduleError as exc:
        click.echo(f"{source}: error: {exc}", err=True)
        sys.exit(1)
    if output:
        Path(output).write_text(out, encoding="utf-8")
    else:
        click.echo(out, nl=False)


@main.command("disasm")
@click.argument("target")
@click.argument("binary", type=click.Path(dir_okay=False))
@click.option("--base", default="0", help="Address of the first byte (default 0).")
@click.option("-D", "defines", multiple=True, metavar="NAME=VALUE", help="Override a parameter.")
def disasm_cmd(target: str, binary: str, base: str, defines: tuple[str, ...]) -> None:
    """Disassemble a flat binary: `ADDR: WORD  TEXT` per instruction."""
    from kcgen.asm.disassembler import Disassembler
    spec = _load_target(target, defines)
    try:
        address = int(base, 0)
    except ValueError:
        raise click.UsageError(f"--base {base}: expected an integer address") from None
    try:
        data = Path(binary).read_bytes()
    except OSError as exc:
        click.echo(f"{binary}: error: cannot read file: {exc.strerror}", err=True)
        sys.exit(1)
    click.echo(Disassembler(spec).listing(data, address), nl=False)


@main.command("demo")
@click.option("--out", "rundir", type=click.Path(file_okay=False), default=None,
              help="Run directory of the demo benchmark (default: runs/demo-<date>-<time>).")
@click.option("--workers", default=None, type=click.IntRange(1, 64), help="Parallel runs (default: CPUs).")
def demo_cmd(rundir, workers) -> None:
    """The offline showcase: check every target and language fixture, build every target
    (simulator, docs, isa.json), then run the benchmark with the offline scripted/reference model
    over every Level-1 task at C1 on every target it applies to, and write the report."""
    import time
    targets = sorted((REPO / "targets").glob("*.isa"))
    files = targets + sorted((REPO / "tests" / "isadl" / "fixtures").glob("*.isa"))
    click.echo(f"Checking {len(files)} ISA descriptions")
    status = _check_files(files, {}, lambda f, spec: f"  {f.relative_to(REPO)}: {spec.summary()}  "
                                                     f"[{canonical.content_hash(spec)[:12]}]")
    if status == 0 and targets:
        import multiprocessing
        import os
        from concurrent.futures import ProcessPoolExecutor
        click.echo(f"Building {len(targets)} targets")
        t0 = time.perf_counter()
        workers = max(1, min(len(targets), os.cpu_count() or 1))
        with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as pool:
            jobs = [(f, pool.submit(_build_one, str(f))) for f in targets]
            for f, job in jobs:
                ok, text = job.result()
                click.echo(f"  {f.stem}: {text}", err=not ok)
                status |= 0 if ok else 1
        click.echo(f"  all targets in {time.perf_counter() - t0:.1f} s (cache: {_cache_root()})")
    if status == 0:
        status = _demo_bench(Path(rundir or Path("runs") / time.strftime("demo-%Y%m%d-%H%M%S")), workers)
    sys.exit(status)


def _demo_bench(rundir: Path, workers) -> int:
    import os
    import time
    from kcgen import bench, report
    cells = bench.expand(["scripted/reference"], bench.TARGETS, "level1", "C1", 1)
    todo, _ = bench.to_run(cells, rundir, False)
    click.echo(f"Benchmark: scripted/reference (an offline scripted model, no API key) on {len(cells)} cells: "
               f"every Level-1 task at C1 on every target it applies to")
    t0 = time.perf_counter()
    progress = _run_bench(cells, len(todo), rundir, bench.Options(), workers or os.cpu_count() or 1)
    rep = report.write(rundir)
    click.echo(rep.summary)
    click.echo(f"benchmark wall time {time.perf_counter() - t0:.0f} s; report: {rep.html}")
    click.echo("The same with a real model: kcgen bench --models openai/gpt-5.2 --tasks level1 --configs all "
               f"--out runs/gpt")
    return 1 if progress.errors else 0


def _cache_root():
    from kcgen.sim.build import cache_root
    return cache_root()


def _build_one(path: str) -> tuple[bool, str]:
    """Build one target (in a worker process): (ok, what to print)."""
    import time
    from kcgen.sim.build import BuildError
    from kcgen.target import build_target
    t0 = time.perf_counter()
    try:
        t = build_target(isadl.load(path))
    except (BuildError, isadl.IsaError) as exc:
        return False, f"error: {exc}"
    how = "cached" if t.built.cached else "built"
    return True, f"{how} in {time.perf_counter() - t0:.1f} s -> {t.directory}"


@main.command("docs")
@click.argument("target")
@click.option("-o", "--output", "outdir", default=None, metavar="DIR",
              help="Output directory (default: ./<isa-name>-docs).")
@click.option("--format", "formats", type=click.Choice(["md", "html", "txt", "all"]), multiple=True,
              default=("all",), show_default=True, help="What to write; may be repeated.")
@click.option("-D", "defines", multiple=True, metavar="NAME=VALUE", help="Override a parameter.")
@click.option("--isa", "isa_name", default=None, help="Which isa block of the file (default: the last).")
def docs_cmd(target: str, outdir: str | None, formats: tuple[str, ...], defines: tuple[str, ...],
             isa_name: str | None) -> None:
    """Generate an ISA's documentation: Markdown, standalone HTML and the text index (index.txt)."""
    from kcgen import docs
    spec = _load_target(target, defines, isa_name)
    out = Path(outdir) if outdir else Path(f"{spec.isa.name}-docs")
    wanted = docs.FORMATS if "all" in formats else tuple(f for f in docs.FORMATS if f in formats)
    try:
        paths = docs.write_docs(spec, out, wanted)
    except OSError as exc:
        click.echo(f"error: cannot write {exc.filename or out}: {exc.strerror}", err=True)
        sys.exit(1)
    for p in paths:
        click.echo(str(p))


@main.command("grep")
@click.argument("target")
@click.argument("pattern")
@click.option("-C", "--context", default=0, type=click.IntRange(min=0), show_default=True,
              help="Also show N neighbouring records on each side.")
@click.option("-i", "--ignore-case", is_flag=True, help="Match case-insensitively.")
@click.option("-m", "--max-matches", default=50, type=click.IntRange(min=1), show_default=True,
              help="Show at most N matching records.")
@click.option("--max-chars", default=8000, type=click.IntRange(min=1), show_default=True,
              help="Stop after about N characters of output.")
@click.option("-D", "defines", multiple=True, metavar="NAME=VALUE", help="Override a parameter.")
@click.option("--isa", "isa_name", default=None, help="Which isa block of the file (default: the last).")
def grep_cmd(target: str, pattern: str, context: int, ignore_case: bool, max_matches: int, max_chars: int,
             defines: tuple[str, ...], isa_name: str | None) -> None:
    """Search an ISA's documentation index with a regex; print whole matching records.

    Exit status as grep: 0 when something matched, 1 when nothing did, 2 on an error."""
    from kcgen import docs
    from kcgen.docs.search import compile_pattern
    try:
        compile_pattern(pattern, ignore_case)
    except ValueError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(2)
    spec = _load_target(target, defines, isa_name, status=2)  # 1 means "no match", as for grep
    found = docs.grep(docs.render_index(spec), pattern, context=context, ignore_case=ignore_case,
                      max_matches=max_matches, max_chars=max_chars)
    if not found:
        sys.exit(1)
    click.echo(found, nl=False)


@main.command("build")
@click.argument("target")
@click.option("-D", "defines", multiple=True, metavar="NAME=VALUE", help="Override a parameter.")
@click.option("--force", is_flag=True, help="Rebuild even when the cache has this target.")
def build_cmd(target: str, defines: tuple[str, ...], force: bool) -> None:
    """Build TARGET's simulator, docs, isa.json and encoding tables; print the artifact directory."""
    from kcgen.sim.build import BuildError, cached_directory
    if not force:  # a cache hit needs neither the Spec nor the generator: the Spec's identity will do
        try:
            ident = isadl.cached_identity(target, parse_defines(defines))
        except isadl.IsaError:
            ident = None
        if ident is not None and (cached_directory(*ident) / "artifacts.done").exists():
            click.echo(str(cached_directory(*ident)))
            return
    from kcgen.target import build_target
    spec = _load_target(target, defines)
    try:
        t = build_target(spec, force=force)
    except BuildError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(1)
    click.echo(str(t.directory))


@main.command("run")
@click.argument("target")
@click.argument("source", type=click.Path(dir_okay=False))
@click.option("--max-steps", default=10_000_000, type=click.IntRange(min=1), show_default=True,
              help="Stop with status 'budget' after this many instructions.")
@click.option("--seconds", default=60.0, type=click.FloatRange(min=0, min_open=True), show_default=True,
              help="Stop with status 'timeout' after this much wall-clock time.")
@click.option("--set", "sets", multiple=True, metavar="REG=VALUE", help="Set a register or state before running.")
@click.option("--load", "loads", multiple=True, metavar="MEM@ADDR=FILE.npy",
              help="Copy a numpy array into a memory from element ADDR.")
@click.option("--dump", "dumps", multiple=True, metavar="MEM@ADDR:COUNT", help="Print COUNT elements of a memory.")
@click.option("--trace", is_flag=True, help="Print every instruction as it retires, with what it wrote.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.option("-D", "defines", multiple=True, metavar="NAME=VALUE", help="Override a parameter.")
def run_cmd(target: str, source: str, max_steps: int, seconds: float, sets, loads, dumps, trace: bool,
            as_json: bool, defines: tuple[str, ...]) -> None:
    """Assemble SOURCE and run it on TARGET's simulator.

    Exit status: 0 when the program halted, 1 on an error in the input, 2 on a trap, 3 when the
    step budget ran out, 4 when the wall-clock limit did."""
    from kcgen import runcli
    spec = _load_target(target, defines)
    sys.exit(runcli.run(spec, source, max_steps, sets, loads, dumps, trace, as_json, seconds))


@main.command("tasks")
@click.option("--target", default=None, type=click.Choice(["plena", "amdnpu", "coral", "boom"]),
              help="Only the tasks of this target (shapes and dtypes as it sees them).")
@click.option("--level", default=None, type=click.IntRange(1, 3), help="Only this level.")
@click.option("--show", "show", default=None, metavar="TASK",
              help="Print TASK's statement on --target at --config as the agent's prompt gives it.")
@click.option("--config", default="C1", type=click.Choice(["C1", "C2", "C3", "C4", "C5"]), show_default=True)
def tasks_cmd(target: str | None, level: int | None, show: str | None, config: str) -> None:
    """List the benchmark tasks with their targets and the tensor shapes of each configuration."""
    from kcgen import taskspec
    try:
        specs = taskspec.all_tasks()
    except taskspec.TaskError as exc:
        _report(exc)
        sys.exit(1)
    if show:
        from kcgen.evaluation import LayoutError, layout_for, statement
        task = next((s for s in specs if s.name == show), None)
        if task is None or target is None or target not in task.targets:
            click.echo(f"error: --show needs a task and one of its targets (--target)"
                       + (f"; {show} applies to {', '.join(task.targets)}" if task else f"; no task '{show}'"), err=True)
            sys.exit(1)
        spec = _load_target(target, ())
        try:
            click.echo(statement(task, target, config, layout_for(spec, task, target, config), spec))
        except LayoutError as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(1)
        return
    for s in specs:
        if (level is not None and s.level != level) or (target is not None and target not in s.targets):
            continue
        targets = [target] if target else list(s.targets)
        click.echo(f"L{s.level} {s.name}  [{', '.join(f'{t}:{s.targets[t].dtype}' for t in targets)}]")
        for c in taskspec.CONFIGS:
            cfg = s.config(target, c) if target else s.configs[c]
            shapes = "  ".join(f"{t.name}[{', '.join(map(str, s.shape(t, cfg)))}]"
                               + (f":{s.dtype(target, t.name)}" if target else "")
                               + (f" (requantised >> {shift})" if target and
                                  (shift := s.requant_shift(target, t.name, cfg)) is not None else "")
                               for t in s.tensors)
            click.echo(f"    {c}  {shapes}")


@main.command("eval")
@click.argument("target")
@click.argument("task", required=False)
@click.argument("kernel", required=False, type=click.Path(dir_okay=False))
@click.option("--baseline", "kind", flag_value="baseline", help="Evaluate the item's own baseline kernel.")
@click.option("--reference", "kind", flag_value="reference", help="Evaluate the item's own reference kernel.")
@click.option("--all", "all_items", is_flag=True,
              help="Evaluate every item's baseline and reference on TARGET (one row per task and config).")
@click.option("--level", type=click.IntRange(1, 3), default=None, help="With --all: only this level's tasks.")
@click.option("--config", default="C1", type=click.Choice(["C1", "C2", "C3", "C4", "C5"]), show_default=True)
@click.option("--trials", default=None, type=click.IntRange(1, 100),
              help="Fresh input sets (default: one per value profile of the task).")
@click.option("--seed", default=None, type=int, help="Seed of the first trial (default: random; printed).")
@click.option("--as", "as_target", default=None, help="Which of the task's targets TARGET stands for "
                                                    "(default: TARGET's name), e.g. when TARGET is a .isa path.")
@click.option("--jobs", "-j", default=None, type=click.IntRange(1, 64),
              help="With --all: evaluation processes (default: the number of CPUs).")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.option("-D", "defines", multiple=True, metavar="NAME=VALUE", help="Override a parameter.")
def eval_cmd(target: str, task, kernel, kind, all_items: bool, level, config: str, trials: int, seed, as_target,
             jobs, as_json: bool, defines) -> None:
    """Evaluate KERNEL.s for TASK on TARGET: fresh random inputs per trial, compared with numpy.

    \b
    kcgen eval TARGET TASK KERNEL.s [--config C]   a kernel of yours
    kcgen eval TARGET TASK --baseline|--reference  the item's own kernels
    kcgen eval TARGET --all [--level N]            every item's baseline and reference

    Exit status: 0 when the kernel is correct (with --all: every item has a correct kernel), 1 when
    it is not or cannot be evaluated."""
    from kcgen import taskspec
    spec = _load_target(target, defines)
    key = as_target or spec.isa.name
    isa_path = isadl.find_target(target)
    if all_items:
        if task or kernel or kind:
            raise click.UsageError("--all takes no TASK, KERNEL, --baseline or --reference")
        _eval_all(isa_path, key, level, trials, seed, jobs, as_json, defines)
        return
    if task is None:
        raise click.UsageError("give TASK (and KERNEL.s, --baseline or --reference), or --all")
    if (kernel is None) == (kind is None):
        raise click.UsageError("give exactly one of KERNEL.s, --baseline and --reference")
    try:
        t = taskspec.load(task) if task.endswith(".yaml") else taskspec.find(task)
    except taskspec.TaskError as exc:
        _report(exc)
        sys.exit(1)
    except KeyError as exc:
        click.echo(f"error: {exc.args[0]}", err=True)
        sys.exit(1)
    if key not in t.targets:
        click.echo(f"error: task {t.name} does not apply to {key} (it applies to {', '.join(t.targets)})", err=True)
        sys.exit(1)
    if trials is not None and trials < len(t.profiles):
        click.echo(f"note: {trials} trial(s) draw only the profiles {', '.join(t.profiles[:trials])}; a benchmark "
                   f"evaluation draws all {len(t.profiles)}", err=True)
    from kcgen.evaluation import Evaluator
    with Evaluator() as ev:
        if kind:
            result = ev.result(ev.submit_own(kind, isa_path, t.path, key, config, defines=parse_defines(defines),
                                             trials=trials, seed=seed))
            if result is None:
                click.echo(f"error: {t.name} {config} on {key} has no {kind} kernel", err=True)
                sys.exit(1)
        else:
            try:
                text = Path(kernel).read_text(encoding="utf-8-sig")
            except OSError as exc:
                click.echo(f"{kernel}: error: cannot read file: {exc.strerror}", err=True)
                sys.exit(1)
            result = ev.evaluate(text, isa_path, t.path, key, config, defines=parse_defines(defines),
                                 trials=trials, seed=seed, path=kernel)
    if as_json:
        click.echo(json.dumps(result.as_json()))
    else:
        click.echo(f"{t.name} {config} on {key}{f' ({kind})' if kind else ''}: {result.summary()}")
        if result.seeds:
            click.echo(f"seeds {result.seeds} ({', '.join(result.profiles)})")
    sys.exit(0 if result.correct else 1)


def _eval_all(isa_path, target: str, level, trials: int, seed, jobs, as_json: bool, defines) -> None:
    """Every item's baseline and reference, evaluated in parallel worker processes."""
    import os
    from kcgen import taskspec
    from kcgen.evaluation import Evaluator
    tasks = [t for t in taskspec.all_tasks() if target in t.targets and (level is None or t.level == level)]
    if not tasks:
        click.echo(f"error: no tasks apply to {target}" + (f" at level {level}" if level else ""), err=True)
        sys.exit(1)
    items = [(t, c) for t in tasks for c in ("C1", "C2", "C3", "C4", "C5")]
    rows = []
    with Evaluator(workers=jobs or os.cpu_count() or 1) as ev:
        futures = {(t.name, c, kind): ev.submit_own(kind, isa_path, t.path, target, c,
                                                    defines=parse_defines(defines), trials=trials, seed=seed)
                   for t, c in items for kind in ("baseline", "reference")}
        for t, c in items:
            base, ref = (ev.result(futures[(t.name, c, kind)]) for kind in ("baseline", "reference"))
            rows.append({"task": t.name, "config": c,
                         "baseline_correct": base.correct if base else None,
                         "reference_correct": ref.correct if ref else None,
                         "baseline_cycles": base.cycles if base else None,
                         "reference_cycles": ref.cycles if ref else None,
                         "roofline_cycles": (base or ref).roofline_cycles if (base or ref) else None,
                         "error": next((r.error or r.trap or r.violation for r in (base, ref) if r and not r.correct
                                        and (r.error or r.trap or r.violation)), None)})
    if as_json:
        click.echo(json.dumps(rows))
    else:
        def mark(ok):
            return "-" if ok is None else "ok" if ok else "FAIL"
        w = max(len(r["task"]) for r in rows) + 2
        click.echo(f"{'task':<{w}}{'cfg':<5}{'baseline':>10}{'cycles':>11}{'reference':>11}{'cycles':>11}"
                   f"{'roofline':>11}")
        for r in rows:
            click.echo(f"{r['task']:<{w}}{r['config']:<5}{mark(r['baseline_correct']):>10}"
                       f"{r['baseline_cycles'] if r['baseline_cycles'] is not None else '-':>11}"
                       f"{mark(r['reference_correct']):>11}"
                       f"{r['reference_cycles'] if r['reference_cycles'] is not None else '-':>11}"
                       f"{r['roofline_cycles'] if r['roofline_cycles'] is not None else '-':>11}"
                       + (f"  {r['error'].splitlines()[0][:80]}" if r["error"] else ""))
        solved = sum(bool(r["baseline_correct"] or r["reference_correct"]) for r in rows)
        click.echo(f"{solved}/{len(rows)} items have a correct kernel")
    sys.exit(0 if all(r["baseline_correct"] or r["reference_correct"] for r in rows) else 1)


@main.command("agent")
@click.argument("target", type=click.Choice(["plena", "amdnpu", "coral", "boom"]))
@click.argument("task")
@click.option("--model", required=True, help="A litellm model, e.g. openai/gpt-5.2, anthropic/claude-sonnet-4-5, "
                                             "or scripted/reference (offline, no key).")
@click.option("--config", default="C1", type=click.Choice(["C1", "C2", "C3", "C4", "C5"]), show_default=True)
@click.option("--max-turns", type=click.IntRange(1, 200), default=None,
              help="Turn budget (default 15 / 20 / 25 for levels 1 / 2 / 3).")
@click.option("--thinking", is_flag=True, help="Ask for extended reasoning where the model supports it.")
@click.option("--one-shot", is_flag=True, help="Show a correct kernel of another task on the same target.")
@click.option("--out", type=click.Path(file_okay=False), default=None,
              help="Run directory (trajectory.jsonl, workspace/, best.s); rerunning on it resumes. "
                   "Default: runs/agent/TARGET-TASK-CONFIG-MODEL.")
@click.option("--api-base", default=None,
              help="Base URL of the model server (with --model openai/NAME, hosted_vllm/NAME or ollama_chat/NAME; "
                   "docs/agent.md, 'Running with a local model').")
@click.option("--trials", default=None, type=click.IntRange(1, 20),
              help="Input sets per evaluation in the loop (default: one per value profile). The final "
                   "verification always uses at least 10 over every profile.")
@click.option("--seed", default=None, type=int,
              help="For reproduction only: the loop's evaluations draw inputs from this seed (default: one "
                   "from the OS, recorded in the trajectory). The final verification always draws fresh OS seeds.")
@click.option("--timeout", default=600.0, type=click.FloatRange(0.1, 86400), show_default=True,
              help="Seconds to wait for one model request.")
@click.option("--attempts", default=6, type=click.IntRange(1, 20), show_default=True,
              help="Requests per model turn: rate limits, 5xx, timeouts and empty answers are retried with backoff.")
@click.option("--max-tokens", default=None, type=click.IntRange(16, 1_000_000),
              help="Output tokens per reply (default 16384); a reply cut there is recorded and the model asked "
                   "to continue.")
@click.option("--restart", is_flag=True, help="Set the run in --out aside (trajectory.N.jsonl) and start afresh "
                                              "(a run that ended on an infrastructure error is retried without it).")
def agent_cmd(target, task, model, config, max_turns, thinking, one_shot, out, api_base, trials, seed, timeout,
              attempts, max_tokens, restart) -> None:
    """Let MODEL write a kernel for TASK on TARGET, printing each turn and a final summary.

    The best kernel is verified at the end on fresh inputs the model never saw; only a verified
    kernel is a success. Exit status 0 when the run found a verified kernel, 1 when it did not, 2
    when it could not run (a bad setup, or the model could not be reached or refused the requests:
    rerunning the same command retries that)."""
    from kcgen.paths import agent
    from kcgen.redact import redact
    A = agent()
    out = Path(out or Path("runs") / "agent" / f"{target}-{task}-{config}-{model.replace('/', '_')}")
    settings = A.RunSettings(model=model, target=target, task=task, config=config, max_turns=max_turns,
                             thinking=thinking, one_shot=one_shot, out=out, api_base=api_base, trials=trials,
                             seed=seed, timeout=timeout, attempts=attempts,
                             **({"max_tokens": max_tokens} if max_tokens else {}))
    try:
        run = A.Run(settings, on_event=_print_event, restart=restart)
    except A.RunError as exc:
        click.echo(f"error: {redact(str(exc))}", err=True)
        sys.exit(2)
    summary = run.run()
    tag = " [scripted model]" if summary.get("scripted") else ""
    check = summary.get("verification") or {}
    if summary.get("infrastructure_error") and not summary.get("success"):
        click.echo(f"could not run: the model {model} could not be reached or refused the request after "
                   f"{summary['turns']} turns: {summary.get('error')}\n(rerun the same command to retry from there; "
                   f"trajectory {out / 'trajectory.jsonl'})", err=True)
        sys.exit(2)
    if summary.get("success"):
        speed = f", speedup {summary['speedup']:.2f}x over the baseline" if summary.get("speedup") else ""
        click.echo(f"success{tag}: {summary['best_cycles']} cycles{speed}, verified on {check.get('trials')} fresh "
                   f"trials; first correct at turn {summary['turns_to_first_success']} of {summary['turns']}; "
                   f"best kernel {summary['best_kernel']}")
        for flag in summary.get("suspicious") or []:
            click.echo(f"suspicious (a human should look): {flag}")
    elif check:
        why = str(check.get("error") or check.get("trap") or check.get("violation") or
                  f"{100 * (1 - (check.get('match_rate') or 0)):.1f}% of elements do not match").splitlines()[0][:200]
        click.echo(f"no verified kernel{tag}: the best kernel ({summary.get('loop_best_cycles')} cycles in the loop) "
                   f"failed the final verification on {check.get('trials')} fresh trials ({why}); "
                   f"kernel {summary['best_kernel']}")
    else:
        click.echo(f"no correct kernel{tag} after {summary['turns']} turns ({summary['stop']})"
                   + (f": {summary['error']}" if summary.get("error") else ""))
    cost = "unknown" if summary.get("cost") is None else f"${summary['cost']:.4f}"
    click.echo(f"tokens in {summary['tokens_in']}, out {summary['tokens_out']}, reasoning "
               f"{summary['tokens_reasoning']}; cost {cost}; trajectory {out / 'trajectory.jsonl'}")
    sys.exit(0 if summary.get("success") else 1)


def _print_event(rec: dict, phase: str = "") -> None:
    """One compact line per turn and per tool call."""
    kind = rec["type"]
    phase = f"{phase} " if phase else ""
    if kind == "assistant":
        text = " ".join((rec.get("content") or "").split())[:100]
        click.echo(f"[{phase}turn {rec['turn']}] {text}")
    elif kind == "proposal":
        click.echo(f"    proposal {', '.join(rec['mnemonics'])}: {'accepted' if rec['accepted'] else 'rejected'}")
    elif kind == "tool":
        first = (rec.get("result") or "").strip().splitlines()[:1]
        click.echo(f"    {rec['name']}: {first[0][:110] if first else ''}")
    elif kind == "error":
        click.echo(f"[turn {rec['turn']}] model error: {rec['message'][:200]}")
    elif kind == "resume":
        click.echo(f"resuming after {rec['turns_done']} turns ({rec['tool_calls_done']} tool calls done)"
                   + (f"; retrying after {rec['retrying'][:200]}" if rec.get("retrying") else ""))


@main.command("bench")
@click.option("--models", required=True, help="Comma-separated litellm models (scripted/reference runs offline).")
@click.option("--targets", default="plena,amdnpu,coral,boom", show_default=True, help="Comma-separated targets.")
@click.option("--tasks", default="level1", show_default=True, help="Task names (comma-separated), level1, level2, "
                                                                    "level3 or all.")
@click.option("--configs", default="C1", show_default=True, help="C1,…,C5 (comma-separated) or all.")
@click.option("--trials", default=1, type=click.IntRange(1, 100), show_default=True, help="Agent runs per cell.")
@click.option("--workers", default=None, type=click.IntRange(1, 256), help="Parallel runs (default: CPUs).")
@click.option("--executor", default="local", type=click.Choice(["local", "ray"]), show_default=True)
@click.option("--ray-address", default=None, help="A Ray cluster to run on (default: a local Ray instance).")
@click.option("--out", "rundir", required=True, type=click.Path(file_okay=False), help="The run directory.")
@click.option("--thinking", is_flag=True, help="Extended reasoning where the model supports it.")
@click.option("--one-shot", is_flag=True, help="Show each run a correct kernel of another task.")
@click.option("--max-turns", default=None, type=click.IntRange(1, 200), help="Turn budget (default by level).")
@click.option("--api-base", default=None, help="Base URL of an OpenAI-compatible server.")
@click.option("--timeout", default=600.0, type=click.FloatRange(0.1, 86400), show_default=True,
              help="Seconds to wait for one model request.")
@click.option("--attempts", default=6, type=click.IntRange(1, 20), show_default=True,
              help="Requests per model turn (rate limits, 5xx, timeouts retried with backoff).")
@click.option("--retry-failed", is_flag=True, help="Rerun cells that ended in an error (not unsuccessful ones).")
@click.option("--dry-run", is_flag=True, help="List the cells (and which would run) without running them.")
def bench_cmd(models, targets, tasks, configs, trials, workers, executor, ray_address, rundir, thinking, one_shot,
              max_turns, api_base, timeout, attempts, retry_failed, dry_run) -> None:
    """Run the benchmark matrix: one agent run per (model, target, task, config, trial).

    Results go to RUNDIR/results.sqlite and the trajectories to RUNDIR/runs/; rerunning the same
    command resumes (completed cells are skipped). Exit status 0 when every cell ran (whatever its
    outcome), 1 when some ended in an error, 2 on a bad selection."""
    import os
    from kcgen import bench
    try:
        cells = bench.expand(models.split(","), [t.strip() for t in targets.split(",") if t.strip()], tasks,
                             configs, trials)
    except bench.BenchError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(2)
    try:
        todo, skipped = bench.to_run(cells, Path(rundir), retry_failed)
    except bench.DatabaseError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(1)
    if dry_run:
        waiting = set(todo)
        for c in cells:
            click.echo(f"{'run ' if c in waiting else 'skip'}  {c.model}  {c.target}  {c.task}  {c.config}  t{c.trial}")
        click.echo(f"{len(cells)} cells: {len(todo)} to run, {skipped} done")
        return
    options = bench.Options(thinking=thinking, one_shot=one_shot, max_turns=max_turns, api_base=api_base,
                            timeout=timeout, attempts=attempts)
    progress = _run_bench(cells, len(todo), Path(rundir), options, workers or os.cpu_count() or 1, executor,
                          ray_address, retry_failed)
    click.echo(f"results: {Path(rundir) / 'results.sqlite'}  (kcgen report {rundir})")
    sys.exit(1 if progress.errors else 0)


def _run_bench(cells, todo: int, rundir: Path, options, workers: int, executor: str = "local",
               ray_address=None, retry_failed: bool = False):
    """bench.run with a live progress bar (counts, successes, errors, ETA); exits on ^C or a bad setup."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
    from kcgen import bench
    columns = [TextColumn("[bold]bench"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[status]}"),
               TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn()]
    with Progress(*columns, transient=False) as bar:
        job = bar.add_task("bench", total=todo, status="")

        def show(p, row):
            bar.update(job, completed=p.done, status=f"ok {p.successes}  errors {p.errors}  skipped {p.skipped}")
        try:
            progress = bench.run(cells, rundir, options, workers, executor, ray_address, retry_failed, show)
        except bench.BenchError as exc:
            from kcgen.redact import redact
            bar.stop()
            click.echo(f"error: {redact(str(exc))}", err=True)
            sys.exit(2)
        except bench.DatabaseError as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(1)
        except KeyboardInterrupt:
            click.echo("interrupted: completed cells are saved; rerun the same command to resume", err=True)
            sys.exit(130)
    per_cell = 1e3 * progress.overhead / max(progress.done, 1)
    click.echo(f"{progress.done} cells run ({progress.successes} successful, {progress.errors} errors), "
               f"{progress.skipped} skipped as done; driver overhead {per_cell:.1f} ms per cell")
    _print_errors(progress.error_rows)
    return progress


def _print_errors(rows: list[dict], show: int = 10) -> None:
    """Why cells ended in an error: each distinct reason once, with its cells (infrastructure errors
    first: they are not the model's failures, and --retry-failed reruns them)."""
    from collections import defaultdict
    reasons: dict = defaultdict(list)
    for r in rows:
        reasons[(r.get("error_kind") or "harness", (r.get("error") or "no reason recorded").splitlines()[0][:300])].append(r)
    for (kind, why), cells in sorted(reasons.items(), key=lambda kv: (kv[0][0] != "infrastructure", -len(kv[1])))[:show]:
        where = ", ".join(f"{c['model']} {c['target']} {c['task']} {c['config']} t{c['trial']}" for c in cells[:3])
        more = f" and {len(cells) - 3} more" if len(cells) > 3 else ""
        click.echo(f"error ({kind}) in {len(cells)} cell(s) [{where}{more}]: {why}", err=True)
    if len(reasons) > show:
        click.echo(f"… and {len(reasons) - show} more reasons: kcgen report shows them all", err=True)
    if any(r.get("error_kind") == "infrastructure" for r in rows):
        click.echo("rerun the same command to retry the infrastructure errors (their runs resume)", err=True)
    if any(r.get("error_kind") != "infrastructure" for r in rows):
        click.echo("rerun with --retry-failed to run the cells with other errors again", err=True)


@main.command("report")
@click.argument("rundir", type=click.Path(file_okay=False, exists=True))
@click.option("--compare", "compare", type=click.Path(file_okay=False, exists=True), default=None,
              help="Another run directory to show side by side.")
def report_cmd(rundir, compare) -> None:
    """Write RUNDIR/report.md, report.html, results.csv and PNG plots from RUNDIR/results.sqlite, with a
    co-design section for every `kcgen codesign` session under RUNDIR (its summary.json)."""
    from kcgen import bench, report
    try:
        rep = report.write(Path(rundir), Path(compare) if compare else None)
    except (FileNotFoundError, bench.DatabaseError) as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(1)
    click.echo(rep.summary)
    click.echo(f"report: {rep.html}  ({rep.markdown.name}, {rep.csv.name}, {len(rep.plots)} plots)")


@main.command("propose")
@click.argument("target")
@click.argument("proposal", type=click.Path(dir_okay=False, exists=True))
@click.option("--out", "outdir", type=click.Path(file_okay=False), default="runs/propose", show_default=True,
              help="Where the accepted overlay is written (an overlay there may be the TARGET to extend).")
@click.option("--tag", default=None, help="The overlay is isa TARGET_TAG (default: x1, x2, ...).")
def propose_cmd(target, proposal, outdir, tag) -> None:
    """Validate PROPOSAL.isa (instruction blocks, no isa header) as an extension of TARGET; when it
    is accepted, write the overlay and build the extended target. Exit 0 accepted, 1 rejected."""
    from kcgen import codesign
    from kcgen.target import build_target
    base = isadl.find_target(target)
    _load_target(str(base), ())
    text = Path(proposal).read_text(encoding="utf-8")
    try:
        verdict = codesign.propose(base, text, Path(outdir), tag=tag)
    except ValueError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(2)
    if not verdict.accepted:
        click.echo(f"{proposal}: rejected", err=True)
        for r in verdict.reasons:
            click.echo(f"  {r.replace('proposal.isa', proposal)}", err=True)
        sys.exit(1)
    built = build_target(isadl.load(verdict.overlay))
    click.echo(f"accepted: {', '.join(f'{m} (cycle floor {verdict.floors[m]})' for m in verdict.mnemonics)}")
    click.echo(f"overlay {verdict.overlay} (isa {verdict.name} extends {verdict.base}); built {built.directory}")
    for cost in verdict.hw.values():  # what the new hardware costs (kcgen.hwcost)
        click.echo(cost.render())


@main.command("profile")
@click.argument("target")
@click.argument("task")
@click.argument("kernel", type=click.Path(dir_okay=False, exists=True))
@click.option("--config", default="C1", type=click.Choice(["C1", "C2", "C3", "C4", "C5"]), show_default=True)
@click.option("--as", "as_target", default=None, help="Which of the task's targets TARGET stands for.")
@click.option("--max-steps", default=200_000, type=click.IntRange(1), show_default=True,
              help="Instructions (bundles) to profile.")
def profile_cmd(target, task, kernel, config, as_target, max_steps) -> None:
    """Where KERNEL.s spends its cycles on TASK's inputs: per instruction, per unit, hottest lines
    and loops, and the most frequent dependent instruction chains (fusion candidates)."""
    from kcgen import taskspec
    from kcgen.evaluation import Evaluator
    spec = _load_target(target, ())
    key = as_target or spec.isa.name.split("_")[0]
    try:
        t = taskspec.find(task)
    except KeyError as exc:
        click.echo(f"error: {exc.args[0]}", err=True)
        sys.exit(1)
    if key not in t.targets:
        click.echo(f"error: task {t.name} does not apply to {key}", err=True)
        sys.exit(1)
    with Evaluator() as ev:
        click.echo(ev.profile(Path(kernel).read_text(encoding="utf-8"), isadl.find_target(target), t.path, key,
                              config, max_steps=max_steps))


@main.command("codesign")
@click.argument("target", type=click.Choice(["plena", "amdnpu", "coral", "boom"]))
@click.argument("task")
@click.option("--model", required=True, help="A litellm model, or scripted/codesign (offline).")
@click.option("--config", default="C1", type=click.Choice(["C1", "C2", "C3", "C4", "C5"]), show_default=True)
@click.option("--out", type=click.Path(file_okay=False), default=None,
              help="Session directory (default runs/codesign/TARGET-TASK-CONFIG-MODEL); rerunning resumes.")
@click.option("--max-turns", type=click.IntRange(1, 200), default=None, help="Turn budget per phase.")
@click.option("--thinking", is_flag=True)
@click.option("--api-base", default=None)
def codesign_cmd(target, task, model, config, out, max_turns, thinking, api_base) -> None:
    """Phase 1: the best kernel on the base ISA; phase 2: propose instructions and rewrite.
    Writes OUT/summary.json (base_cycles, extended_cycles, speedup, accepted, rejected)."""
    from kcgen.paths import agent
    A = agent()
    from importlib import import_module
    cd = import_module(A.__name__ + ".codesign")
    out = Path(out or Path("runs") / "codesign" / f"{target}-{task}-{config}-{model.replace('/', '_')}")
    try:
        result = cd.run_codesign(target, task, model, out, config=config, max_turns=max_turns, thinking=thinking,
                                 api_base=api_base, on_event=lambda phase, rec: _print_event(rec, phase))
    except A.RunError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(2)
    tag = " [scripted model]" if result.get("scripted") else ""
    click.echo(f"co-design{tag}: base {result['base_cycles']} cycles, extended {result['extended_cycles']} cycles"
               + (f", speedup {result['speedup']:.2f}x" if result.get("speedup") else ""))
    click.echo(f"accepted: {', '.join(result['accepted']) or 'none'}; rejected: "
               + (", ".join(f"{r['mnemonic']} ({r['reason'][:80]})" for r in result['rejected']) or "none"))
    if result.get("hw_cost"):  # what the speedup costs in silicon, beside it
        click.echo(f"hardware: {result['added_area']:.2f} base lanes added, minimum latency "
                   + ", ".join(f"{m} {c}" for m, c in result["min_latency"].items())
                   + (f"; speedup per area {result['speedup_per_area']:.2f}" if result.get("speedup_per_area") else ""))
    click.echo(f"summary: {out / 'summary.json'}")
    sys.exit(0 if result.get("extended_cycles") else 1)


@main.command("sweep")
@click.argument("target", type=click.Choice(["plena", "amdnpu", "coral", "boom"]))
@click.option("-D", "defines", multiple=True, metavar="NAME=V1,V2,...", required=True,
              help="A parameter and its values; several -D give their cartesian product.")
@click.option("--tasks", default="level1", show_default=True, help="Task names, level1..level3 or all.")
@click.option("--configs", default="C1", show_default=True, help="C1,...,C5 or all.")
@click.option("--out", type=click.Path(file_okay=False), default=None,
              help="Where sweep.csv and sweep.png go (default runs/sweep-TARGET).")
@click.option("--jobs", "-j", default=None, type=click.IntRange(1, 64), help="Evaluation processes (default: CPUs).")
def sweep_cmd(target, defines, tasks, configs, out, jobs) -> None:
    """Rebuild TARGET at every parameter point and evaluate the items' baseline and reference
    kernels there: cycles, speedup and fraction of the roofline per point (table, CSV, plot)."""
    import os
    from kcgen import bench, sweep
    try:
        points = sweep.grid(list(defines))
        cells = bench.expand(["-"], [target], tasks, configs, 1)
    except (sweep.SweepError, bench.BenchError) as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(2)
    from kcgen import taskspec
    names = list(dict.fromkeys(c.task for c in cells))
    cfgs = list(dict.fromkeys(c.config for c in cells))
    rows = sweep.run(target, points, [taskspec.find(n) for n in names], cfgs, jobs or os.cpu_count() or 1)
    click.echo(sweep.table(rows))
    files = sweep.write(rows, Path(out or Path("runs") / f"sweep-{target}"))
    click.echo(f"written: {', '.join(str(f) for f in files)}")


if __name__ == "__main__":
    main()
