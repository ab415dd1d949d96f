"""Offline scripted models, registered with litellm as the provider `scripted`, so the real agent
loop runs end to end with no network and no key (tests, the demo). They are test doubles and say
so: every reply starts with "[scripted]", and runs using them are marked scripted.

scripted/reference — plays a realistic session for any item with a reference kernel
  (tasks/kernels/reference/): greps the docs for an instruction the kernel uses, writes a first
  kernel with a realistic mistake (the reference with one instruction left out), checks its
  syntax, evaluates it, looks at the mismatching output, writes the fixed kernel, evaluates it
  to success, and ends. It reacts to the tool results it gets, as a model would: if the first
  kernel does not assemble it drops a different instruction; if it happens to pass, it ends.
scripted/fail — goes through the same motions with a kernel that does nothing; never succeeds.
scripted/crash — ends its own process at its first turn (tests that the benchmark runner's
  isolation confines a dying run to its own cell).
scripted/codesign — plays scripted/reference on the base ISA; in a co-design run (it is offered
  propose_instruction) it plays the item's reference co-design case (tasks/codesign/<target>/
  <task>/: extension.isa and kernel.py): profiles its kernel, proposes the extension with an
  encoding that collides with an existing instruction, reads why it was rejected, proposes it as
  written, then writes, checks and evaluates the kernel that uses it.

A scripted model knows only what is in the conversation (the task statement names the task,
configuration and target) plus the repository's reference kernels.
"""
from __future__ import annotations

import json
import re
from typing import Optional

import litellm
from litellm import CustomLLM
from litellm.types.utils import ChatCompletionMessageToolCall, Choices, Function, Message, ModelResponse, Usage

MODELS = ("reference", "fail", "crash", "codesign")
_STATEMENT = re.compile(r"Task (\w+) \(level \d\), configuration (C\d) on (\w+):")
_OUTPUTS = re.compile(r"^Inputs: .*?\. Outputs \(the kernel writes them\): ([\w, ]+)\.$", re.M)
_registered = False


def register() -> None:
    """Make `scripted/<name>` models available to litellm.completion (idempotent)."""
    global _registered
    if _registered:
        return
    entry = {"provider": "scripted", "custom_handler": ScriptedLLM()}
    litellm.custom_provider_map = [p for p in litellm.custom_provider_map if p.get("provider") != "scripted"] + [entry]
    litellm.utils.custom_llm_setup()
    _registered = True


