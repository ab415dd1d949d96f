"""The assembler's warnings for an exposed pipeline (`timing vliw { exposed = 1 }`, kcgen.sim.hazards):
amdnpu reads before a result is written, with the distances worked out by hand from the latencies of
targets/amdnpu.isa (llvm-aie's AIE2 itineraries: vlda 7, vmul 5, vsrs 4, vector ALU 2 with a 1-cycle
forwarding path between vector-ALU operations)."""
from __future__ import annotations

import functools

import isadl
from kcgen.asm import Assembler
from kcgen.paths import TARGETS


@functools.lru_cache(maxsize=None)
def asm():
    return Assembler(isadl.load(str(TARGETS / "amdnpu.isa")))


def warnings(text: str) -> list[str]:
    return [str(w.loc) + ": " + w.message for w in asm().assemble(text, "k.s").warnings]


def nops(n: int) -> str:
    return "\n".join(["    nop"] * n)


def test_a_mac_reading_a_load_one_bundle_later_is_six_cycles_early():
    # vlda issues in cycle 0 and writes x0 at the end of E7: a reader may issue in cycle 7
    got = warnings("    vlda wl0, [p0, #0]\n    vmul cm0, x0, x1, r0\n")
    assert len(got) == 1
    assert got[0].startswith("k.s:2:5: vmul reads x0 6 cycle(s) before it is written: vlda on line 1 has latency 7")


def test_six_bundles_between_are_enough():
    assert warnings(f"    vlda wl0, [p0, #0]\n{nops(6)}\n    vmul cm0, x0, x1, r0\n") == []
    got = warnings(f"    vlda wl0, [p0, #0]\n{nops(5)}\n    vmul cm0, x0, x1, r0\n")
    assert len(got) == 1 and "1 cycle(s) before" in got[0] and got[0].startswith("k.s:7:5:")


def test_srs_of_a_mac_result_needs_five_cycles():
    got = warnings(f"    vmul cm0, x0, x1, r0\n{nops(3)}\n    vsrs.s8.s32 wl3, cm0, s0\n")
    assert len(got) == 1 and "reads cm0 1 cycle(s) before" in got[0] and "vmul on line 1 has latency 5" in got[0]
    assert warnings(f"    vmul cm0, x0, x1, r0\n{nops(4)}\n    vsrs.s8.s32 wl3, cm0, s0\n") == []


def test_vector_alu_forwards_to_vector_alu_but_not_to_the_mac():
    # vadd -> vadd: latency 2 less the MOV forwarding path = 1 (the next bundle); vadd -> vmul: 2
    assert warnings("    vadd.16 x4, x1, x1\n    vadd.16 x6, x4, x4\n") == []
    got = warnings("    vadd.16 x4, x1, x1\n    vmul cm1, x4, x4, r0\n")
    assert len(got) == 1 and "vmul reads x4 1 cycle(s) before" in got[0]


def test_a_read_of_what_another_slot_of_the_bundle_writes():
    got = warnings("    vlda wl5, [p0], #32 ; vst wl5, [p1, #0]\n")
    assert len(got) == 1 and got[0].startswith("k.s:1:27: vst reads wl5, which vlda in the same bundle writes")


def test_a_label_forgets_what_was_in_flight():
    assert warnings("    vlda wl0, [p0, #0]\nhere:\n    vmul cm0, x0, x1, r0\n") == []


def test_the_list_is_capped():
    got = warnings("\n".join(["    vlda wl0, [p0, #0]\n    vmul cm0, x0, x1, r0"] * 25) + "\n")
    assert len(got) == 21 and "and 5 more" in got[-1] and "25 in all" in got[-1]
