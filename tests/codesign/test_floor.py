"""Issue 18 item 3: the cycle floor sees the work inside helper functions, and no instruction may do
more than a stated cap of element operations (an instruction is not a program: the step budget
counts instructions, not the work inside one)."""
from __future__ import annotations

import isadl
from kcgen import codesign

from .test_adversarial_proposals import rejected
from .test_codesign import PLENA

HIDDEN = """
function busy(x: f32) -> f32 = sum(k in 0..4096: x * 0.5 + f32(k))
instruction V_BUSY {
  syntax "V_BUSY {rd:gp}, {rs1:gp}"
  encoding R(opcode=0x33, rd, rs1)
  unit core; cycles CYCLES
  semantics {
    vsram[gp[rd]] = bf16(busy(f32(vsram[gp[rs1]])))
  }
  doc "One element: 4096 additions hidden in a helper function."
}
"""


def test_work_inside_a_function_counts(tmp_path):
    """4096 reduction terms over PLENA's best elementwise rate (VLEN = 64 a cycle) floor it at 64:
    at 1 cycle it is rejected, as it would be with the sum written inline."""
    v = rejected(tmp_path, HIDDEN.replace("CYCLES", "1"), r"declares 1 cycles, below the floor of")
    assert v.floors["V_BUSY"] >= 4096 // 64
    inline = codesign.propose(PLENA, HIDDEN.replace("CYCLES", "1").replace(
        "bf16(busy(f32(vsram[gp[rs1]])))", "bf16(sum(k in 0..4096: f32(vsram[gp[rs1]]) * 0.5 + f32(k)))"),
        tmp_path / "inline", build=False)
    assert v.floors["V_BUSY"] == inline.floors["V_BUSY"]


def test_an_instruction_beyond_the_work_cap_is_rejected(tmp_path):
    """A loop of 2^40 honestly costed iterations: accepted before, and `kcgen run` never returned."""
    text = """
instruction V_FOREVER {
  syntax "V_FOREVER {rd:gp}"
  encoding R(opcode=0x33, rd)
  unit core; cycles 2000000000
  semantics {
    for i in 0..1099511627776 { gp[rd] = gp[rd] + 1 }
  }
  doc "Counts to 2^40."
}
"""
    cap = codesign.work_cap(isadl.load(PLENA))
    rejected(tmp_path, text, rf"more than the cap of {cap} one instruction may do")


def test_the_shipped_cases_are_within_the_cap(tmp_path):
    from kcgen.paths import TASKS
    for case in ("relu", "dllm_sampling"):
        text = (TASKS / "codesign" / "plena" / case / "extension.isa").read_text()
        v = codesign.propose(PLENA, text, tmp_path / case, build=False)
        assert not any("cap" in r for r in v.reasons), v.reasons
