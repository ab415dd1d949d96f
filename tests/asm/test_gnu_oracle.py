"""GNU as as an independent oracle for rv32i_mini: the same program must give the same bytes.

Random programs use every RV32I instruction of the fixture with random operands (every register
name and alias, immediates at and between their edges), the li/mv/j/ret/nop pseudos, branches to
labels and to numeric offsets, %hi/%lo and %pcrel_hi/%pcrel_lo with labels in .text and .data.

GNU as writes relocations for labels even with -mno-relax, so its object is linked at the same
addresses as ours (text at the ABI entry 0, .data where our assembler put it) before objcopy.

Where our conventions differ from GNU as, the generated text differs on purpose:
  * a number written for a branch target is the offset itself for us (LLVM MC convention) and an
    absolute address for GNU as, so GNU gets `.+N` where we get `N`.
"""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .common import aligned_values, assembler, numbers, reg_names, spec, write_insn

TOOLS = {t: shutil.which(f"riscv64-unknown-elf-{t}") for t in ("as", "ld", "objcopy")}
INSTALL_HINT = ("GNU binutils for RISC-V are not installed: run `make oracles` or "
                "`apt-get install -y --no-install-recommends binutils-riscv64-unknown-elf`")
AS_FLAGS = ["-march=rv32i", "-mabi=ilp32", "-mno-relax", "-mno-arch-attr"]
NAME = "rv32i_mini"


@pytest.fixture(scope="module")
def gnu():
    if not all(TOOLS.values()):
        pytest.skip(INSTALL_HINT)
    return gnu_image


def gnu_image(text: str, workdir: Path, data_base: int | None = None) -> bytes:
    """Assemble with GNU as, link at our addresses, return the flat image of .text (and .data)."""
    src, obj, elf, out = (workdir / n for n in ("g.s", "g.o", "g.elf", "g.bin"))
    src.write_text(text)
    steps = [
        [TOOLS["as"], *AS_FLAGS, "-o", str(obj), str(src)],
        [TOOLS["ld"], "-m", "elf32lriscv", "--no-relax", "-e", "0", "-Ttext=0"]
        + ([f"-Tdata={data_base:#x}"] if data_base is not None else []) + ["-o", str(elf), str(obj)],
        [TOOLS["objcopy"], "-O", "binary", "-j", ".text"] + (["-j", ".data"] if data_base is not None else [])
        + [str(elf), str(out)],
    ]
    for cmd in steps:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, f"{Path(cmd[0]).name} failed:\n{proc.stderr}\n--- source\n{text}"
    return out.read_bytes()


def ours(text: str):
    return assembler(NAME).assemble(text, "ours.s")


def compare(gnu, tmp_path, ours_text: str, gnu_text: str | None = None) -> None:
    program = ours(ours_text)
    data = program.sections.get(".data")
    data_base = data.base if data is not None and data.data else None
    expected = gnu(gnu_text if gnu_text is not None else ours_text, tmp_path, data_base)
    got = program.image()
    if got != expected:
        diffs = [f"  {a:#06x}: ours {got[a:a + 4].hex()} gnu {expected[a:a + 4].hex()}"
                 for a in range(0, max(len(got), len(expected)), 4) if got[a:a + 4] != expected[a:a + 4]]
        raise AssertionError("images differ:\n" + "\n".join(diffs[:20]) + f"\n--- ours\n{ours_text}"
                             + (f"\n--- gnu\n{gnu_text}" if gnu_text else ""))


# ---- random programs -----------------------------------------------------------------------------------------

RV32I = sorted(spec(NAME).instructions)
PCREL_INSNS = {n for n, i in spec(NAME).instructions.items() if any(o.kind == "pcrel" for o in i.operands.values())}


def reg(draw, kind="x") -> str:
    idx = draw(st.integers(0, 31))
    return draw(st.sampled_from(reg_names(NAME)[(kind, idx)]))


def li_values() -> st.SearchStrategy[int]:
    # GNU as drops the addi when the low 12 bits are zero (see test_li_with_zero_low_bits_matches_gnu)
    # and wraps values outside i32; everything else must match.
    edges = [0, 1, -1, 2047, -2048, 2048, -2049, 0x7FFFFFFF, -0x80000000, 0x12345FFF, 0x7FFFF800, 0x800]
    return st.one_of(st.sampled_from(edges), st.integers(-2048, 2047), st.integers(-(2 ** 31), 2 ** 31 - 1)).filter(
        lambda v: -2048 <= v < 2048 or v & 0xFFF)


