"""Focused behaviour of the assembler and disassembler: labels, expressions, directives, sections,
source map, symbols, pseudo choice, warnings, and the `kcgen asm` / `kcgen disasm` command lines."""
from __future__ import annotations

import re
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from kcgen.asm import AsmError, Assembler, Program

from .common import FIXTURES, ROOT, assembler, disassembler, ops_of, spec


def asm(text: str, isa: str = "rv32i_mini") -> Program:
    return assembler(isa).assemble(text, "prog.s")


def errors(text: str, isa: str = "rv32i_mini") -> list[tuple[int, int, str]]:
    with pytest.raises(AsmError) as info:
        asm(text, isa)
    return [(d.loc.line, d.loc.column, d.message) for d in info.value.diagnostics]


def words(program: Program) -> list[int]:
    return program.words(4)


def targets(program: Program) -> list[int]:
    return [ops_of(p)[0][1].get("target") for p in program.placed]


# ---- labels -----------------------------------------------------------------------------------------------

def test_named_labels_bind_to_the_next_statement():
    p = asm("a: b: nop\nc:\n\n   d: nop\ne: .word 5\nf:\n")
    assert p.symbols == {"a": 0, "b": 0, "c": 4, "d": 4, "e": 8, "f": 12}


def test_local_labels_backward_and_forward_pick_the_nearest_definition():
    p = asm("""\
1:  nop                 # 0
    j 1b                # 4  -> 0
1:  j 1b                # 8  -> 8 (a label on the same line is already defined)
    j 1f                # 12 -> 20
    j 2f                # 16 -> 24
1:  nop                 # 20
2:  j 1b                # 24 -> 20
    j 2b                # 28 -> 24
""")
    assert targets(p) == [None, 0, 8, 20, 24, None, 20, 24]
    # Local labels are not symbols.
    assert p.symbols == {}


def test_branch_to_label_encodes_the_offset_and_records_the_target():
    p = asm("nop\nnop\nloop: addi a0, a0, -1\n bne a0, zero, loop\n beq a0, a1, done\n nop\ndone: ebreak\n")
    bne, beq = p.placed[3], p.placed[4]
    assert ops_of(bne) == [("BNE", {"rs1": 10, "rs2": 0, "target": 8})]
    assert ops_of(beq) == [("BEQ", {"rs1": 10, "rs2": 11, "target": 24})]
    assert words(p)[3] == 0xFE051EE3  # bne a0, zero, -4 (GNU as)


def test_numeric_branch_operand_is_the_offset_itself():
    p = asm("nop\nbeq a0, a1, 8\nbeq a0, a1, -4\njal ra, 0\n")
    assert targets(p)[1:] == [4 + 8, 8 - 4, 12]


def test_pcrel_base_next_counts_from_the_next_instruction():
    p = asm("top: b eq, top\n b ne, 0\n b lt, -2\n", "toy16")
    assert p.text.base == 0x100
    assert targets(p) == [0x100, 0x102 + 2, 0x104 + 2 - 2]
    # the offsets stored in the 10-bit field: top - (0x100 + 2) = -2; 0; -2
    assert [w & 0x3FF for w in p.words(2)] == [0x3FE, 0, 0x3FE]


def test_vliw_jump_target_is_relative_to_the_bundle():
    p = asm("mov r1, #3\nloop: add r1, r1, #-1 ; lda r2, [p0, #4]\njnz r1, #loop\ndone\n", "vliw_mini")
    assert [x.address for x in p.placed] == [0, 4, 20, 28]
    assert ops_of(p.placed[2]) == [("JNZ", {"rs": 1, "target": 4})]


# ---- expressions ---------------------------------------------------------------------------------------------

def test_expressions_with_symbols_dot_and_gnu_precedence():
    p = asm("""\
start: nop
       addi a0, a0, (end - start) / 4
       addi a1, a1, end - start - 1
here:  .word . - start, here, 'A', 1 + 2 | 4, 2 * 3 + 1, ~0 & 0xff, -7 / 2, -7 % 3, 1 << 4 >> 2
end:
""")
    assert ops_of(p.placed[1])[0][1]["imm"] == 12
    assert ops_of(p.placed[2])[0][1]["imm"] == 47
    tail = p.words(4)[3:]
    assert tail == [12, 12, 65, 7, 7, 0xFF, (-3) & 0xFFFFFFFF, (-1) & 0xFFFFFFFF, 4]


