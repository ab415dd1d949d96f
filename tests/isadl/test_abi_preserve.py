"""`abi { preserve ... }`: the kernel ABI's callee-saved registers, from the text through the checked
Spec (`Spec.preserved()`, `Spec.preserved_registers()`), canonical JSON and the printer; and the
rule that the stack a kernel is given lies in a scratch region."""
from __future__ import annotations

import json

import pytest

import isadl
from isadl import canonical, ir
from isadl.diagnostics import IsaError
from isadl.printer import print_isa

SRC = """
isa t {
  regs x[32]: i32 {
    alias zero=0, ra=1, sp=2, gp=3, tp=4, s0=8, fp=8, s1=9, a0=10, a1=11
    alias s2=18, s3=19, s4=20, s5=21, s6=22, s7=23, s8=24, s9=25, s10=26, s11=27
    zero x0
  }
  regs f[32]: f32 { alias fs0=8, fs1=9, fs2=18, fs3=19 }
  memory ram: u8[0x10000] { base 0 }
  format R { opcode 6:0; rd 11:7; rs1 19:15; rs2 24:20; ignore 14:12; ignore 31:25 }
  instruction ADD {
    syntax "add {rd:x}, {rs1:x}, {rs2:x}"
    encoding R(opcode=0x33, rd, rs1, rs2)
    semantics { x[rd] = x[rs1] + x[rs2] }
  }
  abi {
    args a0, a1
    end return ra
    stack sp = 0x10000
    preserve s0-s11, sp
    preserve fs0-fs3, gp, tp
    region io: ram[0x1000..0x8000] inout
    region stack: ram[0xf000..0x10000] scratch
  }
}
"""

S_REGS = [8, 9, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27]


@pytest.fixture(scope="module")
def spec():
    return isadl.load_text(SRC)


def test_ranges_count_names_and_resolve_through_aliases(spec):
    # s0-s11 is s0, s1, ..., s11 by name: x8, x9, then x18..x27 (not the encodings 8..27)
    assert spec.preserved() == ([("x", i) for i in S_REGS] + [("x", 2)]
                                + [("f", i) for i in (8, 9, 18, 19)] + [("x", 3), ("x", 4)])
    named = spec.preserved_registers()
    assert named[:3] == [("s0", "x", 8), ("s1", "x", 9), ("s2", "x", 18)]
    assert [n for n, _, _ in named][-7:] == ["sp", "fs0", "fs1", "fs2", "fs3", "gp", "tp"]


def test_preserve_lines_add_up_in_the_ir(spec):
    assert spec.isa.abi.preserve == tuple(f"s{i}" for i in range(12)) + ("sp", "fs0", "fs1", "fs2", "fs3", "gp", "tp")


def test_no_preserve_item_means_none():
    spec = isadl.load_text(SRC.replace("    preserve s0-s11, sp\n", "").replace("    preserve fs0-fs3, gp, tp\n", ""))
    assert spec.preserved() == [] and spec.preserved_registers() == []
    no_abi = isadl.load_text(SRC[:SRC.index("  abi {")] + "}\n")
    assert no_abi.preserved() == []


@pytest.mark.parametrize("first, last, names", [
    ("r16", "r19", ["r16", "r17", "r18", "r19"]),
    ("fs9", "fs11", ["fs9", "fs10", "fs11"]),
    ("s0", "s1", ["s0", "s1"]),
    ("q01", "q03", ["q01", "q02", "q03"]),  # the prefix is q0
    ("a0", "x3", None),
    ("sp", "gp", None),
    ("s3", "s3", None),
    ("s4", "s2", None),
])
def test_name_range(first, last, names):
    got = ir.name_range(first, last)
    assert got == names if names is not None else isinstance(got, str)


@pytest.mark.parametrize("names, text", [
    ((), ""),
    (("sp",), "sp"),
    (("s0", "s1", "s2", "sp", "gp"), "s0-s2, sp, gp"),
    (("s9", "s10", "s11", "fs0", "fs1"), "s9-s11, fs0-fs1"),
    (("s1", "s0", "s2"), "s1, s0, s2"),
    (("s1", "s1"), "s1, s1"),
    (("q01", "q02", "q1"), "q01-q02, q1"),
])
def test_name_ranges_reads_back_as_the_same_names(names, text):
    assert ir.name_ranges(names) == text
    back = [n for part in text.split(", ") if part for n in
            (ir.name_range(*part.split("-")) if "-" in part else [part])]
    assert tuple(back) == names


def test_canonical_json_and_hash(spec):
    data = json.loads(canonical.dumps(spec))
    assert data["isa"]["abi"]["preserve"] == [f"s{i}" for i in range(12)] + ["sp", "fs0", "fs1", "fs2", "fs3",
                                                                            "gp", "tp"]
    assert not any(k.startswith("preserve_") for k in data["isa"]["abi"])  # locations stay out
    other = isadl.load_text(SRC.replace("preserve fs0-fs3, gp, tp", "preserve fs0-fs2, gp, tp"))
    assert canonical.content_hash(other) != canonical.content_hash(spec)
    # one line or two, a range or its names: the same meaning, the same hash
    joined = isadl.load_text(SRC.replace("    preserve s0-s11, sp\n    preserve fs0-fs3, gp, tp\n",
                                         "    preserve s0 - s11, sp, fs0, fs1, fs2-fs3, gp, tp\n"))
    assert canonical.content_hash(joined) == canonical.content_hash(spec)


def test_printer_round_trip(spec):
    text = print_isa(spec.isa)
    assert "    preserve s0-s11, sp, fs0-fs3, gp, tp\n" in text
    again = isadl.load_text(text)
    assert again.isa == spec.isa and again.preserved() == spec.preserved()


