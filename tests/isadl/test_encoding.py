"""Format layouts, scattered immediates and decoder-overlap rules (unit level)."""
from hypothesis import given, strategies as st

import isadl
from isadl import ir
from isadl.encoding import Encoded, find_overlaps, layout
from isadl.parser import parse_text

RV = """
isa rv {
  regs x[32]: i32
  format B { opcode 6:0; funct3 14:12; rs1 19:15; rs2 24:20; imm { 12 = 31, 10:5 = 30:25, 4:1 = 11:8, 11 = 7 } }
  format J { opcode 6:0; rd 11:7; imm { 20 = 31, 10:1 = 30:21, 11 = 20, 19:12 = 19:12 } }
  instruction BEQ {
    syntax "beq {rs1:x}, {rs2:x}, {target:pcrel13}"
    encoding B(opcode=0x63, funct3=0, rs1, rs2, imm=target)
  }
  instruction JAL {
    syntax "jal {rd:x}, {target:pcrel21}"
    encoding J(opcode=0x6f, rd, imm=target)
  }
}
"""


def _layouts():
    isa = parse_text(RV)[0]
    errors = []
    return {f.name: layout(f, 32, lambda loc, m: errors.append(m)) for f in isa.formats}, errors


def test_b_type_layout_matches_the_riscv_spec():
    lays, errors = _layouts()
    assert errors == []
    imm = lays["B"].fields["imm"]
    assert (imm.value_width, imm.shift) == (13, 1)
    # beq x0, x0, -4 is 0xfe000ee3 (GNU as); its immediate bits are imm & 0x1ffe placed as the spec says
    word = imm.insert(0x63, -4 & 0x1FFF)
    assert word & imm.word_mask == 0xFE000E80
    assert imm.extract(0xFE000EE3) == (-4 & 0x1FFF)


@given(st.integers(min_value=-(1 << 20), max_value=(1 << 20) - 1).map(lambda v: v & ~1))
def test_j_type_insert_extract_round_trip(offset):
    lays, _ = _layouts()
    imm = lays["J"].fields["imm"]
    bits = offset & ((1 << 21) - 1)
    word = imm.insert(0, bits)
    assert word & ~imm.word_mask == 0
    assert imm.extract(word) == bits


def test_mask_and_match_of_checked_instructions():
    spec = isadl.load_text(RV)
    beq, jal = spec.instructions["BEQ"], spec.instructions["JAL"]
    assert (beq.mask, beq.match) == (0x707F, 0x63)
    assert (jal.mask, jal.match) == (0x7F, 0x6F)
    assert beq.fields == {"rs1": "rs1", "rs2": "rs2", "imm": "target"}
    assert beq.operands["target"].kind == "pcrel" and beq.operands["target"].width == 13


def _enc(name, mask, match, line):
    return Encoded(name, "w32", mask, match, ir.Loc("t", line, 1))


def test_overlap_rules():
    errors = []
    find_overlaps([
        _enc("ADD", 0xFE00707F, 0x33, 1),
        _enc("SUB", 0xFE00707F, 0x40000033, 2),    # differs in funct7: fine
        _enc("NOP", 0xFFFFFFFF, 0x13, 3),          # strictly more specific than ADDI: fine
        _enc("ADDI", 0x707F, 0x13, 4),
        _enc("ADD2", 0xFE00707F, 0x33, 5),         # identical to ADD
        _enc("P", 0x7F | 0xF00, 0x0B, 6),          # P and Q overlap, neither more specific
        _enc("Q", 0x7F | 0xF000, 0x0B, 7),
    ], lambda loc, msg: errors.append((loc.line, msg)))
    assert [line for line, _ in errors] == [5, 7]
    assert errors[0][1].startswith("instructions ADD and ADD2 cannot be told apart by a decoder (identical fixed bits")
    assert "neither is more specific" in errors[1][1]
