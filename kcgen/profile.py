"""`kcgen profile`: where a kernel's cycles go, and which dependent instruction chains recur.

The kernel runs once on the item's inputs (as a trial of the evaluator sets them up), one
instruction (or bundle) at a time for up to `max_steps`; each step's cycles are the growth of
the machine's cycle count, charged to its source line. Reported: cycles and counts per
instruction and per unit, the hottest source lines, the hottest loops (backward jumps) with
their lines, and the most frequent chains of dependent instructions in the dynamic trace — a
dataflow graph (networkx) whose edges join each instruction to the last writers of the
registers it reads — as fusion candidates for a new instruction.
"""
from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Optional

import networkx as nx

from isadl import ir


@dataclass
class Profile:
    cycles: int
    steps: int
    complete: bool  # the kernel finished within the steps profiled
    status: str
    per_insn: dict[str, tuple[int, int]]  # name -> (count, cycles)
    units: dict[str, int]
    lines: list[tuple[int, str, int, int]]  # (line, text, executions, cycles), hottest first
    loops: list[tuple[int, int, int, int]]  # (first line, last line, iterations, cycles), hottest first
    chains: list[tuple[tuple[str, ...], int]]  # dependent instruction sequences and how often they ran
    source: list[str] = field(default_factory=list)


def _regs_used(spec, name: str) -> tuple[set, set]:
    """(read, written) register operands of instruction `name`: (register file, operand name)."""
    files = {rf.name for rf in spec.isa.regfiles}
    read, written = set(), set()

    def reg(e) -> Optional[tuple]:
        if isinstance(e, ir.Index) and isinstance(e.base, ir.Name) and e.base.id in files \
                and isinstance(e.index, ir.Name):
            return (e.base.id, e.index.id)
        return None

    def expr(e) -> None:
        if e is None:
            return
        r = reg(e)
        if r:
            read.add(r)
        for child in vars(e).values():
            if isinstance(child, tuple):
                for c in child:
                    if hasattr(c, "loc") and not isinstance(c, ir.Loc):
                        expr(c)
            elif hasattr(child, "loc") and not isinstance(child, ir.Loc):
                expr(child)

    def stmts(body) -> None:
        for s in body:
            if isinstance(s, ir.Assign):
                r = reg(s.target)
                if r:
                    written.add(r)
                else:
                    expr(s.target)
                expr(s.value)
            elif isinstance(s, ir.For):
                stmts(s.body)
            elif isinstance(s, ir.If):
                expr(s.cond)
                stmts(s.then)
                stmts(s.orelse)
            elif isinstance(s, (ir.Let, ir.Require)):
                expr(s.value if isinstance(s, ir.Let) else s.cond)
            elif isinstance(s, ir.CallStmt):
                expr(s.call)
    stmts(spec.instructions[name].insn.semantics)
    return read, written


def profile(spec, code: str, task, target: str, config: str, layout, max_steps: int = 200_000,
            seed: int = 0) -> Profile:
    from .evaluation import _assembler, _simulator, start_trial
    program = _assembler(spec).assemble(code, "kernel.s")
    sim = _simulator(spec)
    start_trial(sim, program, task, layout, seed, task.profiles[0], task.config(target, config))
    uses = {}
    per_pc_cycles: Counter = Counter()
    per_pc_runs: Counter = Counter()
    loops: Counter = Counter()
    per_insn = defaultdict(lambda: [0, 0])
    graph = nx.DiGraph()
    triples: Counter = Counter()
    last_writer: dict = {}  # (file, register) -> (mnemonic, producer's own main producer)
    steps, status = 0, "budget"
    while steps < max_steps:
        pc = sim.pc
        before = int(sim.s.cycles)
        result = sim.run(1)
        spent = int(sim.s.cycles) - before
        placed = program.at(pc)
        steps += 1
        per_pc_cycles[pc] += spent
        per_pc_runs[pc] += 1
        if placed is not None:
            for slot, (name, operands) in enumerate(placed.ops):
                per_insn[name][0] += 1
                per_insn[name][1] += spent if slot == 0 else 0
                if name not in uses:
                    uses[name] = _regs_used(spec, name)
                reads, writes = uses[name]
                producers = [last_writer.get((f, operands.get(op))) for f, op in reads if op in operands]
                producers = [p for p in producers if p]
                main = None
                for prod, grand in producers:
                    w = graph.get_edge_data(prod, name, {"weight": 0})["weight"]
                    graph.add_edge(prod, name, weight=w + 1)
                    if grand:
                        triples[(grand, prod, name)] += 1
                    main = prod
                for f, op in writes:
                    if op in operands:
                        last_writer[(f, operands[op])] = (name, main)
        if result.status != "budget":
            status = result.status
            break
        if sim.pc <= pc:
            loops[(sim.pc, pc)] += 1
    lines = _lines(program, per_pc_runs, per_pc_cycles)
    loop_rows = []
    for (first, last), n in loops.items():
        cyc = sum(c for p, c in per_pc_cycles.items() if first <= p <= last)
        loop_rows.append((program.source_line(first) or 0, program.source_line(last) or 0, n, cyc))
    loop_rows.sort(key=lambda r: -r[3])
    pairs = sorted(((tuple(e), d["weight"]) for *e, d in graph.edges(data=True)), key=lambda x: -x[1])
    chains = sorted(list(triples.items()) + pairs, key=lambda x: (-x[1], -len(x[0])))
    busy = sim._busy(sim.counts.copy(), sim.unit_busy.copy())  # since the load reset the counters
    return Profile(int(sim.s.cycles), steps, status != "budget", status,
                   {k: tuple(v) for k, v in sorted(per_insn.items(), key=lambda kv: -kv[1][1])},
                   busy, lines, loop_rows[:8], chains[:8], code.splitlines())


def _lines(program, runs: Counter, cycles: Counter) -> list[tuple[int, str, int, int]]:
    by_line = defaultdict(lambda: [0, 0, ""])
    for pc, n in runs.items():
        placed = program.at(pc)
        line = placed.line if placed else 0
        row = by_line[line]
        row[0] += n
        row[1] += cycles[pc]
        row[2] = placed.text if placed else "?"
    rows = [(line, text, n, c) for line, (n, c, text) in by_line.items()]
    return sorted(rows, key=lambda r: -r[3])


def render(p: Profile, top: int = 10) -> str:
    out = [f"{p.cycles} cycles over {p.steps} instructions/bundles" +
           ("" if p.complete else f" (profiled the first {p.steps}; the kernel had not finished)")]
    total = max(sum(c for _, c in p.per_insn.values()), 1)
    out.append("cycles by instruction (issue-slot cycles charged to the instruction that advanced the clock):")
    out += [f"  {name:<16} {n:>9} runs {c:>10} cycles {100 * c / total:5.1f}%"
            for name, (n, c) in list(p.per_insn.items())[:top]]
    if p.units:
        out.append("unit busy cycles: " + ", ".join(f"{u} {c}" for u, c in p.units.items() if c))
    out.append("hottest source lines:")
    out += [f"  line {line:<5} {n:>9} runs {c:>10} cycles  {text}" for line, text, n, c in p.lines[:top]]
    if p.loops:
        out.append("hottest loops (backward jumps):")
        out += [f"  lines {a}..{b}: {n} iterations, {c} cycles" for a, b, n, c in p.loops[:5]]
    if p.chains:
        out.append("most frequent dependent chains (fusion candidates):")
        out += [f"  {' -> '.join(seq)}: {n} times" for seq, n in p.chains]
    return "\n".join(out)