@pytest.mark.parametrize("change, message", [
    ("preserve s0-s11, sp\n", "preserve s0-s11, sp, fp\n"),
    ("preserve s0-s11, sp\n", "preserve s0-s11, sp, a1\n"),
    ("preserve s0-s11, sp\n", "preserve s0-s11, sp, zero\n"),
    ("preserve s0-s11, sp\n", "preserve s0-s12, sp\n"),
])
def test_mistakes_are_located_errors(change, message):
    with pytest.raises(IsaError) as info:
        isadl.load_text(SRC.replace(change, message), "<t>")
    first = info.value.diagnostics[0]
    assert first.message.startswith("abi preserve: ") and first.loc.line == SRC[:SRC.index(change)].count("\n") + 1


def test_every_error_of_a_line_is_reported():
    with pytest.raises(IsaError) as info:
        isadl.load_text(SRC.replace("preserve s0-s11, sp\n", "preserve s0-s11, sp, fp, a0, zero, q1\n"), "<t>")
    messages = [d.message for d in info.value.diagnostics]
    assert messages == ["abi preserve: 'fp' (x8) is listed twice (first as 's0')",
                        "abi preserve: 'a0' (x10) is an argument register",
                        "abi preserve: 'zero' (x0) is hard-wired to zero", "abi preserve: unknown register 'q1'"]


def test_an_argument_named_by_another_alias_is_still_an_argument():
    with pytest.raises(IsaError, match=r"'x11' is an argument register \('a1' in abi args\)"):
        isadl.load_text(SRC.replace("preserve s0-s11, sp\n", "preserve s0-s11, sp, x11\n"))


# ---- the stack lies in a scratch region -------------------------------------------------------------

def test_a_stack_outside_every_scratch_region_is_an_error():
    bad = SRC.replace("    region stack: ram[0xf000..0x10000] scratch\n", "")
    with pytest.raises(IsaError, match=r"abi stack: sp starts at 0x10000, but no scratch region holds the bytes "
                                       r"below it"):
        isadl.load_text(bad)
    # an inout region there is not enough either: the stack is scratch
    with pytest.raises(IsaError, match="no scratch region"):
        isadl.load_text(bad.replace("ram[0x1000..0x8000] inout", "ram[0x1000..0x10000] inout"))
    # the top may sit anywhere inside a scratch region, not only at its end
    isadl.load_text(bad.replace("    region io:", "    region tmp: ram[0x8000..0xff00] scratch\n    region io:")
                    .replace("stack sp = 0x10000", "stack sp = 0xfe00"))


def test_the_stack_check_uses_the_memory_base_and_element_size():
    src = (SRC.replace("memory ram: u8[0x10000] { base 0 }", "memory ram: u32[0x1000] { base 0x80000000 }")
           .replace("ram[0x1000..0x8000] inout", "ram[0x100..0x800] inout")
           .replace("ram[0xf000..0x10000] scratch", "ram[0xc00..0x1000] scratch"))
    isadl.load_text(src.replace("stack sp = 0x10000", "stack sp = 0x80004000"))
    with pytest.raises(IsaError, match="no scratch region"):
        isadl.load_text(src.replace("stack sp = 0x10000", "stack sp = 0x80003000"))


# ---- the targets ------------------------------------------------------------------------------------

def _names(spec) -> list[str]:
    return [n for n, _, _ in spec.preserved_registers()]


def test_riscv_targets_preserve_what_their_psabi_convention_does():
    s_regs = [f"s{i}" for i in range(12)]
    coral = isadl.load("coral")  # ilp32: the integer convention, so no f register is preserved
    assert _names(coral) == s_regs + ["sp", "gp", "tp"]
    assert coral.preserved() == [("x", i) for i in S_REGS] + [("x", 2), ("x", 3), ("x", 4)]
    boom = isadl.load("boom")  # lp64d
    assert _names(boom) == s_regs + [f"fs{i}" for i in range(12)] + ["sp", "gp", "tp"]
    assert boom.preserved() == ([("x", i) for i in S_REGS] + [("f", i) for i in S_REGS]
                                + [("x", 2), ("x", 3), ("x", 4)])


def test_amdnpu_preserves_peanos_callee_saved_registers():
    # CSR_AIE2 (llvm-aie AIE2CallingConv.td): lr, r16..r23, p6, p7; lr is not modelled
    spec = isadl.load("amdnpu")
    assert spec.preserved() == [("r", i) for i in range(16, 24)] + [("p", 6), ("p", 7)]


def test_plena_preserves_nothing():
    assert isadl.load("plena").preserved() == []


@pytest.mark.parametrize("target", ["coral", "boom", "amdnpu", "plena"])
def test_every_target_memory_byte_a_kernel_may_write_is_in_a_region(target):
    """Coral's stack (the top quarter of DTCM) is declared; every target's stack top is scratch."""
    spec = isadl.load(target)
    abi = spec.isa.abi
    if abi.stack:
        top = spec.params_eval(abi.stack[1])
        ok = False
        for r in abi.regions:
            mem = next(m for m in spec.isa.memories if m.name == r.memory)
            if r.role == "scratch" and mem.base is not None:
                size = spec.types[r.memory].bits // 8
                lo = spec.params_eval(mem.base) + spec.params_eval(r.lo) * size
                hi = spec.params_eval(mem.base) + spec.params_eval(r.hi) * size
                ok |= lo <= top - 1 < hi
        assert ok
    if target == "coral":
        stack = next(r for r in abi.regions if r.name == "stack")
        assert (stack.memory, stack.role) == ("dtcm", "scratch")
        n = spec.params["DTCM_BYTES"]
        assert (spec.params_eval(stack.lo), spec.params_eval(stack.hi)) == (n * 3 // 4, n)
