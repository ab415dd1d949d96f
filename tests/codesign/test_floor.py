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


FP_SCAN = """
instruction S_SUM_FP {
  syntax "S_SUM_FP {rd:f}, {rs1:gp}"
  encoding R(opcode=0x33, rd, rs1)
  unit core; cycles CYCLES
  semantics {
    let base = gp[rs1]
    f[rd] = bf16(sum(k in 0..256: f32(fpsram[base + k])))
  }
  doc "Sums 256 entries of the FP SRAM."
}
"""


def test_the_floor_charges_memory_reads_at_the_bases_port_rate(tmp_path):
    """256 bf16 reads of the FP SRAM: as reduction terms they are 4 cycles at VLEN = 64 a cycle, but no
    base instruction reads more than one fpsram element (2 bytes) a cycle (S_LD_FP), so they take at
    least 512 / 2 = 256 cycles."""
    rates = codesign.port_rates(isadl.load(PLENA))
    assert rates["fpsram"] == (2, 2)  # S_LD_FP / S_ST_FP: one bf16 a cycle
    v = rejected(tmp_path, FP_SCAN.replace("CYCLES", "4"), r"512 bytes read from fpsram at 2 per cycle")
    assert v.floors["S_SUM_FP"] == 256
    ok = codesign.propose(PLENA, FP_SCAN.replace("CYCLES", "256"), tmp_path / "ok", build=False)
    assert ok.floors["S_SUM_FP"] == 256 and not any("floor" in r for r in ok.reasons), ok.reasons


def test_a_let_cannot_hide_which_elements_are_read(tmp_path):
    """The index names a let computed from the loop variable, not the variable itself: still 256
    distinct elements."""
    hidden = FP_SCAN.replace("f[rd] = bf16(sum(k in 0..256: f32(fpsram[base + k])))",
                             "var acc: f32 = 0.0\n    for k in 0..256 { let a = base + k\n"
                             "      acc = acc + f32(fpsram[a]) }\n    f[rd] = bf16(acc)")
    v = rejected(tmp_path, hidden.replace("CYCLES", "4"), r"512 bytes read from fpsram")
    assert v.floors["S_SUM_FP"] == 256


def test_vector_sram_rates_come_from_plenas_vector_ops():
    """V_ADD_VV reads two VLEN rows of bf16 and writes one in a cycle: at least 256 bytes read and 128
    written a cycle."""
    reads, writes = codesign.port_rates(isadl.load(PLENA))["vsram"]
    assert reads == 2 * 64 * 2 and writes >= 64 * 2
