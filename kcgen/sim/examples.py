"""Running an ISA's `example` blocks (docs/isadl.md section 12) on a simulator.

    for case in examples(spec):
        result = run_example(spec, case, RefMachine)      # or the C simulator's machine class
        assert result.ok, result.message()

A machine is anything with `arrays` (kcgen.sim.layout storage), a writable `pc`, `load(program)`
and `run(max_steps)` returning a status 'halted' | 'trap' | 'budget'. The example's `given`
statements and `expect` checks are evaluated by the reference interpreter on the machine's
arrays, so the same examples test every simulator.

Order: a fresh machine loads the assembled program, then `given` runs (so a `given` write to a
byte memory that also holds the program's text, as PLENA's HBM does, is not overwritten by the
load; the text was already decoded), then the program runs from the entry address.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional, Union

from isadl import ir
from isadl.check import Spec
from kcgen.asm import AsmError, Assembler

from . import pyref


@dataclass(frozen=True)
class ExampleCase:
    """One example of an ISA with a stable id: `isa#0`, `ADD#1` (instruction), `li#0` (pseudo)."""
    id: str
    example: ir.Example
    owner: str  # 'isa' | 'instruction' | 'pseudo'
    name: str  # the instruction or pseudo ('' for ISA-level examples)

    @property
    def line(self) -> int:
        return self.example.loc.line


def examples(spec: Spec) -> list[ExampleCase]:
    """Every example of the ISA: instruction-level, then pseudo-level, then ISA-level."""
    isa = spec.isa
    out = []
    insn_names = {i.name for i in isa.instructions}
    for insn in isa.instructions:
        for k, ex in enumerate(insn.examples):
            out.append(ExampleCase(f"{insn.name}#{k}", ex, "instruction", insn.name))
    for p in isa.pseudos:
        prefix = f"pseudo {p.name}" if p.name in insn_names or p.name == "isa" else p.name
        for k, ex in enumerate(p.examples):
            out.append(ExampleCase(f"{prefix}#{k}", ex, "pseudo", p.name))
    for k, ex in enumerate(isa.examples):
        out.append(ExampleCase(f"isa#{k}", ex, "isa", ""))
    return out


@dataclass
class CheckResult:
    text: str  # the expect expression as written (canonical form)
    ok: bool
    message: str = ""  # why it failed, with the values involved


@dataclass
class ExampleResult:
    id: str
    ok: bool
    status: Optional[str] = None  # the run's status; None when the example did not get to run
    steps: int = 0
    trap: Optional[pyref.Trap] = None
    checks: list[CheckResult] = field(default_factory=list)
    error: str = ""  # assembly, load or setup failure

    def message(self) -> str:
        """A readable account of what went wrong ('' when the example passed)."""
        if self.ok:
            return ""
        lines = [f"example {self.id} failed"]
        if self.error:
            lines.append(f"  {self.error}")
        if self.status == "trap":
            lines.append(f"  the program stopped with a {self.trap.kind} trap: {self.trap}")
        elif self.status == "budget":
            lines.append(f"  the program did not stop within {self.steps} steps")
        for c in self.checks:
            if not c.ok:
                lines.append(f"  expect {c.text}: {c.message}")
        return "\n".join(lines)


class _Context:
    """What generated code needs of a machine besides its arrays: the pc and the halt flag."""

    def __init__(self, pc: int):
        self.cur_pc = self.next_pc = pc
        self.jumped = False
        self.halted = False


def _assembler(spec: Spec) -> Assembler:
    """One Assembler per Spec, kept on the Spec object."""
    asm = spec.__dict__.get("_kcgen_examples_asm")
    if asm is None or asm.spec is not spec:
        asm = Assembler(spec)
        spec.__dict__["_kcgen_examples_asm"] = asm
    return asm


def _show_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return f"{v} ({v:#x})" if not -10 < v < 10 else str(v)
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, list):
        return "[" + ", ".join(_show_value(x) if not isinstance(x, int) else str(x) for x in v) + "]"
    return repr(v)


def run_example(spec: Spec, example: Union[ExampleCase, ir.Example],
                machine_factory: Optional[Callable] = None, max_steps: int = 100_000) -> ExampleResult:
    """Assemble and run one example on a fresh machine and evaluate its checks."""
    case = example if isinstance(example, ExampleCase) else ExampleCase(f"line {example.loc.line}", example, "", "")
    ex = case.example
    factory = machine_factory or pyref.RefMachine
    try:
        program = _assembler(spec).assemble(ex.code, f"{spec.isa.name}:{case.id}")
    except AsmError as exc:
        return ExampleResult(case.id, False, error=f"the code does not assemble:\n{exc}")
    code = pyref.example_code(spec, ex)
    machine = factory(spec)
    try:
        machine.load(program)
    except Exception as exc:  # pyref.LoadError, kcgen.sim.simulator.LoadError
        if type(exc).__name__ != "LoadError":
            raise
        return ExampleResult(case.id, False, error=f"the program does not load: {exc}")
    ctx = _Context(machine.pc)
    try:
        code.given(ctx, machine.arrays)
    except pyref.SimTrap as exc:
        return ExampleResult(case.id, False, error=f"given: {exc.kind} trap: {exc.message}")
    if ctx.jumped:
        machine.pc = ctx.next_pc
    run = machine.run(max_steps)
    status = run.status if isinstance(run.status, str) else str(run.status)
    steps = getattr(run, "steps", None)
    steps = getattr(run, "instret", 0) if steps is None else steps
    result = ExampleResult(case.id, True, status, steps, getattr(run, "trap", None))
    if not ex.given and not ex.expect:
        return result  # an example without a block only has to assemble
    if status != "halted":
        result.ok = False
    ctx = _Context(machine.pc)
    for text, check, sides in code.checks:
        try:
            ok = bool(check(ctx, machine.arrays))
        except pyref.SimTrap as exc:
            result.checks.append(CheckResult(text, False, f"{exc.kind} trap: {exc.message}"))
            result.ok = False
            continue
        message = ""
        if not ok:
            shown = []
            for side_text, fn in sides:
                try:
                    shown.append(f"{side_text} is {_show_value(fn(ctx, machine.arrays))}")
                except pyref.SimTrap as exc:
                    shown.append(f"{side_text} traps ({exc.message})")
            message = "false" + (": " + ", ".join(shown) if shown else "")
            result.ok = False
        result.checks.append(CheckResult(text, ok, message))
    return result


def run_examples(spec: Spec, machine_factory: Optional[Callable] = None,
                 max_steps: int = 100_000) -> list[ExampleResult]:
    return [run_example(spec, case, machine_factory, max_steps) for case in examples(spec)]


__all__ = ["ExampleCase", "ExampleResult", "CheckResult", "examples", "run_example", "run_examples"]