def test_a_negative_or_huge_right_operand_is_only_a_shift_problem():
    # Each operator alone is computed (not also `x << y` for the others: a crash or a huge number).
    p = asm("lab: .word lab - -512, lab + 0x10000000000 - 0x10000000000, 5 ^ -1\n    beq a0, a1, lab - -8\n")
    assert p.words(4) == [512, 0, 5 ^ 0xFFFFFFFF, 0xFEB50EE3]  # at 12: beq a0, a1, -4 (to lab + 8)
    with pytest.raises(AsmError) as info:
        asm(".word lab << -1\nlab:\n")
    assert info.value.diagnostics[0].message == "shift by -1"


def test_equ_forward_references_and_chains():
    p = asm("""\
    .word N, M, SIZE
    addi a0, a0, N
    .equ N, M * 2 + 1
    .equ M, 3
    .set SIZE, end - start
start: nop
       nop
end:
""")
    assert p.words(4)[:3] == [7, 3, 8]
    assert ops_of(p.placed[0])[0][1]["imm"] == 7
    assert p.symbols["N"] == 7 and p.symbols["M"] == 3 and p.symbols["SIZE"] == 8


def test_set_may_redefine_a_symbol_and_uses_see_the_value_at_that_point():
    p = asm(".set X, 3\n.word X\n.set X, 4\n.word X\n")
    assert p.words(4) == [3, 4]


def test_set_redefinition_in_expressions_operands_and_the_symbol_table():
    p = asm("""\
    .word X + 1, Y
    .set X, 3
    .word X, Y
    li a0, X
    addi a1, a1, X
    .set X, X + 10
    .word X, Y, X * 2
    li a0, X
    addi a1, a1, X
    .set Y, X
    .set X, lab
lab: .word X, Y
""")
    # A use before any definition sees the first (GNU as); Y = X in force at its own line (13).
    assert p.words(4) == [4, 13, 3, 13, 0x300513, 0x358593, 13, 13, 26, 0xD00513, 0xD58593, 44, 13]
    assert p.symbols["X"] == 44 and p.symbols["Y"] == 13


def test_symbol_values_are_not_remembered_across_redefinitions_or_files():
    # The statement memo must not keep `li a0, N` with N's value of an earlier line or file.
    a = Assembler(spec("rv32i_mini"))
    p = a.assemble(".set N, 3\nli a0, N\n.set N, 4\nli a0, N\n", "one.s")
    assert [ops_of(x)[0][1]["imm"] for x in p.placed] == [3, 4]
    p = a.assemble(".equ N, 7\nli a0, N\n", "two.s")
    assert [ops_of(x)[0][1]["imm"] for x in p.placed] == [7]


# ---- data directives ---------------------------------------------------------------------------------------------

def test_data_directives_emit_little_endian_bytes():
    p = asm("""\
    .data
    .byte 1, 0xff, -1, -128, 'a'
    .half 0x1234, -2
    .word 0xdeadbeef, -1
    .dword 0x1122334455667788, -2
    .zero 3
    .space 2, 0xab
""")
    assert p.sections[".data"].data == bytes.fromhex(
        "01ffff8061" "3412feff" "efbeadde" "ffffffff" "8877665544332211" "feffffffffffffff" "000000" "abab")


def test_vliw_data_directives():
    p = asm(".data\n.byte 1, 2\n.short -1\n.long 0x12345678\n", "vliw_mini")
    assert p.sections[".data"].data == bytes.fromhex("0102ffff78563412")


@pytest.mark.parametrize("values", [[1.5, -0.1, 0.0, -0.0, 1e-45, 3.4028235e38, float("inf"), 1 / 3, 2.0 ** -126],
                                    [123456.789, -2.5e-38, 65504.0, 6.1e-5]])
def test_float_bits_match_ieee_single(values):
    text = ".data\n.float " + ", ".join(repr(v) for v in values) + "\n"
    data = asm(text).sections[".data"].data
    assert data == struct.pack(f"<{len(values)}f", *values)
    assert data == np.array(values, dtype="<f4").tobytes()


def test_float_nan_is_a_quiet_nan():
    data = asm(".data\n.float nan\n").sections[".data"].data
    assert np.isnan(np.frombuffer(data, "<f4")[0])


def test_float_too_large_is_a_located_error_not_a_crash():
    got = errors(".data\n.float 1e39\n")
    assert got[0][:2] == (2, 8)


