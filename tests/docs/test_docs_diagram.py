"""Encoding diagrams against the RISC-V layouts (unprivileged spec, chapter 2) and GNU as encodings."""
from __future__ import annotations

import re

import kcgen.docs as docs
from kcgen.docs.encoding import cells

# (bits, field as cut, what the instruction puts there), MSB first, from the RISC-V spec figures.
ADDI = [("31:20", "imm", "imm"), ("19:15", "rs1", "rs1"), ("14:12", "funct3", "000"),
        ("11:7", "rd", "rd"), ("6:0", "opcode", "0010011")]
BEQ = [("31", "imm[12]", "target[12]"), ("30:25", "imm[10:5]", "target[10:5]"), ("24:20", "rs2", "rs2"),
       ("19:15", "rs1", "rs1"), ("14:12", "funct3", "000"), ("11:8", "imm[4:1]", "target[4:1]"),
       ("7", "imm[11]", "target[11]"), ("6:0", "opcode", "1100011")]
SW = [("31:25", "imm[11:5]", "off[11:5]"), ("24:20", "rs2", "rs2"), ("19:15", "rs1", "rs1"),
      ("14:12", "funct3", "010"), ("11:7", "imm[4:0]", "off[4:0]"), ("6:0", "opcode", "0100011")]
JAL = [("31", "imm[20]", "target[20]"), ("30:21", "imm[10:1]", "target[10:1]"), ("20", "imm[11]", "target[11]"),
       ("19:12", "imm[19:12]", "target[19:12]"), ("11:7", "rd", "rd"), ("6:0", "opcode", "1101111")]
SRAI = [("31:25", "funct7", "0100000"), ("24:20", "rs2", "shamt"), ("19:15", "rs1", "rs1"),
        ("14:12", "funct3", "101"), ("11:7", "rd", "rd"), ("6:0", "opcode", "0010011")]


def _diagram(spec, name):
    ispec = spec.instructions[name]
    return [(c.range, c.field_label, c.content) for c in cells(spec, ispec.format.name, ispec)]


def test_riscv_layouts(specs):
    spec = specs["rv32i_mini"]
    assert _diagram(spec, "ADDI") == ADDI
    assert _diagram(spec, "BEQ") == BEQ
    assert _diagram(spec, "SW") == SW
    assert _diagram(spec, "JAL") == JAL
    assert _diagram(spec, "SRAI") == SRAI


def test_mask_and_match_are_riscv_opcodes_values(specs):
    # riscv-opcodes: addi match 0x13 mask 0x707f; beq match 0x63 mask 0x707f; srai match 0x40005013 mask 0xfe00707f
    index = docs.render_index(specs["rv32i_mini"])
    for name, mask, match in (("ADDI", 0x707F, 0x13), ("BEQ", 0x707F, 0x63), ("SRAI", 0xFE00707F, 0x40005013),
                              ("EBREAK", 0xFFFFFFFF, 0x00100073)):
        rec = next(r for r in index.split("\n\n") if r.startswith(f"INSTRUCTION: {name}\n"))
        assert f"mask 0x{mask:08x}, match 0x{match:08x}" in rec


def _assemble(cs, values: dict[str, int]) -> int:
    """Build a word from the diagram alone: constants as shown, operand bits where the cells say."""
    word = 0
    for c in cs:
        width = c.hi - c.lo + 1
        if c.kind in ("const", "fixed"):
            bits = int(c.bits, 2)
        elif c.kind == "operand":
            m = re.fullmatch(r"(\w+)(?:\[(\d+)(?::(\d+))?\])?", c.content)
            v = values[m.group(1)]
            lo = int(m.group(3) or m.group(2) or 0)
            bits = (v >> lo) & ((1 << width) - 1)
        else:
            bits = 0
        word |= bits << c.lo
    return word


def test_diagram_reproduces_gnu_as_encodings(specs):
    spec = specs["rv32i_mini"]

    def enc(name, **values):
        ispec = spec.instructions[name]
        return _assemble(cells(spec, ispec.format.name, ispec), values)
    # riscv64-unknown-elf-as: beq ra, sp, 8 → 00208463; addi a0, a1, -1 → fff58513;
    # sw a2, 4(a1) → 00c5a223; jal ra, 2048 → 001000ef (offset 0x800 sets imm[11]); srai a0, a1, 2 → 4025d513
    assert enc("BEQ", rs1=1, rs2=2, target=8) == 0x00208463
    assert enc("ADDI", rd=10, rs1=11, imm=-1 & 0xFFF) == 0xFFF58513
    assert enc("SW", rs2=12, rs1=11, off=4) == 0x00C5A223
    assert enc("JAL", rd=1, target=2048) == 0x001000EF
    assert enc("SRAI", rd=10, rs1=11, shamt=2) == 0x4025D513


def _html_rows(page: str, anchor: str):
    start = page.index(f'id="{anchor}"')
    table = page[page.index('<table class="enc">', start):]
    table = table[:table.index("</table>")]
    rows = {}
    for cls in ("bits", "fields", "values"):
        row = re.search(rf'<tr class="{cls}">(.*?)</tr>', table).group(1)
        rows[cls] = [(int(span or 1), text) for span, text in
                     re.findall(r'<td(?: colspan="(\d+)")?[^>]*>(.*?)</td>', row)]
    return rows


def test_html_and_markdown_diagrams_msb_first(specs):
    spec = specs["rv32i_mini"]
    page = docs.render_html(spec)
    rows = _html_rows(page, "insn-BEQ")
    assert [t for _, t in rows["bits"]] == [b for b, _, _ in BEQ]
    assert [t for _, t in rows["fields"]] == [f for _, f, _ in BEQ]
    assert [t for _, t in rows["values"]] == [v for _, _, v in BEQ]
    assert [s for s, _ in rows["bits"]] == [1, 6, 5, 5, 3, 4, 1, 7]  # proportional: one column per bit
    md = docs.render_markdown(spec)
    sec = md[md.index('<a id="insn-BEQ"></a>'):]
    bits_row = next(line for line in sec.splitlines() if line.startswith("| bits |"))
    assert [x.strip() for x in bits_row.strip("|").split("|")][1:] == [b for b, _, _ in BEQ]


def test_vliw_slot_formats_and_bundles(specs):
    spec = specs["vliw_mini"]
    assert _diagram(spec, "LDA") == [("20:11", "imm", "imm"), ("10:8", "ptr", "ptr"), ("7:3", "rd", "rd"),
                                     ("2:0", "op", "001")]
    assert _diagram(spec, "VADD_S8")[0] == ("25:20", "ignore", "000000")
    assert ("19:16", "c", "0000") in _diagram(spec, "VADD_S8")  # the field's default value
    b128 = [(c.range, c.field_label) for c in cells(spec, "B128")]
    assert b128 == [("127:92", "ignore"), ("91:66", "vec"), ("65:45", "st"), ("44:24", "ld"), ("23:4", "alu"),
                    ("3:0", "fixed")]
    assert cells(spec, "B128")[-1].bits == "0011"
    index = docs.render_index(spec)
    assert "FIXED: mask 0x0000000000000000000000000000000f, match 0x00000000000000000000000000000003" in index
