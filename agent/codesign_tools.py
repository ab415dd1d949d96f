"""The co-design tools: propose_instruction (validate, merge as an overlay, rebuild, switch) and
profile_kernel (where the cycles go). Enabled for runs with RunSettings.codesign."""
from __future__ import annotations

import re
from .tools import ToolError

GUIDE = """Co-design: this run may extend the instruction set. If the machine lacks an instruction your
kernel needs, propose one with propose_instruction: give one or more `instruction` blocks (and any
state they need) in the same description language as the machine's documentation (grep_docs shows how
existing instructions are written: syntax, encoding, unit and cycles, semantics, doc). The proposal
is validated (it must decode unambiguously next to every existing instruction, type-check, have
bounded loops, doc text, and declare no fewer cycles than the work its semantics do allows); if it
is accepted the machine is rebuilt and check_syntax, run_evaluation and grep_docs use the extended
machine from then on. profile_kernel shows where your kernel's cycles go."""

PROPOSE = {"type": "function", "function": {
    "name": "propose_instruction",
    "description": "Propose new instruction(s) for this machine in its description language (instruction "
                   "blocks only, no isa header). Returns accepted (the machine is rebuilt with them) or the "
                   "reasons for rejection.",
    "parameters": {"type": "object", "additionalProperties": False, "required": ["isadl", "rationale"],
                   "properties": {"isadl": {"type": "string", "description": "the instruction block(s)"},
                                  "rationale": {"type": "string", "description": "why the kernel needs it"}}}}}

PROFILE = {"type": "function", "function": {
    "name": "profile_kernel",
    "description": "Run the saved kernel once and report where its cycles go: per instruction, per unit, the "
                   "hottest source lines, and the most frequent chains of dependent instructions (fusion "
                   "candidates for a new instruction).",
    "parameters": {"type": "object", "additionalProperties": False, "properties": {}, "required": []}}}

_NAME = re.compile(r"instruction\s+(\w+)")


def tools(run) -> dict:
    """name -> (schema, function) for Tools.extra, bound to `run` (an agent Run)."""
    run.proposals = [r for r in run.trajectory.records() if r["type"] == "proposal"]

    def propose_instruction(isadl: str, rationale: str) -> str:
        from kcgen import codesign
        if not isinstance(isadl, str) or not isadl.strip():
            raise ToolError("propose_instruction needs the instruction block(s) in 'isadl'")
        if len(isadl) > 20_000:
            raise ToolError("the proposal is longer than 20,000 characters")
        verdict = codesign.propose(run.isa_path, isadl, run.out / "isa", target=run.settings.target)
        rec = {"type": "proposal", "isadl": isadl, "rationale": rationale, "accepted": verdict.accepted,
               "isa": verdict.name, "base": verdict.base, "mnemonics": verdict.mnemonics or _NAME.findall(isadl),
               "reasons": verdict.reasons, "floors": verdict.floors,
               "overlay": str(verdict.overlay) if verdict.overlay else None, "diff": verdict.text}
        if verdict.accepted:
            run.switch_isa(verdict.overlay)
        run.proposals.append(run._record(rec))
        return verdict.message()

    def profile_kernel() -> str:
        from kcgen.evaluation import Evaluator
        code = run.tools._code()
        if run._evaluator is None:
            run._evaluator = Evaluator()
        return run._evaluator.profile(code, run.isa_path, run.task.path, run.settings.target, run.settings.config)

    return {"propose_instruction": (PROPOSE, propose_instruction), "profile_kernel": (PROFILE, profile_kernel)}


def summary(run) -> dict:
    """Accepted mnemonics and rejected (mnemonic, reason) pairs of the run's proposals."""
    accepted, rejected = [], []
    for p in getattr(run, "proposals", []):
        if p["accepted"]:
            accepted += p["mnemonics"]
        else:
            for m in p["mnemonics"] or ["?"]:
                rejected.append({"mnemonic": m, "reason": (p["reasons"] or ["?"])[0]})
    return {"accepted": accepted, "rejected": rejected}