def test_align_pads_with_zero_bytes_in_data_and_aligns_the_section():
    p = asm("nop\n.data\n.byte 1\n.align 2\n.byte 2\n.p2align 3\n.word 3\n.align 5\nlast: .byte 4\n")
    d = p.sections[".data"]
    assert d.base % 32 == 0  # the section is aligned to its largest .align
    assert bytes(d.data[:12]) == bytes([1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0])
    assert p.symbols["last"] == d.base + 32


def test_align_in_text_keeps_instructions_aligned():
    p = asm("nop\n.align 3\nebreak\n")
    assert [x.address for x in p.placed] == [0, 8]


# ---- sections, source map, symbols ---------------------------------------------------------------------------------

def test_text_starts_at_the_abi_entry_and_data_follows():
    p = asm("    .data\nval: .word 1\n    .text\nstart: nop\n    nop\n    .data\n.word 2\n    .text\n    ebreak\n")
    assert p.text.base == 0 and p.entry == 0
    assert bytes(p.text.data) == bytes.fromhex("13000000" "13000000" "73001000")
    d = p.sections[".data"]
    assert d.base >= p.text.end and d.base % 16 == 0
    assert p.symbols == {"val": d.base, "start": 0}
    img = p.image()
    assert img[:12] == bytes(p.text.data) and img[d.base:d.base + 8] == bytes.fromhex("0100000002000000")
    assert len(img) == d.end


def test_toy16_entry_is_not_zero():
    p = asm("start: stop\n", "toy16")
    assert p.entry == 0x100 and p.text.base == 0x100 and p.symbols == {"start": 0x100}


def test_source_map_lines_and_text():
    p = asm("# comment\n\nstart:\n    li a0, 0x12345\n    nop   # trailing\n\n    ebreak\n")
    assert [(x.address, x.line, x.name) for x in p.placed] == [(0, 4, "LUI"), (4, 4, "ADDI"), (8, 5, "ADDI"),
                                                                (12, 7, "EBREAK")]
    assert p.placed[0].text.startswith("li a0, 0x12345")
    assert p.source_line(8) == 5 and p.source_line(2) is None
    assert p.at(12).name == "EBREAK"


def test_vliw_source_map_has_one_entry_per_bundle():
    p = asm("add r1, r2, r3 ; lda r4, [p0, #8] ; vadd.s8 x0, x1, x2\ndone\n", "vliw_mini")
    assert [(x.address, x.size, x.line) for x in p.placed] == [(0, 16, 1), (16, 4, 2)]
    assert [n for n, _ in ops_of(p.placed[0])] == ["ADD", "LDA", "VADD_S8"]


def test_symbol_table_and_globals():
    p = asm("    .globl main, helper\nmain: nop\nhelper: ret\n    .equ K, 42\n    .data\ntable: .word 1\n")
    assert p.symbols["main"] == 0 and p.symbols["helper"] == 4 and p.symbols["K"] == 42
    assert p.symbols["table"] == p.sections[".data"].base
    assert p.globals == {"main", "helper"}


def test_ignored_directives_are_accepted():
    p = asm('    .file "x.c"\n    .option norvc\n    .type main, @function\nmain: ret\n    .size main, .-main\n')
    assert [x.name for x in p.placed] == ["JALR"]


# ---- pseudo-instructions ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("value,expect", [
    (0, [("ADDI", {"rd": 10, "rs1": 0, "imm": 0})]),
    (-2048, [("ADDI", {"rd": 10, "rs1": 0, "imm": -2048})]),
    (2047, [("ADDI", {"rd": 10, "rs1": 0, "imm": 2047})]),
    (2048, [("LUI", {"rd": 10, "imm": 1}), ("ADDI", {"rd": 10, "rs1": 10, "imm": -2048})]),
    (0x12345FFF, [("LUI", {"rd": 10, "imm": 0x12346}), ("ADDI", {"rd": 10, "rs1": 10, "imm": -1})]),
    (-2049, [("LUI", {"rd": 10, "imm": 0xFFFFF}), ("ADDI", {"rd": 10, "rs1": 10, "imm": 2047})]),
])
def test_li_picks_addi_for_small_constants_and_lui_addi_for_large(value, expect):
    p = asm(f"li a0, {value}\n")
    assert [ops_of(x)[0] for x in p.placed] == expect


def test_li_with_a_symbol_takes_the_general_expansion():
    p = asm("li a0, small\n.equ small, 5\nli a1, lab\nlab: ebreak\n")
    assert [x.name for x in p.placed] == ["LUI", "ADDI", "LUI", "ADDI", "EBREAK"]
    assert ops_of(p.placed[1])[0][1]["imm"] == 5
    assert ops_of(p.placed[3])[0][1]["imm"] == 16


