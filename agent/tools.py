"""The agent's tools, implemented on the run's target: its assembler, its docs index and the
evaluator's worker process. Every tool returns text (bounded in size); a bad argument or a failure
inside a tool comes back as an error text, never as an exception out of the loop."""
from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

MAX_RESULT_CHARS = 12_000  # what one tool result may put into the conversation
MAX_CODE_CHARS = 200_000  # a kernel larger than this is not a kernel
MAX_PATTERN_CHARS = 200
KERNEL_FILE = "kernel.s"


def _fn(name: str, description: str, properties: dict, required: tuple = ()) -> dict:
    return {"type": "function", "function": {
        "name": name, "description": description,
        "parameters": {"type": "object", "properties": properties, "required": list(required),
                       "additionalProperties": False}}}


SCHEMAS = [
    _fn("write_code", "Save your kernel (complete assembly source) into the workspace, replacing the previous "
        "version. Returns the file's path.",
        {"code": {"type": "string", "description": "the whole assembly source of the kernel"}}, ("code",)),
    _fn("check_syntax", "Assemble the saved kernel. Returns 'All checks passed. 0 error(s), 0 warning(s)' or every "
        "error and warning with its line and column.", {}),
    _fn("run_evaluation", "Run the saved kernel on the simulator with fresh random inputs and compare its outputs "
        "with the reference. Returns whether it is correct (else the share of mismatching elements), errors or "
        "traps, its cycles, the baseline's cycles and the speedup.", {}),
    _fn("view_output", "Show rows of an output tensor from the last evaluation: the kernel's values next to the "
        "reference's, with each row's worst error and mismatch count.",
        {"tensor": {"type": "string", "description": "output tensor name"},
         "start_row": {"type": "integer", "minimum": 0, "description": "first row (default 0)"},
         "rows": {"type": "integer", "minimum": 1, "maximum": 32, "description": "how many rows (default 4)"}},
        ("tensor",)),
    _fn("grep_docs", "Search the target's documentation (overview, parameters, ABI, every instruction's syntax, "
        "encoding, semantics and timing) with a regular expression; returns the matching records.",
        {"pattern": {"type": "string", "maxLength": MAX_PATTERN_CHARS, "description": "Python regular expression"},
         "context": {"type": "integer", "minimum": 0, "maximum": 5,
                     "description": "neighbouring records to show around each match (default 0)"}},
        ("pattern",)),
    _fn("get_instruction_size", "Count the saved kernel's instructions, per category and per execution unit.", {}),
]
SCHEMA_BY_NAME = {s["function"]["name"]: s for s in SCHEMAS}


class ToolError(Exception):
    """A tool's argument or state problem, reported to the model as the tool's result."""


def bounded(text: str, limit: int = MAX_RESULT_CHARS) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n[… output cut: {len(text) - limit} more characters]"


@dataclass
class Evaluation:
    """What run_evaluation learned, kept for view_output and for the run's best kernel."""
    correct: bool
    cycles: Optional[int]
    baseline_cycles: Optional[int]
    speedup: Optional[float]
    summary: str
    code: str
    result: object = field(repr=False)  # kcgen.evaluation.EvalResult