@st.composite
def oracle_program(draw) -> tuple[str, str]:
    """(our text, GNU text) of a random program; every statement has a label L<i>."""
    n = draw(st.integers(1, 24))
    n_data = draw(st.integers(0, 4))
    text_labels = [f"L{i}" for i in range(n + 1)]
    data_labels = [f"D{i}" for i in range(n_data)]
    abs_labels = text_labels + data_labels
    ours_lines, gnu_lines = [], []
    addr = 0
    for i in range(n):
        kind = draw(st.sampled_from(["insn"] * 6 + ["pseudo", "hilo", "pcrel"]))
        a_lines = g_lines = None
        size = 4
        if kind == "insn":
            insn = draw(st.sampled_from(RV32I))
            w = draw(write_insn(NAME, insn, addr, free_labels=tuple(text_labels)))
            text = w.text
            gtext = text
            if insn in PCREL_INSNS and not w.labels:
                # A numeric target: keep it at or after address 0 for the linker, and write it `.+N` for GNU.
                o = spec(NAME).instructions[insn].operands["target"]
                shift = 1
                off = draw(aligned_values(max(o.lo, -addr), o.hi, shift))
                head = text.rsplit(",", 1)[0]
                text = f"{head}, {off}"
                gtext = f"{head}, .{'+' if off >= 0 else '-'}{abs(off)}"
            a_lines, g_lines = [text], [gtext]
        elif kind == "pseudo":
            which = draw(st.sampled_from(["li", "mv", "j", "ret", "nop"]))
            if which == "li":
                v = draw(li_values())
                text = f"li {reg(draw)}, {draw(numbers(v))}"
                size = 4 if -2048 <= v < 2048 else 8
            elif which == "mv":
                text = f"mv {reg(draw)}, {reg(draw)}"
            elif which == "j":
                text = f"j {draw(st.sampled_from(text_labels))}"
            else:
                text = which
            a_lines = g_lines = [text]
        elif kind == "hilo":
            sym = draw(st.sampled_from(abs_labels))
            addend = draw(st.sampled_from(["", "+4", "-8", "+0x7ff"]))
            rd, rs = reg(draw), reg(draw)
            low = draw(st.sampled_from([f"addi {rd}, {rs}, %lo({sym}{addend})", f"lw {rd}, %lo({sym}{addend})({rs})",
                                        f"sw {rd}, %lo({sym}{addend})({rs})", f"lbu {rd}, %lo({sym}{addend})({rs})"]))
            a_lines = g_lines = [f"lui {rd}, %hi({sym}{addend})", low]
            size = 8
        else:  # %pcrel_hi on an auipc, %pcrel_lo naming the auipc's label
            sym = draw(st.sampled_from(abs_labels))
            rd, rs = reg(draw), reg(draw)
            site = f"P{i}"
            low = draw(st.sampled_from([f"addi {rs}, {rd}, %pcrel_lo({site})", f"lw {rs}, %pcrel_lo({site})({rd})",
                                        f"sh {rs}, %pcrel_lo({site})({rd})"]))
            a_lines = g_lines = [f"{site}: auipc {rd}, %pcrel_hi({sym})", low]
            size = 8
        ours_lines.append(f"L{i}: " + "\n    ".join(a_lines))
        gnu_lines.append(f"L{i}: " + "\n    ".join(g_lines))
        addr += size
    tail = [f"L{n}: ebreak"]
    if n_data:
        tail.append("    .data")
        for j, lab in enumerate(data_labels):
            tail.append(f"{lab}: .word {draw(st.integers(0, 2 ** 32 - 1)):#x}")
    return "\n".join(ours_lines + tail) + "\n", "\n".join(gnu_lines + tail) + "\n"


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                                                 HealthCheck.function_scoped_fixture])
@given(prog=oracle_program())
def test_random_programs_match_gnu_as(gnu, tmp_path, prog):
    ours_text, gnu_text = prog
    compare(gnu, tmp_path, ours_text, gnu_text)