def test_other_pseudos():
    p = asm("mv a0, a1\nnop\nret\nj end\nend: ebreak\n")
    assert p.words(4) == [0x00058513, 0x00000013, 0x00008067, 0x0040006F, 0x00100073]


def test_pseudo_in_another_dialect():
    p = asm("mov r1, sp\n", "toy16")
    assert ops_of(p.placed[0]) == [("SHIFT", {"rd": 1, "rs": 7, "k": 0, "amt": 0})]


def test_hardware_loops_nest_up_to_the_declared_depth():
    body = "".join(f"C_LOOP_START gp{i}, 2\n" for i in range(1, 5)) + "".join(
        f"C_LOOP_END gp{i}\n" for i in range(4, 0, -1))
    p = asm(body, "plena_mini")
    assert len(p.placed) == 8


# ---- optional and enum operands, case ---------------------------------------------------------------------------------

def test_optional_operand_default_and_explicit():
    p = asm("V_ADD_VV gp1, gp2, gp3\nV_ADD_VV gp1, gp2, gp3, 5\nV_EXP_V gp1, gp2\n", "plena_mini")
    assert [ops_of(x)[0][1].get("rmask") for x in p.placed] == [0, 5, 0]


def test_enum_operands_and_case_insensitive_dialect():
    p = asm("SHIFT R1, SP, 3\nshift r1, r2, 1, ROR.W\nB GE, 0\ncmpi r3, r0, 255\n", "toy16")
    assert ops_of(p.placed[0]) == [("SHIFT", {"rd": 1, "rs": 7, "amt": 3, "k": 0})]
    assert ops_of(p.placed[1])[0][1]["k"] == 3
    assert ops_of(p.placed[2])[0][1]["c"] == 3


def test_case_sensitive_dialect_rejects_wrong_case():
    assert errors("ADDI a0, a0, 1\n")[0][2].startswith("unknown instruction 'ADDI'")


def test_warn_clause_gives_a_located_warning_and_still_assembles():
    p = asm("li r1, 1\n  li r0, 5\nli r2, 0\n", "toy16")
    assert len(p.placed) == 3
    assert [(w.loc.line, w.loc.column, w.severity, w.message) for w in p.warnings] == [
        (2, 3, "warning", "li: writes r0, which ignores writes")]
    assert "prog.s:2:3: warning: li: writes r0, which ignores writes" in p.warnings[0].render()


def test_warnings_accompany_errors_in_the_report():
    with pytest.raises(AsmError) as info:
        asm("li r0, 5\nbogus\n", "toy16")
    kinds = [(d.loc.line, d.severity) for d in info.value.diagnostics]
    assert (2, "error") in kinds


def test_no_warnings_when_no_clause_fires():
    assert asm("li r3, -256\n", "toy16").warnings == []


# ---- disassembler ----------------------------------------------------------------------------------------------------

LISTING_LINE = re.compile(r"^ *([0-9a-f]+): ([0-9a-f]+)  (.+)$")


def test_listing_format_labels_and_undecodable_words():
    p = asm("start: addi a0, a0, 1\n bne a0, a1, start\n j out\n .word 0xffffffff\nout: ebreak\n beq a0, a1, 0x100\n")
    listing = disassembler("rv32i_mini").listing(bytes(p.text.data), 0x1000)
    lines = listing.splitlines()
    assert lines == [
        "L_1000:",
        "    1000: 00150513  addi a0, a0, 1",
        "    1004: feb51ee3  bne a0, a1, L_1000",
        "    1008: 0080006f  jal zero, L_1010",
        "    100c: ffffffff  .word 0xffffffff",
        "L_1010:",
        "    1010: 00100073  ebreak",
        "    1014: 10b50063  beq a0, a1, 256",  # target outside the image: the offset
    ]
    for ln in lines:
        assert ln.endswith(":") or LISTING_LINE.match(ln), ln


def test_listing_of_vliw_bundles_and_16_bit_words():
    p = asm("loop: add r0, r0, r1 ; lda r2, [p0, #4]\njnz r1, #loop\ndone\n", "vliw_mini")
    lines = disassembler("vliw_mini").listing(bytes(p.text.data), 0).splitlines()
    assert lines[0] == "L_0:"
    m = [LISTING_LINE.match(ln) for ln in lines[1:]]
    assert all(m), lines
    assert [x.group(3) for x in m] == ["add r0, r0, r1 ; lda r2, [p0, #4]", "jnz r1, #L_0", "done"]
    assert [len(x.group(2)) for x in m] == [32, 16, 8]
    toy = asm("b eq, 0\nstop\n", "toy16")
    lines = disassembler("toy16").listing(bytes(toy.text.data), 0x100).splitlines()
    assert lines[-1] == "     102: f000  stop"