class Tools:
    """One run's tools. `evaluate(code) -> EvalResult` runs a kernel for the run's item (in the
    evaluator's worker process); `docs_index` is the target's generated grep index."""

    def __init__(self, workspace: Path, assembler, spec, docs_index: str,
                 evaluate: Callable[[str], object], extra: Optional[dict] = None):
        self.workspace = Path(workspace)
        self.workspace.mkdir(parents=True, exist_ok=True)
        self.assembler = assembler
        self.spec = spec
        self.docs_index = docs_index
        self._evaluate = evaluate
        self.last: Optional[Evaluation] = None
        self.failures = 0  # tool calls that failed inside kcgen (not the model's doing)
        self.extra = dict(extra or {})  # name -> (schema, fn(**args) -> str): co-design adds propose_instruction

    @property
    def schemas(self) -> list[dict]:
        return SCHEMAS + [schema for schema, _ in self.extra.values()]

    # -- dispatch
    def call(self, name: str, arguments) -> str:
        """Run tool `name` with `arguments` (a JSON text or a dict); always returns text."""
        try:
            args = json.loads(arguments or "{}") if isinstance(arguments, str) else dict(arguments or {})
            if not isinstance(args, dict):
                raise ToolError("arguments must be a JSON object")
            schema = self.extra[name][0] if name in self.extra else SCHEMA_BY_NAME.get(name)
            if schema is None:
                known = ", ".join(s["function"]["name"] for s in self.schemas)
                raise ToolError(f"there is no tool '{name}' (the tools are: {known})")
            _check_args(schema, args)  # every tool, the co-design ones too: a mismatch is the model's to fix
            if name in self.extra:
                return bounded(self.extra[name][1](**args))
            return bounded(getattr(self, name)(**args))
        except ToolError as exc:
            return f"error: {exc}"
        except json.JSONDecodeError as exc:
            return (f"error: the arguments are not valid JSON ({exc.msg}: character {exc.pos} of {len(arguments)}); "
                    "the call was not run: send it again with its arguments as one JSON object")
        except Exception as exc:  # a bug in a tool must not end the run; the model sees what happened
            self.failures += 1
            return f"error: the tool failed: {type(exc).__name__}: {exc}"

    # -- the tools
    @property
    def kernel_path(self) -> Path:
        return self.workspace / KERNEL_FILE

    def _code(self) -> str:
        if not self.kernel_path.exists():
            raise ToolError("no kernel yet: call write_code first")
        return self.kernel_path.read_text(encoding="utf-8")

    def write_code(self, code: str) -> str:
        if len(code) > MAX_CODE_CHARS:
            raise ToolError(f"the kernel is {len(code)} characters; the limit is {MAX_CODE_CHARS}")
        self.kernel_path.write_text(code, encoding="utf-8")
        return f"saved {len(code.splitlines())} lines to {self.kernel_path}"

    def check_syntax(self) -> str:
        import isadl
        code = self._code()
        try:
            program = self.assembler.assemble(code, KERNEL_FILE)
        except isadl.IsaError as exc:
            diags = getattr(exc, "diagnostics", None) or []
            errors = sum(d.severity == "error" for d in diags) if diags else 1
            return f"{exc}\n{errors} error(s), {len(diags) - errors if diags else 0} warning(s)"
        warns = [str(w) for w in program.warnings]
        return "\n".join(warns + [f"All checks passed. 0 error(s), {len(warns)} warning(s)"])

    def run_evaluation(self) -> str:
        code = self._code()
        result = self._evaluate(code)
        text = result.summary(flags=False)  # the suspicious flags quote the reference's cycles: not for the model
        self.last = Evaluation(result.correct, result.cycles, result.baseline_cycles, result.speedup, text, code,
                               result)
        if result.correct:
            head = "All elements match the reference. 100% of elements match."
            return head + "\n" + text.removeprefix("correct; ").removeprefix("correct")
        return text

    def view_output(self, tensor: str, start_row: int = 0, rows: int = 4) -> str:
        if self.last is None:
            raise ToolError("no evaluation yet: call run_evaluation first")
        outputs = self.last.result.outputs
        if tensor not in outputs:
            raise ToolError(f"no output tensor '{tensor}' (outputs: {', '.join(outputs) or 'none: the evaluation '}"
                            f"{'' if outputs else 'did not get as far as comparing'})")
        check = outputs[tensor]
        table = check.rows(start_row, rows)
        if not table:
            return f"{tensor} has no row {start_row} (rows 0..{check.kernel.reshape(check.kernel.shape[0], -1).shape[0] - 1 if check.kernel.ndim > 1 else 0})"
        lines = [f"{tensor}: kernel vs reference, rows {table[0]['row']}..{table[-1]['row']}"]
        for r in table:
            lines.append(f"row {r['row']}: {r['mismatches']} mismatching, max abs err {r['max_abs_err']:.4g}")
            lines.append("  kernel:    " + _values(r["kernel"]))
            lines.append("  reference: " + _values(r["reference"]))
        return "\n".join(lines)

    def grep_docs(self, pattern: str, context: int = 0) -> str:
        from kcgen.docs.search import grep
        if len(pattern) > MAX_PATTERN_CHARS:
            raise ToolError(f"the pattern is longer than {MAX_PATTERN_CHARS} characters")
        try:
            found = _time_bounded(lambda: grep(self.docs_index, pattern, context=context, ignore_case=True))
        except ValueError as exc:
            raise ToolError(str(exc)) from None
        return found or f"no match for '{pattern}'"

    def get_instruction_size(self) -> str:
        import isadl
        try:
            program = self.assembler.assemble(self._code(), KERNEL_FILE)
        except isadl.IsaError as exc:
            raise ToolError(f"the kernel does not assemble:\n{exc}") from None
        by_section, by_unit, total = Counter(), Counter(), 0
        for placed in program.placed:
            for name, _ in placed.ops:
                insn = self.spec.instructions[name].insn
                by_section[insn.section or "other"] += 1
                by_unit[insn.unit or "-"] += 1
                total += 1
        lines = [f"{total} instructions ({len(program.placed)} issue slots/bundles)"]
        lines.append("by category: " + ", ".join(f"{k} {v}" for k, v in by_section.most_common()))
        lines.append("by unit: " + ", ".join(f"{k} {v}" for k, v in by_unit.most_common()))
        return "\n".join(lines)


