"""The agent's prompts, built from the task spec, the layout, the target's ISA and its generated docs.

System prompt: the role and workflow, the tool rules, the target's documentation up to its
instruction formats (overview, parameters, numeric formats, registers, state, memories, kernel
ABI, timing model, assembler dialect), then its instruction reference (kcgen.docs.quickref: every
instruction and pseudo-instruction by assembly syntax with its unit or slot and cycles/latency,
within MAX_SUMMARY_CHARS; the math functions and product throughput its semantics compute) and
what a kernel writer will look for and the target lacks (ABSENT, checked against the semantics by
tests/agent/test_prompt.py); full instruction pages are reachable through grep_docs. With
--one-shot, a correct kernel of another task on the same target. Task message: the item's
statement (kcgen.evaluation.statement, with how its roofline_cycles is computed), which the
evaluator's own layout produces, so the prompt and the evaluation cannot disagree.
"""
from __future__ import annotations

import re

MAX_SUMMARY_CHARS = 30_000  # the instruction reference's budget: beyond it, rows merge and summaries go

ROLE = """You are an expert assembly programmer for the {target} machine, writing one compute kernel in an
automated, multi-turn tool loop. No human reads your messages or answers questions: act through the tools.

Workflow:
1. Read the task and the data layout below; plan the data movement, tiling, registers and loops.
2. Write a complete kernel with write_code; comment the shape and address of what each part handles.
3. check_syntax until it passes, then run_evaluation. On a mismatch, view_output shows which rows are
   wrong; grep_docs shows any instruction's exact syntax, semantics and timing.
4. Once correct, make it faster (fewer cycles) while keeping it correct; every run_evaluation reports
   cycles and the baseline's cycles.
5. When you are done, reply without calling a tool: that ends the run.

Rules: you have at most {max_turns} turns (one turn = one reply of yours, with any number of tool
calls). The result of the run is your best correct kernel (fewest cycles) among all evaluations.
Tool outputs are cut at about 12,000 characters."""

# What a kernel writer looks for and the target lacks, beyond the math functions the instruction
# reference derives from the semantics. tests/agent/test_prompt.py checks each against the ISA's
# semantics (its datapath analysis, kcgen.hwcost), so a changed ISA cannot leave one stale.
ABSENT = {
    "amdnpu": (
        "No element-wise vector multiply: every vector multiply (vmul, vnegmul, vmac, vmsc, vaddmac, vaddmsc, "
        "vsubmac, vsubmsc and the bf16 vmul.f, vmac.f, vmsc.f) is a small matrix product into an accumulator "
        "register, each output lane a sum of products (the configuration word in the cfg register selects the "
        "element types and with them the shapes: grep_docs vmul).",
        "No vector floating-point add, subtract or multiply of its own: the float work on vector lanes is bf16 "
        "matrix products accumulated in fp32 (vmul.f, vmac.f, vmsc.f), bf16 max/min (vmax_lt.bf16, "
        "vmin_ge.bf16) and the bf16/fp32 conversions (vconv.fp32.bf16, vconv.bf16.fp32); the scalar unit has "
        "no float arithmetic either.",
        "No broadcast: no instruction copies a scalar register into vector or accumulator lanes (the scalar "
        "operands of vector instructions are configuration words, shuffle modes and masks); a value for every "
        "lane comes from memory through a vector load.",
    ),
    "coral": (
        "No vector floating point (Zve32x): every vector instruction works on integer lanes, so float "
        "arithmetic is scalar F instructions on f registers. Integer vector instructions still move float bit "
        "patterns, and a signed 32-bit max with 0 is relu on f32 bits.",
    ),
}

ONE_SHOT = """Example: a correct kernel for another task on this machine.
{statement}

```
{kernel}
```"""


def docs_digest(markdown: str, spec=None) -> str:
    """The target's docs up to its instruction formats, then its instruction reference: from the
    checked ISA when `spec` is given (kcgen.docs.quickref), else the docs' one-line summaries."""
    cut = markdown.find("\n## Instruction formats")
    head = markdown[:cut] if cut > 0 else markdown[:20_000]
    head = re.sub(r"\n## Contents\n.*?(?=\n## )", "\n", head, flags=re.S)  # links to pages the model cannot open
    if spec is not None:
        from kcgen.docs import quickref
        return head.rstrip() + "\n\n" + quickref.reference(spec, MAX_SUMMARY_CHARS, absent=ABSENT.get(spec.isa.name, ()))
    start = markdown.find("\n## Instructions\n")
    if start < 0:
        return head
    end = markdown.find("\n### ", start + 1)
    table = markdown[start:end if end > 0 else len(markdown)]
    rows = []
    for line in table.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 4 and cells[0].startswith("[`"):
            name = re.sub(r"\[`([^`]+)`\]\([^)]*\)", r"\1", cells[0])
            rows.append((name, cells[1].strip("`"), cells[2], cells[3]))
    if not rows:
        return head + table
    full = "\n".join(f"- {syn} ({sec}): {summ}" for _, syn, sec, summ in rows)
    if len(full) > MAX_SUMMARY_CHARS:
        by_section: dict[str, list[str]] = {}
        for name, _, sec, _ in rows:
            by_section.setdefault(sec or "other", []).append(name)
        full = "\n".join(f"- {sec}: {', '.join(names)}" for sec, names in by_section.items())
        full += "\n(grep_docs '<mnemonic>' gives an instruction's syntax, semantics and timing.)"
    return head.rstrip() + "\n\n## Instruction summary\n" + full


def _spec_of(target: str, markdown: str):
    """The checked ISA the docs were generated from, when it is the shipped target of that name (the
    docs' counts line and instruction anchors must match), for a caller that passes only the docs."""
    import isadl
    from kcgen.docs import facts
    from kcgen.paths import TARGETS
    m = re.search(r"^# ([A-Za-z0-9_]+): ", markdown, re.M)
    path = TARGETS / f"{m.group(1) if m else target}.isa"
    if not path.exists():
        return None
    spec = isadl.load(path)
    same = facts.counts(spec) + "." in markdown and all(f'id="insn-{i.name}"' in markdown for i in spec.isa.instructions)
    return spec if same else None


def system_prompt(target: str, docs_markdown: str, max_turns: int, one_shot: tuple[str, str] | None = None,
                  spec=None) -> str:
    spec = spec if spec is not None else _spec_of(target, docs_markdown)
    parts = [ROLE.format(target=target, max_turns=max_turns), "# The machine\n" + docs_digest(docs_markdown, spec)]
    if one_shot:
        parts.append(ONE_SHOT.format(statement=one_shot[0], kernel=one_shot[1].strip()))
    return "\n\n".join(parts)


def task_message(statement: str) -> str:
    return statement + "\n\nWrite the kernel now."