def test_source_of_undecodable_bytes_reassembles():
    d, a = disassembler("rv32i_mini"), assembler("rv32i_mini")
    data = bytes.fromhex("ffffffff13000000")
    src = d.source(data, 0)
    assert ".word 0xffffffff" in src
    assert bytes(a.assemble(src).text.data) == data


def test_decode_word_and_decode():
    d = disassembler("rv32i_mini")
    e, vals = d.decode_word(0x00150513, "w32")
    assert e.name == "ADDI" and vals == {"rd": 10, "rs1": 10, "imm": 1}
    assert d.decode_word(0xFFFFFFFF, "w32") is None
    dec = d.decode(bytes.fromhex("e31eb5fe"), 0x40)  # bne a0, a1, -4
    assert dec[0].ops[0][0] == "BNE" and dict(dec[0].ops[0][1])["target"] == 0x3C


# ---- command line -------------------------------------------------------------------------------------------------------

def kcgen(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    script = Path(sys.executable).with_name("kcgen")
    cmd = [str(script)] if script.exists() else [sys.executable, "-m", "kcgen.cli"]
    return subprocess.run(cmd + list(args), cwd=cwd, capture_output=True, text=True, timeout=120)


PROGRAM = "start: li a0, 0x12345\n  addi a0, a0, 1\n  bne a0, zero, start\n  ebreak\n  .data\n  .word 7\n"


def test_cli_hex_prints_one_word_per_instruction(tmp_path):
    src = tmp_path / "p.s"
    src.write_text(PROGRAM)
    proc = kcgen("asm", str(FIXTURES["rv32i_mini"]), str(src), "--hex")
    assert proc.returncode == 0, proc.stderr
    p = asm(PROGRAM)
    assert proc.stdout.split() == [f"{w:08x}" for w in p.words(4)]
    assert proc.stdout.split()[0] == "00012537"


def test_cli_output_file_holds_the_image(tmp_path):
    src, out = tmp_path / "p.s", tmp_path / "p.bin"
    src.write_text(PROGRAM)
    proc = kcgen("asm", str(FIXTURES["rv32i_mini"]), str(src), "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    assert out.read_bytes() == asm(PROGRAM).image()
    assert out.read_bytes()[:4] == bytes.fromhex("37250100")


def test_cli_vliw_hex_prints_whole_bundles(tmp_path):
    src = tmp_path / "v.s"
    src.write_text("add r1, r2, r3 ; lda r4, [p0, #8]\ndone\n")
    proc = kcgen("asm", str(FIXTURES["vliw_mini"]), str(src), "--hex")
    assert proc.returncode == 0, proc.stderr
    assert [len(w) for w in proc.stdout.split()] == [32, 8]


def test_cli_prints_warnings_and_succeeds(tmp_path):
    src = tmp_path / "w.s"
    src.write_text("li r0, 1\n")
    proc = kcgen("asm", str(FIXTURES["toy16"]), str(src), "--hex")
    assert proc.returncode == 0
    assert f"{src}:1:1: warning: li: writes r0, which ignores writes" in proc.stderr
    assert proc.stdout.split() == ["2001"]


def test_cli_disasm_round_trip(tmp_path):
    src, out = tmp_path / "p.s", tmp_path / "p.bin"
    src.write_text(PROGRAM.split("  .data")[0])
    assert kcgen("asm", str(FIXTURES["rv32i_mini"]), str(src), "-o", str(out)).returncode == 0
    proc = kcgen("disasm", str(FIXTURES["rv32i_mini"]), str(out), "--base", "0x2000")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        "L_2000:",
        "    2000: 00012537  lui a0, 18",
        "    2004: 34550513  addi a0, a0, 837",
        "    2008: 00150513  addi a0, a0, 1",
        "    200c: fe051ae3  bne a0, zero, L_2000",
        "    2010: 00100073  ebreak",
    ]


def test_cli_disasm_bad_base_is_a_usage_error(tmp_path):
    out = tmp_path / "p.bin"
    out.write_bytes(b"\x13\x00\x00\x00")
    proc = kcgen("disasm", str(FIXTURES["rv32i_mini"]), str(out), "--base", "zz")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