def _values(vals, limit: int = 16) -> str:
    shown = ", ".join(f"{v:.4g}" for v in vals[:limit])
    return f"[{shown}{', …' if len(vals) > limit else ''}]"


_JSON_TYPES = {"string": (str,), "integer": (int,), "number": (int, float), "boolean": (bool,),
               "object": (dict,), "array": (list,), "null": (type(None),)}
_A = {"string": "a string", "integer": "an integer", "number": "a number", "boolean": "true or false",
      "object": "an object", "array": "an array", "null": "null"}


def _check_args(schema: dict, args: dict) -> None:
    """The arguments against the tool's JSON schema (the subset our schemas use: properties,
    required, additionalProperties, type, minimum/maximum, minLength/maxLength, enum), and strings
    that are valid Unicode (a lone surrogate from a JSON escape cannot be saved or re-sent)."""
    params = schema["function"]["parameters"]
    props = params.get("properties") or {}
    name = schema["function"]["name"]
    for key in args:
        if key not in props and params.get("additionalProperties", True) is False:
            raise ToolError(f"{name} takes no argument '{key}'" +
                            (f" (its arguments: {', '.join(props)})" if props else " (it takes none)"))
    for key in params.get("required") or []:
        if key not in args:
            raise ToolError(f"{name} needs the argument '{key}'")
    for key, value in args.items():
        if key not in props:
            continue
        _check_value(f"{name}: '{key}'", props[key], value)


def _check_value(where: str, prop: dict, value) -> None:
    want = prop.get("type")
    if want:
        kinds = want if isinstance(want, list) else [want]
        ok = any(isinstance(value, _JSON_TYPES[k]) and not (k in ("integer", "number") and isinstance(value, bool))
                 for k in kinds)
        if not ok:
            raise ToolError(f"{where} must be {' or '.join(_A[k] for k in kinds)}, got {_json_name(value)}")
    if "enum" in prop and value not in prop["enum"]:
        raise ToolError(f"{where} must be one of {', '.join(map(str, prop['enum']))}, got {value!r}")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        lo, hi = prop.get("minimum"), prop.get("maximum")
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            raise ToolError(f"{where} must be in {lo if lo is not None else '-∞'}..{hi if hi is not None else '∞'}, "
                            f"got {value}")
    if isinstance(value, str):
        if "maxLength" in prop and len(value) > prop["maxLength"]:
            raise ToolError(f"{where} is {len(value)} characters; at most {prop['maxLength']} are allowed")
        if "minLength" in prop and len(value) < prop["minLength"]:
            raise ToolError(f"{where} must have at least {prop['minLength']} characters")
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise ToolError(f"{where} is not valid Unicode (a lone surrogate {value[exc.start]!a} at character "
                            f"{exc.start}): send plain text") from None


def _json_name(value) -> str:
    for k, types in _JSON_TYPES.items():
        if isinstance(value, types) and not (k in ("integer", "number") and isinstance(value, bool)):
            return {"string": "a string", "integer": "an integer", "number": "a number", "boolean": "a boolean",
                    "object": "an object", "array": "an array", "null": "null"}[k]
    return type(value).__name__


def _time_bounded(fn, seconds: float = 2.0):
    """Run a regex search with a time bound (catastrophic backtracking must not hang the run)."""
    import signal
    import threading
    if threading.current_thread() is not threading.main_thread():
        return fn()  # signals only work in the main thread; patterns are length-bounded anyway

    def expire(signum, frame):
        raise ValueError(f"the pattern took longer than {seconds:g} s; simplify it")
    old = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        return fn()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