@pytest.mark.parametrize("insn", RV32I)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_every_instruction_matches_gnu_as(gnu, tmp_path, insn, data):
    """Each mnemonic on its own, branch targets as labels (a few instructions away, both directions)."""
    labels = {"back": 0, "fwd": 12}
    w = data.draw(write_insn(NAME, insn, 4, labels), label="insn")
    if insn in PCREL_INSNS and not w.labels:
        return  # numeric targets are covered by the random programs
    text = f"back: nop\n    {w.text}\n    nop\nfwd: ebreak\n"
    compare(gnu, tmp_path, text)


# ---- focused cases ---------------------------------------------------------------------------------------------

FOCUSED = {
    "local_labels": "1: addi a0, a0, 1\n   bne a0, a1, 1b\n   beq a0, a1, 1f\n   j 1b\n1: ebreak\n",
    "same_line_local_label": "1: j 1b\n   ebreak\n",
    "li_edges": "li a0, 2047\nli a1, -2048\nli a2, 2048\nli a3, -2049\nli a4, 0x7fffffff\nli a5, -0x7fffffff\n"
                "li a6, 0x12345fff\nli a7, 0x800\n",
    "pseudos": "mv a0, a1\nnop\nret\nj end\nend: ebreak\n",
    "hi_lo_data": "lui a0, %hi(val)\nlw a1, %lo(val)(a0)\naddi a2, a0, %lo(val+4)\nebreak\n.data\n.word 1\nval: .word 2, 3\n",
    "pcrel_pair": "here: auipc a0, %pcrel_hi(val)\naddi a0, a0, %pcrel_lo(here)\nlw a1, %pcrel_lo(here)(a0)\nebreak\n"
                  ".data\nval: .word 7\n",
    "pcrel_to_text": "nop\nsite: auipc t0, %pcrel_hi(target)\njalr ra, %pcrel_lo(site)(t0)\nnop\ntarget: ebreak\n",
    "expressions": ".equ K, 12\naddi a0, a0, K*2-1\naddi a1, a1, (1 << 5) | 3\nslli a2, a2, K - 10\nebreak\n",
    "data_directives": "ebreak\n.data\n.byte 1, 255, -1\n.half 0x1234, -2\n.word 0xdeadbeef\n.dword 0x1122334455667788\n"
                       ".zero 3\n.align 2\n.word .\n",
    "memory_operands": "lw a0, -2048(sp)\nsw a1, 2047(s0)\nlb t0, 0(zero)\nsb t6, -1(x31)\njalr ra, 4(t1)\n",
    "word_in_text": "nop\n.word 0x00000013, 0xffffffff\nebreak\n",
}


@pytest.mark.parametrize("key", sorted(FOCUSED))
def test_focused_programs_match_gnu_as(gnu, tmp_path, key):
    compare(gnu, tmp_path, FOCUSED[key])


@pytest.mark.parametrize("offset", [-16, -8, -4, 0, 4, 8, 2048, 4094])
def test_numeric_branch_offset_is_gnu_dot_relative(gnu, tmp_path, offset):
    """`beq a0, a1, N` (offset N, LLVM MC convention) == GNU `beq a0, a1, .+N`."""
    pad = "nop\n" * 4
    sign = "+" if offset >= 0 else "-"
    compare(gnu, tmp_path, f"{pad}beq a0, a1, {offset}\njal ra, {offset}\n",
            f"{pad}beq a0, a1, .{sign}{abs(offset)}\njal ra, .{sign}{abs(offset)}\n")


# ---- divergences found and fixed ------------------------------------------------------------------------------

@pytest.mark.parametrize("text", [".equ N, 5\nli a0, N\n", "li a0, 2+3\n"])
def test_li_with_a_known_constant_expression_matches_gnu(gnu, tmp_path, text):
    compare(gnu, tmp_path, text)


def test_leading_zero_integer_matches_gnu(gnu, tmp_path):
    compare(gnu, tmp_path, "addi a0, a1, 010\n")


def test_li_with_zero_low_bits_matches_gnu(gnu, tmp_path):
    compare(gnu, tmp_path, "li a0, 0x1000\n")


def test_align_in_text_pads_like_gnu(gnu, tmp_path):
    compare(gnu, tmp_path, "nop\n.align 3\nebreak\n")


def test_memory_operand_without_offset_matches_gnu(gnu, tmp_path):
    compare(gnu, tmp_path, "lw a0, (a1)\n")