class ScriptedLLM(CustomLLM):
    def completion(self, model: str, messages: list, *args, **kwargs) -> ModelResponse:
        name = model.split("/", 1)[-1]
        if name not in MODELS:
            raise litellm.BadRequestError(f"no scripted model '{name}' (there are: {', '.join(MODELS)})",
                                          model=model, llm_provider="scripted")
        if name == "crash":
            import os
            os._exit(3)
        tools = [t["function"]["name"] for t in (kwargs.get("optional_params") or {}).get("tools") or []]
        if name == "codesign" and "propose_instruction" in tools:
            text, calls = CodesignScript(messages, name).next()
        else:
            text, calls = Script(messages, "reference" if name == "codesign" else name).next()
        tool_calls = [ChatCompletionMessageToolCall(id=f"call_{len(messages)}_{i}", type="function",
                                                    function=Function(name=n, arguments=json.dumps(a)))
                      for i, (n, a) in enumerate(calls)]
        msg = Message(role="assistant", content="[scripted] " + text, tool_calls=tool_calls or None)
        prompt_chars = sum(len(str(m.get("content") or "")) for m in messages)
        out_chars = len(text) + sum(len(json.dumps(a)) for _, a in calls)
        usage = Usage(prompt_tokens=prompt_chars // 4, completion_tokens=max(out_chars // 4, 1),
                      total_tokens=prompt_chars // 4 + max(out_chars // 4, 1))
        return ModelResponse(model=model, choices=[Choices(index=0, message=msg,
                                                           finish_reason="tool_calls" if calls else "stop")],
                             usage=usage)


class Script:
    """Decides the next move from the conversation so far."""

    def __init__(self, messages: list, model: str):
        self.model = model
        self.messages = [m if isinstance(m, dict) else m.model_dump() for m in messages]
        text = "\n".join(str(m.get("content") or "") for m in self.messages if m.get("role") == "user")
        found = _STATEMENT.search(text)
        self.task, self.config, self.target = found.groups() if found else (None, None, None)
        outs = _OUTPUTS.search(text)
        self.outputs = [n.strip() for n in outs.group(1).split(",")] if outs else []
        self.history = self._history()

    def _history(self) -> list[tuple[str, dict, str]]:
        """(tool, arguments, result) of every tool call so far, in order."""
        results = {m.get("tool_call_id"): str(m.get("content") or "") for m in self.messages if m.get("role") == "tool"}
        done = []
        for m in self.messages:
            for c in (m.get("tool_calls") or []) if m.get("role") == "assistant" else []:
                fn = c["function"]
                done.append((fn["name"], json.loads(fn.get("arguments") or "{}"), results.get(c["id"], "")))
        return done

    def next(self) -> tuple[str, list[tuple[str, dict]]]:
        if self.task is None:
            return "I cannot find the task statement in this conversation.", []
        reference = _reference_kernel(self.target, self.task, self.config) if self.model == "reference" else None
        if self.model == "reference" and reference is None:
            return f"There is no reference kernel for {self.task} {self.config} on {self.target}; I stop.", []
        if not self.history:
            mnemonic = _first_mnemonic(reference) if reference else None
            pattern = mnemonic or "abi|kernel"
            return f"Looking up {pattern} before writing the kernel.", [("grep_docs", {"pattern": pattern})]
        name, args, result = self.history[-1]
        writes = [a["code"] for n, a, _ in self.history if n == "write_code"]
        attempt = writes[-1] if writes else None
        if name == "grep_docs":
            code = _mutant(reference, 0) if reference else _idle_kernel(self.target)
            return "A first version of the kernel.", [("write_code", {"code": code})]
        if name == "write_code":
            return "Checking the syntax.", [("check_syntax", {})]
        if name == "check_syntax":
            if "All checks passed" in result:
                return "It assembles; evaluating.", [("run_evaluation", {})]
            if reference and len(writes) < 4:
                return "Fixing the assembly error.", [("write_code", {"code": _mutant(reference, len(writes))})]
            return "I cannot get this kernel to assemble; I stop here.", []
        if name == "run_evaluation":
            if result.startswith("All elements match"):
                cycles = re.search(r"(\d+) cycles", result)
                return f"The kernel is correct ({cycles.group(1) if cycles else '?'} cycles). Done.", []
            if reference and attempt != reference and self.outputs:
                return "Some outputs are wrong; looking at them.", [
                    ("view_output", {"tensor": self.outputs[0], "start_row": 0, "rows": 2})]
            if self.model == "fail" and self.outputs and not any(n == "view_output" for n, _, _ in self.history):
                return "The outputs are wrong; looking at them.", [
                    ("view_output", {"tensor": self.outputs[0], "start_row": 0, "rows": 2})]
            return "I could not find a correct kernel.", []
        if name == "view_output":
            if reference:
                return "I left out an instruction; here is the complete kernel.", [("write_code", {"code": reference})]
            return "I do not know how to fix this.", []
        return "Done.", []


class CodesignScript(Script):
    """Phase 2 of a co-design session, from the item's reference co-design case."""

    def next(self) -> tuple[str, list[tuple[str, dict]]]:
        from kcgen.paths import TASKS
        case = TASKS / "codesign" / str(self.target) / str(self.task)
        if self.task is None or not (case / "extension.isa").exists():
            return f"There is no co-design case for {self.task} on {self.target}; I keep the base kernel.", []
        extension = (case / "extension.isa").read_text(encoding="utf-8")
        proposals = [(a, r) for n, a, r in self.history if n == "propose_instruction"]
        if not self.history:
            return "Profiling the base kernel first.", [("profile_kernel", {})]
        name, args, result = self.history[-1]
        if name == "profile_kernel":
            return ("The hot rows emulate a missing vector operation with several instructions; proposing it.",
                    [("propose_instruction", {"isadl": _colliding(extension, self.target),
                                              "rationale": "one instruction for the sequence the profile shows"})])
        if name == "propose_instruction":
            if result.startswith("rejected") and len(proposals) < 3:
                return "The encoding collides; using a free opcode.", [
                    ("propose_instruction", {"isadl": extension, "rationale": "as before, with a free opcode"})]
            if result.startswith("accepted"):
                return "Rewriting the kernel with the new instruction.", [
                    ("write_code", {"code": _codesign_kernel(case, self.target, self.task, self.config)})]
            return "My proposals were rejected; I keep the base kernel.", []
        if name == "write_code":
            return "Checking the syntax.", [("check_syntax", {})]
        if name == "check_syntax":
            if "All checks passed" in result:
                return "It assembles; evaluating.", [("run_evaluation", {})]
            return "The extended kernel does not assemble; I stop.", []
        if name == "run_evaluation":
            cycles = re.search(r"(\d+) cycles", result)
            if result.startswith("All elements match"):
                return f"The extended kernel is correct ({cycles.group(1) if cycles else '?'} cycles). Done.", []
            return "The extended kernel is wrong; I stop.", []
        return "Done.", []


def _colliding(extension: str, target: str) -> str:
    """The extension with its first constant field set to that of an existing instruction of the
    same format: a realistic first attempt that the validator must reject."""
    import isadl
    from kcgen.paths import TARGETS
    found = re.search(r"encoding\s+(\w+)\(\s*(\w+)\s*=\s*(\w+)", extension)
    if not found:
        return extension
    fmt, field = found.group(1), found.group(2)
    base = isadl.load(TARGETS / f"{target}.isa")
    for insn in base.isa.instructions:
        if insn.encoding is not None and insn.encoding.format == fmt:
            for b in insn.encoding.bindings:
                if b.field == field and b.value is not None:
                    value = base.params_eval(b.value)
                    return extension[:found.start(3)] + f"{value:#x}" + extension[found.end(3):]
    return extension


def _codesign_kernel(case, target: str, task: str, config: str) -> str:
    """The case's kernel, generated for the base ISA extended with the case's extension."""
    import isadl
    from kcgen import codesign, taskspec
    from kcgen.evaluation import layout_for
    from kcgen.paths import TARGETS, load_module
    ext = codesign.wrap(target, "case", (case / "extension.isa").read_text(encoding="utf-8"))
    spec = isadl.load_text(ext, str(TARGETS / f"{target}_case.isa"))
    item = taskspec.find(task)
    return load_module(case / "kernel.py").generate(item, item.config(target, config),
                                                    layout_for(spec, item, target, config), spec)


def _reference_kernel(target: str, task: str, config: str) -> Optional[str]:
    import isadl
    from kcgen import kernels, taskspec
    from kcgen.paths import TARGETS
    try:
        spec = isadl.load(TARGETS / f"{target}.isa")
        item = taskspec.find(task)
    except Exception:
        return None
    kernel = kernels.find("reference", spec, item, target, config)
    return kernel.text if kernel else None


def _instruction_lines(code: str) -> list[int]:
    """Indexes of the lines that hold an instruction (not a label, directive, or comment)."""
    out = []
    for i, line in enumerate(code.splitlines()):
        body = re.split(r"#|//|;", line, maxsplit=1)[0].strip()
        body = re.sub(r"^[A-Za-z_.$][\w.$]*:\s*", "", body)
        if body and not body.startswith("."):
            out.append(i)
    return out


def _first_mnemonic(code: str) -> Optional[str]:
    lines = code.splitlines()
    for i in _instruction_lines(code):
        body = re.split(r"#|//|;", lines[i], maxsplit=1)[0].strip()
        body = re.sub(r"^[A-Za-z_.$][\w.$]*:\s*", "", body)
        return re.escape(body.split()[0])
    return None


def _mutant(code: str, k: int) -> str:
    """The kernel with one instruction left out, a typical slip (a missing load, store, update or
    branch of the kernel's main body): the k-th instruction counted outwards from the middle."""
    lines = code.splitlines()
    # not a padding `nop` (a bundle that waits for a result or fills a delay slot): leaving one out
    # is no slip a simulator that waits for results would show
    idx = [i for i in _instruction_lines(code) if re.split(r"//|#", lines[i])[0].strip() != "nop"]
    if len(idx) < 3:
        return code
    mid = len(idx) // 2
    order = sorted(range(len(idx) - 1), key=lambda i: (abs(i - mid), i))  # never the last: it ends the kernel
    drop = idx[order[k % len(order)]]
    return "\n".join(lines[:drop] + lines[drop + 1:]) + "\n"


def _idle_kernel(target: str) -> str:
    return "# scripted/fail: a kernel that computes nothing\n"
