"""amdnpu's result latencies against llvm-aie's public AIE2 scheduling model (issue 19, item 4b).

The table below was derived by hand from Xilinx/llvm-aie llvm/lib/Target/AIE/aie2/AIE2Schedule.td
(the version at commit 0361a31e60de693408ec9bf8652f2ee8ac1a6150; line numbers are that file's). An
itinerary's operand-cycle list starts with its results: the first number is the pipeline stage (E1 =
the issue cycle) at the end of which the result is written, so an operation reading it in E1 may issue
that many cycles later (LLVM: latency = def stage - use stage + 1). That is isadl's `latency`. The
instruction -> itinerary pairing is by name (VMAC -> II_VMAC, ...) [I: the pairing is in the
generated AIE2GenInstrInfo.td, not read here]. Where a pair of instructions forwards (VEC_Bypass,
MOV_Bypass) or reads late (VMAC reads its accumulator in E3), hardware is faster than the table;
targets/amdnpu.isa (deviation 5) says what the model does there."""
from __future__ import annotations

import pytest

import isadl
from kcgen.paths import TARGETS
from kcgen.sim.cgen import _static_regs

SCALAR = ["ADD", "SUB", "AND", "OR", "XOR", "NE", "GE", "LT", "GEU", "LTU", "LSHL", "ASHL", "ADDI", "CLZ",
          "EXTEND_S8", "EXTEND_S16", "EXTEND_U8", "EXTEND_U16", "EQZ", "NEZ", "ABS", "SEL_NEZ", "SEL_EQZ"]

# (what, AIE2Schedule.td line: itinerary and its result stage, latency, instructions; a name ending
# in "*" stands for every instruction with that prefix)
TABLE = [
    ("scalar ALU", "444 II_ADD [1,...], 753 II_SUB, 455 II_AND, 643 II_OR, 1158 II_XOR, 640 II_NE, 468 II_GE, "
     "604 II_LT, 469 II_GEU, 605 II_LTU, 603 II_LSHL, 456 II_ASHL, 458 II_CLZ, 464-467 II_EXTEND*, 462 II_EQZ, "
     "641 II_NEZ, 435 II_ABS, 657/658 II_SELEQZ/II_SELNEZ: all [1,...]", 1, SCALAR),
    ("scalar multiply", "639 II_MUL [2,1,1] (EmptyCycles<1> before the R_WX_PORT write)", 2, ["MUL"]),
    ("immediate moves", "622 II_MOVX [1,1], 614 II_MOVA [1,1]; movxm [I: its itinerary not read, 1]", 1,
     ["MOVX", "MOVX_LC", "MOVA_*", "MOVXM_*"]),
    ("register moves (mv slot)", "623 II_MOV_SCL [1,1], 606 II_MOV [1,1]", 1, ["MOV_*"]),
    ("decrement and jump", "475 II_JNZD [1,1,1,...]", 1, ["JNZD"]),
    ("scalar loads", "477 II_LDA [7,1,1], 507 II_LDA_POST_1D [7,1,1,1] (the post-modified pointer: 1)", 7,
     ["LDA_*"]),
    ("vector loads, unit A", "834 II_VLDA_W [7,1,1], 839 II_VLDA_POSTINC_W [7,1,1,1]", 7, ["VLDA_*"]),
    ("vector loads, unit B", "894 II_VLDB [7,1,1], 920 II_VLDB_POSTINC [7,1,1,1]", 7, ["VLDB_*"]),
    ("shift-round-saturate to a vector", "1042 II_VSRS [4,1,1,...] (W_WA_PORT in E4)", 4, ["VSRS_*"]),
    ("upshift to an accumulator", "1156 II_VUPS [3,1,1,...] (CM_WM_PORT in E3)", 3, ["VUPS_*"]),
    ("bf16 -> fp32 accumulator", "1112 II_VCONVfp32bf16 [2,1]", 2, ["VCONV_FP32_BF16_*"]),
    ("fp32 accumulator -> bf16", "1105 II_VCONV [2,1,...]", 2, ["VCONV_BF16_FP32_*"]),
    ("vector ALU (mv slot)", "1124 II_VADDSUB / 776 II_VADD / 784 II_VSUB [2,1,1], 1122 II_VSEL [2,1,1,1], "
     "953 II_VMAX_LT / 955 II_VMIN_GE [2,2,1,1] (the mask result too), 1116 II_VSHUFFLE [2,1,1,1]", 2,
     ["VADD_*", "VSUB_*", "VSEL_*", "VMAX_LT_*", "VMIN_GE_*", "VSHUFFLE*"]),
    ("integer multiply (vec slot)", "1028 II_VMUL [5,1,1,1], 1030 II_VNEGMUL [5,1,1,1]", 5, ["VMUL", "VNEGMUL"]),
    ("integer multiply-accumulate", "951 II_VMAC [5,3,1,1,1], 966 II_VMSC [5,3,1,1,1], 778 II_VADDMAC "
     "[5,3,3,1,1,1] (accumulator inputs read in E3)", 5,
     ["VMAC", "VMSC", "VADDMAC", "VADDMSC", "VSUBMAC", "VSUBMSC"]),
    ("bf16 multiply", "1032 II_VMULf [6,1,1,1]", 6, ["VMUL_F_*"]),
    ("bf16 multiply-accumulate", "974 II_VMACf [6,3,1,1,1], 976 II_VMSCf [6,3,1,1,1]", 6, ["VMAC_F_*", "VMSC_F_*"]),
    ("accumulator clear", "774 II_VCLR [5] (CM_WA_PORT after EmptyCycles<4>)", 5, ["VCLR"]),
]

# instructions that write no register (stores, pointer adds write only the post-modified pointer,
# jumps, nops) keep latency 1: 644 II_PADD [1,1,1], 661 II_ST, 1049 II_VST_SRS (no result), 470 II_J.


@pytest.fixture(scope="module")
def spec():
    return isadl.load(str(TARGETS / "amdnpu.isa"))


def _members(spec, pattern: str) -> list[str]:
    names = [i.name for i in spec.isa.instructions]
    got = [n for n in names if n.startswith(pattern[:-1])] if pattern.endswith("*") else [pattern]
    assert got and all(n in names for n in got), pattern
    return got


def _latency(spec, name: str) -> int:
    insn = spec.isa.instruction(name)
    return spec.params_eval(insn.latency if insn.latency is not None else insn.cycles)


@pytest.mark.parametrize("what,source,expected,members", TABLE, ids=[t[0] for t in TABLE])
def test_latency_matches_the_llvm_aie_itinerary(spec, what, source, expected, members):
    wrong = {n: _latency(spec, n) for p in members for n in _members(spec, p) if _latency(spec, n) != expected}
    assert not wrong, f"{what} (AIE2Schedule.td {source}): expected {expected}, the ISA says {wrong}"


def test_every_instruction_with_a_register_result_is_in_the_table(spec):
    """A new instruction that writes a register gets its row (and its .td line) above."""
    covered = {n for t in TABLE for p in t[3] for n in _members(spec, p)}
    missing = [name for name, s in spec.instructions.items()
               if _static_regs(s.insn.semantics, s.operands)[1] and name not in covered]
    assert not missing, missing
