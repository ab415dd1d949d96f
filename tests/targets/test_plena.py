"""targets/plena.isa: the Feb-2026 PLENA ISA.

(a) every instruction's opcode, field positions and operand syntax against the published table
    (/work/shared/research/plena.md sections 4-6, written out by hand below, not taken from the ISA);
(b) hand-written kernels on the C simulator, checked against numpy + ml_dtypes;
(c) every example of the file on both simulators;
(d) cycle counts of short sequences, worked out by hand from the published latencies.
"""
from __future__ import annotations

import functools
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import isadl
from kcgen import numeric
from kcgen.asm import AsmError, Assembler
from kcgen.asm.disassembler import Disassembler
from kcgen.sim.examples import examples, run_example
from kcgen.sim.pyref import RefMachine
from kcgen.sim.simulator import Simulator

ROOT = Path(__file__).resolve().parents[2]
BF16 = ml_dtypes.bfloat16
MLEN = VLEN = 64
BLEN = 4
HLEN = 16


@functools.lru_cache(maxsize=None)
def spec():
    return isadl.load(ROOT / "targets" / "plena.isa")


@functools.lru_cache(maxsize=None)
def asm() -> Assembler:
    return Assembler(spec())


def assemble(text: str):
    return asm().assemble(text, "kernel.s")


def machine(text: str) -> Simulator:
    sim = Simulator(spec())
    sim.load(assemble(text))
    return sim


def run(sim: Simulator, max_steps: int = 1_000_000):
    result = sim.run(max_steps)
    assert result.status == "halted", result.trap
    return result


# ---- (a) encodings and syntax against the published table ------------------------------------------
#
# plena.md section 4: opcode [5:0], rd [9:6], rs1 [13:10], rs2 [17:14], rs3 [21:18] (rstride or
# rmask), funct1 [25:22] (precision or rorder), [31:26] unused; I18: imm [31:14]; I22: imm [31:10].
FIELDS = {"opcode": (5, 0), "rd": (9, 6), "rs1": (13, 10), "rs2": (17, 14), "rs3": (21, 18),
          "funct": (25, 22), "imm18": (31, 14), "imm22": (31, 10)}


def word_of(**fields: int) -> int:
    w = 0
    for name, value in fields.items():
        hi, lo = FIELDS[name]
        assert 0 <= value < 1 << (hi - lo + 1), (name, value)
        w |= value << lo
    return w


# (mnemonic, opcode, assembly written as in the published syntax column, fields it must produce).
# Sections 5.1-5.6 of plena.md; C_BREAK at 0x31 (the Feb-2026 emulator's value).
TABLE = [
    # 5.1 matrix
    ("M_MM", 0x01, "M_MM 0, gp5, gp9", dict(rs1=5, rs2=9)),
    ("M_TMM", 0x02, "M_TMM 0, gp5, gp9", dict(rs1=5, rs2=9)),
    ("M_BMM", 0x03, "M_BMM 0, gp5, gp9", dict(rs1=5, rs2=9)),
    ("M_BTMM", 0x04, "M_BTMM 0, gp5, gp9", dict(rs1=5, rs2=9)),
    ("M_BMM_WO", 0x05, "M_BMM_WO gp7, 0", dict(rd=7)),
    ("M_MM_WO", 0x06, "M_MM_WO gp7, gp3, 1000", dict(rd=7, rs1=3, imm18=1000)),
    ("M_MV", 0x07, "M_MV 0, gp5, gp9", dict(rs1=5, rs2=9)),
    ("M_TMV", 0x08, "M_TMV 0, gp5, gp9", dict(rs1=5, rs2=9)),
    ("M_BMV", 0x09, "M_BMV gp2, gp5, gp9", dict(rd=2, rs1=5, rs2=9)),
    ("M_BTMV", 0x0A, "M_BTMV gp2, gp5, gp9", dict(rd=2, rs1=5, rs2=9)),
    ("M_MV_WO", 0x0B, "M_MV_WO gp7, 0", dict(rd=7)),
    ("M_BMV_WO", 0x0C, "M_BMV_WO gp7, 0", dict(rd=7)),
    # 5.2 vector (R+mask; V_SUB_VF: rs3 = rmask, funct1 = rorder)
    ("V_ADD_VV", 0x0D, "V_ADD_VV gp1, gp2, gp3, 1", dict(rd=1, rs1=2, rs2=3, rs3=1)),
    ("V_ADD_VF", 0x0E, "V_ADD_VF gp1, gp2, f3, 1", dict(rd=1, rs1=2, rs2=3, rs3=1)),
    ("V_SUB_VV", 0x0F, "V_SUB_VV gp1, gp2, gp3, 1", dict(rd=1, rs1=2, rs2=3, rs3=1)),
    ("V_SUB_VF", 0x10, "V_SUB_VF gp1, gp2, f3, 1, 1", dict(rd=1, rs1=2, rs2=3, rs3=1, funct=1)),
    ("V_MUL_VV", 0x11, "V_MUL_VV gp1, gp2, gp3, 1", dict(rd=1, rs1=2, rs2=3, rs3=1)),
    ("V_MUL_VF", 0x12, "V_MUL_VF gp1, gp2, f3, 1", dict(rd=1, rs1=2, rs2=3, rs3=1)),
    ("V_EXP_V", 0x13, "V_EXP_V gp1, gp2, 1", dict(rd=1, rs1=2, rs3=1)),
    ("V_RECI_V", 0x14, "V_RECI_V gp1, gp2, 1", dict(rd=1, rs1=2, rs3=1)),
    ("V_RED_SUM", 0x15, "V_RED_SUM f4, gp2", dict(rd=4, rs1=2)),
    ("V_RED_MAX", 0x16, "V_RED_MAX f4, gp2, 0", dict(rd=4, rs1=2)),
    # 5.3 scalar FP
    ("S_ADD_FP", 0x17, "S_ADD_FP f1, f2, f3", dict(rd=1, rs1=2, rs2=3)),
    ("S_SUB_FP", 0x18, "S_SUB_FP f1, f2, f3", dict(rd=1, rs1=2, rs2=3)),
    ("S_MAX_FP", 0x19, "S_MAX_FP f1, f2, f3", dict(rd=1, rs1=2, rs2=3)),
    ("S_MUL_FP", 0x1A, "S_MUL_FP f1, f2, f3", dict(rd=1, rs1=2, rs2=3)),
    ("S_EXP_FP", 0x1B, "S_EXP_FP f1, f2", dict(rd=1, rs1=2)),
    ("S_RECI_FP", 0x1C, "S_RECI_FP f1, f2", dict(rd=1, rs1=2)),
    ("S_SQRT_FP", 0x1D, "S_SQRT_FP f1, f2", dict(rd=1, rs1=2)),
    ("S_LD_FP", 0x1E, "S_LD_FP f1, gp2, 300", dict(rd=1, rs1=2, imm18=300)),
    ("S_ST_FP", 0x1F, "S_ST_FP f1, gp2, 300", dict(rd=1, rs1=2, imm18=300)),
    ("S_MAP_V_FP", 0x20, "S_MAP_V_FP gp1, gp2, 300", dict(rd=1, rs1=2, imm18=300)),
    # 5.4 scalar integer
    ("S_ADD_INT", 0x21, "S_ADD_INT gp11, gp12, gp13", dict(rd=11, rs1=12, rs2=13)),
    ("S_ADDI_INT", 0x22, "S_ADDI_INT gp11, gp12, 262143", dict(rd=11, rs1=12, imm18=262143)),
    ("S_SUB_INT", 0x23, "S_SUB_INT gp11, gp12, gp13", dict(rd=11, rs1=12, rs2=13)),
    ("S_MUL_INT", 0x24, "S_MUL_INT gp11, gp12, gp13", dict(rd=11, rs1=12, rs2=13)),
    ("S_LUI_INT", 0x25, "S_LUI_INT gp15, 4194303", dict(rd=15, imm22=4194303)),
    ("S_LD_INT", 0x26, "S_LD_INT gp1, gp2, 31", dict(rd=1, rs1=2, imm18=31)),
    ("S_ST_INT", 0x27, "S_ST_INT gp1, gp2, 31", dict(rd=1, rs1=2, imm18=31)),
    # 5.5 memory: aN in rs2, rstride in rs3, prec in funct1
    ("H_PREFETCH_M", 0x28, "H_PREFETCH_M gp1, gp2, a3, 1, 1", dict(rd=1, rs1=2, rs2=3, rs3=1, funct=1)),
    ("H_PREFETCH_V", 0x29, "H_PREFETCH_V gp1, gp2, a7, 0, 1", dict(rd=1, rs1=2, rs2=7, funct=1)),
    ("H_STORE_V", 0x2A, "H_STORE_V gp1, gp2, a3, 1, 0", dict(rd=1, rs1=2, rs2=3, rs3=1)),
    # 5.6 control
    ("C_SET_ADDR_REG", 0x2B, "C_SET_ADDR_REG a5, gp2, gp3", dict(rd=5, rs1=2, rs2=3)),
    ("C_SET_SCALE_REG", 0x2C, "C_SET_SCALE_REG gp6", dict(rd=6)),
    ("C_SET_STRIDE_REG", 0x2D, "C_SET_STRIDE_REG gp6", dict(rd=6)),
    ("C_SET_V_MASK_REG", 0x2E, "C_SET_V_MASK_REG gp6", dict(rd=6)),
    ("C_LOOP_START", 0x2F, "C_LOOP_START gp1, 4194303", dict(rd=1, imm22=4194303)),
    ("C_LOOP_END", 0x30, "C_LOOP_END gp1", dict(rd=1)),
    ("C_BREAK", 0x31, "C_BREAK", dict()),
]


def _program_for(line: str) -> tuple[str, int]:
    """Assembly text holding `line` and the index of its word: loop instructions need their pair."""
    mnemonic = line.split()[0]
    if mnemonic == "C_LOOP_START":
        return line + "\nC_LOOP_END gp1", 0
    if mnemonic == "C_LOOP_END":
        return f"C_LOOP_START gp1, 2\n{line}", 1
    if mnemonic == "C_BREAK":
        return f"C_LOOP_START gp1, 2\n{line}\nC_LOOP_END gp1", 1
    return line, 0


def test_table_has_every_feb_2026_instruction_and_nothing_else():
    assert len(TABLE) == 49
    assert sorted(op for _, op, _, _ in TABLE) == list(range(0x01, 0x32))
    assert {i.name for i in spec().isa.instructions} == {m for m, _, _, _ in TABLE}
    # later extensions belong in overlays
    names = {i.name for i in spec().isa.instructions}
    for later in ("V_PS_V", "V_SHFT_V", "C_HADAMARD_TRANSFORM", "V_MAX_VF", "V_MIN_VF", "V_TOPK"):
        assert later not in names


@pytest.mark.parametrize("mnemonic,opcode,line,fields", TABLE, ids=[t[0] for t in TABLE])
def test_encoding_matches_the_published_table(mnemonic, opcode, line, fields):
    text, k = _program_for(line)
    program = assemble(text)
    assert program.words(4)[k] == word_of(opcode=opcode, **fields)
    assert program.placed[k].name == mnemonic
    # and the disassembler reads the word back as the same instruction, written the same way
    d = Disassembler(spec()).decode(bytes(program.text.data))[k]
    assert d.ops[0][0] == mnemonic
    dis = Disassembler(spec()).text(d, {})
    assert dis.split()[0] == mnemonic
    assert assemble(_program_for(dis)[0]).words(4)[k] == program.words(4)[k]


def test_decoder_forms():
    d = Disassembler(spec())

    def decode(word):
        got = d.decode(word.to_bytes(4, "little"))[0]
        return got.ops[0][0] if got.ops else None
    # RD and OP forms: only rd / the opcode matter; bits 31:26 are unused in every form
    assert decode(word_of(opcode=0x2C, rd=3, rs1=5, funct=9)) == "C_SET_SCALE_REG"
    assert decode(word_of(opcode=0x31, rd=2, rs2=1)) == "C_BREAK"
    assert decode(word_of(opcode=0x21, rd=1, rs1=2, rs2=3) | (0x2A << 26)) == "S_ADD_INT"
    # R form: an unused field must be 0 (stated as a deviation); unknown opcodes do not decode
    assert decode(word_of(opcode=0x1B, rd=1, rs1=2, rs2=3)) is None
    assert decode(word_of(opcode=0x32)) is None and decode(0) is None


def test_published_parameters():
    p = spec().params
    assert (p["MLEN"], p["BLEN"], p["VLEN"], p["HLEN"]) == (64, 4, 64, 16)
    assert p["HEADS"] == 4                      # BROADCAST_AMOUNT
    assert p["M_PREFETCH_ROWS"] == 64 and p["V_PREFETCH_ROWS"] == 4 and p["V_STORE_ROWS"] == 4
    assert p["MSRAM_ROWS"] == 256 and p["VSRAM_ROWS"] == 1024
    assert (p["INT_SRAM_DEPTH"], p["FP_SRAM_DEPTH"]) == (32, 512)
    assert p["MX_BLOCK"] == 8


def test_register_files():
    sim = Simulator(spec())
    assert len(sim.view("gp")) == 16 and len(sim.view("f")) == 8 and len(sim.view("a")) == 8
    assert sim.view("f").dtype == BF16 and sim.view("a").dtype == np.uint64 and sim.view("gp").dtype == np.uint32
    # gp0 and f0 are hard-wired zeros
    sim.load(assemble("S_ADDI_INT gp0, gp0, 5\nS_ADDI_INT gp1, gp0, 7\nS_LD_FP f0, gp0, 1\nS_LD_FP f1, gp0, 1"))
    sim.view("fpsram")[1] = 1.0
    run(sim)
    assert sim.view("gp")[0] == 0 and sim.view("gp")[1] == 7
    assert float(sim.view("f")[0]) == 0.0 and float(sim.view("f")[1]) == 1.0


def test_syntax_rules():
    # comments with ; and //, optional rmask, bare-integer immediates
    program = assemble("; a comment line\n// another\nV_ADD_VV gp1, gp2, gp3 ; trailing\n"
                       "V_ADD_VV gp1, gp2, gp3, 0 // trailing\n\nV_RED_MAX f1, gp2;\n")
    w = program.words(4)
    assert w[0] == w[1] == word_of(opcode=0x0D, rd=1, rs1=2, rs2=3)
    assert w[2] == word_of(opcode=0x16, rd=1, rs1=2)
    # registers must carry their prefix; no labels; the placeholder of M_MM is 0 or gp0 (not f0)
    for bad in ("V_ADD_VV 1, 2, 3", "loop: S_ADDI_INT gp1, gp1, 1", "M_MM f0, gp1, gp2",
                "S_ADDI_INT gp1, gp0, 262144", "C_SET_ADDR_REG gp1, gp2, gp3", "V_ADD_VF gp1, gp2, gp3"):
        with pytest.raises(AsmError):
            assemble(bad)


def test_assembler_warnings_for_emulator_disagreements():
    assert assemble("M_BMM_WO gp1, 0").warnings == []
    for line in ("M_BMM_WO gp1, 64", "M_MV_WO gp1, 64", "M_BMV_WO gp1, 64", "M_BMM 1, gp1, gp2"):
        assert assemble(line).warnings, line


def test_abi_and_memories():
    isa = spec().isa
    # programs live in an instruction store: no memory takes program sections
    assert all(m.base is None for m in isa.memories)
    assert isa.abi.args == tuple(f"a{k}" for k in range(8))
    assert isa.abi.end == ()                     # a kernel ends by running past its last instruction
    roles = {r.name: (r.memory, r.role) for r in isa.abi.regions}
    assert roles["vector"] == ("vsram", "inout") and roles["tensors"] == ("hbm", "inout")
    assert roles["consts"] == ("fpsram", "in")
    # the loaded program does not touch HBM, and the kernel stops at its end
    sim = machine("S_ADDI_INT gp1, gp0, 1")
    assert not sim.view("hbm").any()
    result = run(sim)
    assert result.instret == 1


# ---- MXFP8 helpers for test data ----------------------------------------------------------------------

E4M3_EMU = numeric.Format(4, 3)  # the element as the Feb-2026 emulator reads it (exponent 15: Inf/NaN)


def mx_tensor(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Element bytes and scale bytes of a row-major float tensor, blocks of 8 along the flat order,
    by the emulator's quantiser (tests/native/test_native_mx_plena.py checks it by hand)."""
    flat = np.asarray(x, np.float32).ravel()
    assert flat.size % 8 == 0
    elems, scales = [], []
    for b in range(flat.size // 8):
        e, s = numeric.mx_encode_block(E4M3_EMU, flat[8 * b:8 * b + 8], "plena")
        elems.append(e)
        scales.append(s)
    return np.concatenate(elems).astype(np.uint8), np.array(scales, np.uint8)


def mx_values(elems: np.ndarray, scales: np.ndarray) -> np.ndarray:
    """float64 values of MXFP8 data as the emulator decodes them, independently of kcgen: ml_dtypes'
    IEEE-style float8_e4m3 (exponent 15 is Inf/NaN) except exponent field 0, which the emulator reads
    as m/8 * 2^-7; scale byte 0 is 0.0."""
    b = np.asarray(elems, np.uint8)
    e = b.view(ml_dtypes.float8_e4m3).astype(np.float64)
    field0 = (b & 0x78) == 0
    e[field0] = np.where(b[field0] & 0x80, -1.0, 1.0) * (b[field0] & 7) / 8 * 2.0 ** -7
    s = np.repeat(np.asarray(scales, np.float64), 8)
    return e * np.where(s == 0, 0.0, np.exp2(s - 127))


def put_hbm(sim: Simulator, base: int, x: np.ndarray) -> int:
    """Write x as an MXFP8 tensor at base; returns its SCALE_OFFSET (the element count)."""
    elems, scales = mx_tensor(x)
    hbm = sim.view("hbm")
    hbm[base:base + elems.size] = elems
    hbm[base + elems.size:base + elems.size + scales.size] = scales
    return elems.size


def bf16_rows(rng, shape, scale=1.0) -> np.ndarray:
    return (rng.standard_normal(shape) * scale).astype(np.float32).astype(BF16)


# ---- (b) kernels ----------------------------------------------------------------------------------

VECTOR_ADD = """
    ; C[r] = A[r] + B[r] for 8 rows: A at 0, B at 512, C at 1024
    S_ADDI_INT gp1, gp0, 0
    S_ADDI_INT gp2, gp0, 512
    S_ADDI_INT gp3, gp0, 1024
    C_LOOP_START gp4, 8
    V_ADD_VV gp3, gp1, gp2
    S_ADDI_INT gp1, gp1, 64
    S_ADDI_INT gp2, gp2, 64
    S_ADDI_INT gp3, gp3, 64
    C_LOOP_END gp4
"""


def test_kernel_vector_add():
    rng = np.random.default_rng(1)
    a, b = bf16_rows(rng, 512), bf16_rows(rng, 512)
    sim = machine(VECTOR_ADD)
    v = sim.view("vsram")
    v[0:512], v[512:1024] = a, b
    result = run(sim)
    want = (a.astype(np.float32) + b.astype(np.float32)).astype(BF16)
    np.testing.assert_array_equal(v[1024:1536].view(np.uint16), want.view(np.uint16))
    # 3 + 1 + 8 x 5 instructions, one cycle each on the serialised pipeline
    assert result.instret == 44 and result.cycles == 44


def test_kernel_masked_vector_ops():
    # V_MASK = 0b1010: segments 1 and 3 (lanes 16..31 and 48..63) take part
    sim = machine("S_ADDI_INT gp1, gp0, 10\nC_SET_V_MASK_REG gp1\nS_ADDI_INT gp2, gp0, 64\n"
                  "V_MUL_VV gp0, gp0, gp2, 1\nV_RED_SUM f1, gp0, 1")
    v = sim.view("vsram")
    v[0:64] = np.arange(64, dtype=np.float32).astype(BF16)
    v[64:128] = BF16(2.0)
    run(sim)
    lanes = np.arange(64)
    on = (lanes // HLEN) % 2 == 1
    want = np.where(on, 2.0 * lanes, lanes)
    np.testing.assert_array_equal(v[0:64].astype(np.float64), want)
    assert float(sim.view("f")[1]) == float(BF16(want[on].sum()))


MATMUL = """
    ; C[8 x 64] = A[8 x 128] x W[128 x 64]
    ; A: vsram, [K/64 chunks, 8 rows, 64] (chunk 1 at 512); W: MXFP8 in HBM at a0; C: vsram 2048
    S_LUI_INT gp1, 2              ; 8192 = SCALE_OFFSET of W
    C_SET_SCALE_REG gp1
    H_PREFETCH_M gp0, gp0, a0, 0, 0   ; W rows 0..63 -> tile 0
    S_LUI_INT gp2, 1              ; 4096
    H_PREFETCH_M gp2, gp2, a0, 0, 0   ; W rows 64..127 (element 4096) -> tile 1 (msram 4096)
    S_ADDI_INT gp5, gp0, 0        ; activation row block
    S_ADDI_INT gp6, gp0, 2048     ; output row block
    C_LOOP_START gp10, 2
      S_ADDI_INT gp7, gp0, 0      ; column offset in tile 0
      S_ADDI_INT gp8, gp6, 0      ; output pointer
      C_LOOP_START gp11, 16
        M_MM 0, gp7, gp5          ; K chunk 0
        S_ADD_INT gp9, gp7, gp2   ; same columns in tile 1
        S_ADDI_INT gp12, gp5, 512
        M_MM 0, gp9, gp12         ; K chunk 1
        M_MM_WO gp8, gp0, 0
        S_ADDI_INT gp7, gp7, 4
        S_ADDI_INT gp8, gp8, 4
      C_LOOP_END gp11
      S_ADDI_INT gp5, gp5, 256    ; next BLEN rows
      S_ADDI_INT gp6, gp6, 256
    C_LOOP_END gp10
"""


def seq_dot_f32(a: np.ndarray, w: np.ndarray) -> np.ndarray:
    """(rows x K) @ (K x N) summed in float32 from k = 0 up, rounding after every add (fp32 accumulation)."""
    acc = np.zeros((a.shape[0], w.shape[1]), np.float32)
    for k in range(a.shape[1]):
        acc = acc + (a[:, k:k + 1].astype(np.float32) * w[k:k + 1, :].astype(np.float32))
    return acc


def test_kernel_matmul_tile():
    rng = np.random.default_rng(2)
    a = bf16_rows(rng, (8, 128))
    w_src = rng.standard_normal((128, 64)).astype(np.float32)
    sim = machine(MATMUL)
    base = 0x1000
    assert put_hbm(sim, base, w_src) == 8192
    sim.view("a")[0] = base                      # ABI: the first HBM tensor's base in a0
    v = sim.view("vsram")
    for c in range(2):                           # [K/VLEN, rows, VLEN] layout
        v[c * 512:(c + 1) * 512] = a[:, c * 64:(c + 1) * 64].ravel()
    result = run(sim)
    elems, scales = mx_tensor(w_src)
    w = mx_values(elems, scales).reshape(128, 64)
    # the tiles landed in matrix SRAM as bf16 (E4M3 x 2^k is exact in bf16)
    np.testing.assert_array_equal(sim.view("msram")[:8192].astype(np.float64), w.ravel())
    want = (seq_dot_f32(a[:, :64], w[:64]) + seq_dot_f32(a[:, 64:], w[64:])).astype(BF16)
    got = v[2048:2048 + 512].reshape(8, 64)
    np.testing.assert_array_equal(got.view(np.uint16), want.view(np.uint16))
    # sanity against float64: within bf16 rounding
    np.testing.assert_allclose(got.astype(np.float64), a.astype(np.float64) @ w, rtol=2e-2, atol=2e-2)
    assert not sim.view("m_accum").any()
    # 64 M_MM of MLEN cycles each, plus the wait for the second tile at least
    assert result.cycles >= 64 * 64 + 100 + 72


def test_kernel_prefetch_store_round_trip():
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((8, 64)) * np.exp2(rng.integers(-6, 6, (8, 1)))).astype(np.float32)
    sim = machine("""
        S_ADDI_INT gp1, gp0, 512      ; SCALE_OFFSET: 8 x 64 elements (input and output alike)
        C_SET_SCALE_REG gp1
        H_PREFETCH_V gp0, gp0, a0, 0, 0     ; rows 0..3 -> V[0]
        S_ADDI_INT gp2, gp0, 256
        H_PREFETCH_V gp2, gp2, a0, 0, 0     ; rows 4..7 (element 256) -> V[256]
        H_STORE_V gp0, gp0, a1, 0, 0
        H_STORE_V gp2, gp2, a1, 0, 0
    """)
    assert put_hbm(sim, 0, x) == 512
    sim.view("a")[0], sim.view("a")[1] = 0, 0x10000
    run(sim)
    elems, scales = mx_tensor(x)
    np.testing.assert_array_equal(sim.view("vsram")[:512].astype(np.float64), mx_values(elems, scales))
    hbm = sim.view("hbm")
    np.testing.assert_array_equal(hbm[0x10000:0x10000 + 576], hbm[0:576])


def test_kernel_strided_prefetch_and_store_encodes_mx():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((4, 128)).astype(np.float32)
    y = bf16_rows(rng, (4, 64), scale=30.0)
    sim = machine("""
        S_ADDI_INT gp1, gp0, 512
        C_SET_SCALE_REG gp1             ; x: 4 x 128
        S_ADDI_INT gp2, gp0, 128
        C_SET_STRIDE_REG gp2
        S_ADDI_INT gp3, gp0, 64         ; columns 64..127
        H_PREFETCH_V gp0, gp3, a0, 1, 0 ; rows 128 apart -> V[0]
        S_ADDI_INT gp4, gp0, 256
        C_SET_SCALE_REG gp4             ; y: 4 x 64
        S_ADDI_INT gp5, gp0, 512
        H_STORE_V gp5, gp0, a1, 0, 0    ; V[512..768) -> y
    """)
    put_hbm(sim, 0, x)
    sim.view("a")[1] = 4096
    sim.view("vsram")[512:768] = y.ravel()
    run(sim)
    elems, scales = mx_tensor(x)
    np.testing.assert_array_equal(sim.view("vsram")[:256].astype(np.float64),
                                  mx_values(elems, scales).reshape(4, 128)[:, 64:].ravel())
    # the store's bytes equal the emulator's encoding of the bf16 rows...
    y_elems, y_scales = mx_tensor(y.astype(np.float32))
    hbm = sim.view("hbm")
    np.testing.assert_array_equal(hbm[4096:4096 + 256], y_elems)
    np.testing.assert_array_equal(hbm[4096 + 256:4096 + 288], y_scales)
    # ...whose scale is 2^floor(log2 amax) and which decode to within E4M3's rounding (1/16, the
    # top of the range clamping at 1.875 x scale), or steps of 2^-10 x scale below 2^-6 x scale
    back = mx_values(hbm[4096:4096 + 256], hbm[4096 + 256:4096 + 288])
    yf = y.astype(np.float64).ravel()
    scale = np.exp2(np.repeat(hbm[4096 + 256:4096 + 288].astype(np.float64), 8) - 127)
    amax = np.abs(yf).reshape(-1, 8).max(axis=1).repeat(8)
    assert ((amax >= scale) & (amax < 2 * scale)).all()
    err = np.abs(back - yf)
    assert (err <= np.maximum(np.abs(yf) / 16, 2.0 ** -6 * scale)).all()


SOFTMAX = """
    ; softmax of 4 rows in place: x = exp(x - max) / sum(exp(x - max))
    S_LD_FP f7, gp0, 2              ; -inf, preloaded
    S_ADDI_INT gp1, gp0, 0
    C_LOOP_START gp2, 4
      S_ADD_FP f1, f7, f0           ; f1 = -inf
      V_RED_MAX f1, gp1, 0
      V_SUB_VF gp1, gp1, f1
      V_EXP_V gp1, gp1
      S_ADD_FP f2, f0, f0
      V_RED_SUM f2, gp1
      S_RECI_FP f2, f2
      V_MUL_VF gp1, gp1, f2
      S_ADDI_INT gp1, gp1, 64
    C_LOOP_END gp2
"""


def test_kernel_softmax_exp_and_reductions():
    rng = np.random.default_rng(5)
    x = bf16_rows(rng, (4, 64), scale=3.0)
    sim = machine(SOFTMAX)
    sim.view("fpsram")[0:3] = np.array([0.0, 1.0, -np.inf], np.float32).astype(BF16)
    sim.view("vsram")[:256] = x.ravel()
    result = run(sim)
    got = sim.view("vsram")[:256].reshape(4, 64).astype(np.float64)
    # numpy, rounding to bf16 after every step as the machine does
    b = lambda t: np.asarray(t, np.float32).astype(BF16).astype(np.float64)  # noqa: E731
    xf = x.astype(np.float64)
    m = xf.max(axis=1, keepdims=True)
    e = b(np.exp(b(xf - m)))
    s = b(e.astype(np.float32).sum(axis=1, dtype=np.float32, keepdims=True))
    want = b(e * b(1.0 / s))
    np.testing.assert_allclose(got, want, rtol=1e-2, atol=1e-4)
    np.testing.assert_allclose(got.sum(axis=1), 1.0, rtol=3e-2)
    exact = np.exp(xf - m) / np.exp(xf - m).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(got, exact, rtol=3e-2, atol=1e-3)
    # timing: 3 + 4 x (1 + 4 + 1 + 1 + 1 + 8 + 1 + 1 + 1 + 1) = 83 cycles, 1 per instruction except
    # V_RED_MAX (4) and V_RED_SUM (8)
    assert result.instret == 3 + 4 * 10
    assert result.cycles == 83


def test_kernel_gemv_and_scalar_path():
    # y = x W for one 64-vector (M_MV / M_MV_WO, BLEN outputs each: 16 column blocks), then
    # f = sqrt(sum(y*y)) via the scalar unit
    rng = np.random.default_rng(6)
    x = bf16_rows(rng, 64)
    w = bf16_rows(rng, (64, 64), scale=0.125)
    sim = machine("""
        S_ADDI_INT gp1, gp0, 64     ; y -> V[64]
        S_ADDI_INT gp2, gp0, 0      ; column block of W at M[0]
        C_LOOP_START gp3, 16
        M_MV 0, gp2, gp0            ; x at V[0]
        M_MV_WO gp1, 0
        S_ADDI_INT gp1, gp1, 4
        S_ADDI_INT gp2, gp2, 4
        C_LOOP_END gp3
        S_ADDI_INT gp1, gp0, 64
        V_MUL_VV gp1, gp1, gp1
        S_ADD_FP f1, f0, f0
        V_RED_SUM f1, gp1
        S_SQRT_FP f2, f1
        S_ST_FP f2, gp0, 5
    """)
    sim.view("vsram")[:64] = x
    sim.view("msram")[:4096] = w.ravel()
    run(sim)
    y = seq_dot_f32(x.reshape(1, 64), w).astype(BF16).ravel()
    assert not sim.view("v_accum").any()
    yy = (y.astype(np.float32) * y.astype(np.float32)).astype(BF16)
    np.testing.assert_array_equal(sim.view("vsram")[64:128].view(np.uint16), yy.view(np.uint16))
    want = np.sqrt(yy.astype(np.float64).sum())
    assert float(sim.view("fpsram")[5]) == pytest.approx(want, rel=1e-2)


def test_kernel_batched_attention_scores():
    # per-head Q K^T for 4 query heads sharing one KV head (K columns 16..31), scaled by BMM_SCALE,
    # written out head by head; then one decode step (M_BTMV) on query row 5
    rng = np.random.default_rng(7)
    q = bf16_rows(rng, (64, 64))
    k = bf16_rows(rng, (64, 64))
    sim = machine("""
        S_ADDI_INT gp1, gp0, 16       ; the KV head's first column in the K tile
        M_BTMM 0, gp1, gp0            ; Q at V[0], K tile at M[0]
        S_LUI_INT gp2, 1              ; scores at V[4096]: [head, row, MLEN]
        M_BMM_WO gp2, 0
        S_ADDI_INT gp3, gp0, 320      ; query row 5
        M_BTMV gp0, gp1, gp3
        S_ADDI_INT gp4, gp0, 256
        M_BMV_WO gp4, 0               ; 4 rows at V[256]
    """)
    sim.view("vsram")[:4096] = q.ravel()
    sim.view("msram")[:4096] = k.ravel()
    sim.view("BMM_SCALE")[...] = 0.25
    run(sim)
    kh = k[:, 16:32]
    scores = sim.view("vsram")[4096:4096 + 4 * 64 * 64].reshape(4, 64, 64)
    for h in range(4):
        want = (np.float32(0.25) * seq_dot_f32(q[:, 16 * h:16 * h + 16], kh.T)).astype(BF16)
        np.testing.assert_array_equal(scores[h].view(np.uint16), want.view(np.uint16))
    dec = sim.view("vsram")[256:512].reshape(4, 64)
    for h in range(4):
        want = seq_dot_f32(q[5:6, 16 * h:16 * h + 16], kh.T).astype(BF16).ravel()
        np.testing.assert_array_equal(dec[h].view(np.uint16), want.view(np.uint16))
    assert not sim.view("hm_accum").any() and not sim.view("hv_accum").any()


@pytest.mark.parametrize("code, message", [
    ("S_ADDI_INT gp1, gp0, 1\nV_ADD_VV gp1, gp0, gp0", "V_ADD_VV: vector SRAM addresses must be multiples of VLEN"),
    ("S_ADDI_INT gp1, gp0, 2\nM_MM 0, gp1, gp0", "M_MM: the matrix address must be a tile base plus a column offset"),
    ("S_ADDI_INT gp1, gp0, 64\nM_MM 0, gp1, gp0", "M_MM: the matrix address must be a tile base plus a column offset"),
    ("S_ADDI_INT gp1, gp0, 64\nH_PREFETCH_M gp1, gp0, a0, 0, 0", "H_PREFETCH_M: the matrix SRAM destination must be a multiple of MLEN*MLEN"),
    ("S_ADDI_INT gp1, gp0, 2\nM_MM_WO gp1, gp0, 0", "M_MM_WO: the column offset of the destination must be a multiple of BLEN"),
    ("M_BMM 1, gp0, gp0", "M_BMM: the first operand (rd) must be 0"),
    ("S_ADDI_INT gp1, gp0, 4\nH_STORE_V gp0, gp1, a0, 0, 0", "H_STORE_V: the HBM offset and the row stride must be multiples of MX_BLOCK"),
    ("S_LUI_INT gp1, 4096\nH_PREFETCH_V gp0, gp1, a0, 0, 0", "H_PREFETCH_V: the rows or their scales lie past the end of the modelled HBM"),
    ("C_LOOP_START gp0, 2\nC_LOOP_END gp0", "C_LOOP_START: the loop counter cannot be gp0"),
])
def test_alignment_rules_trap(code, message):
    sim = machine(code)
    result = sim.run(100)
    assert result.status == "trap"
    assert message in str(result.trap)


# ---- (c) every example on both simulators ----------------------------------------------------------

CASES = [c.id for c in examples(spec())]


@pytest.mark.parametrize("machine_kind", ["c", "ref"])
@pytest.mark.parametrize("case_id", CASES)
def test_example(case_id, machine_kind):
    case = next(c for c in examples(spec()) if c.id == case_id)
    result = run_example(spec(), case, Simulator if machine_kind == "c" else RefMachine)
    assert result.ok, result.message()
    assert result.status == "halted"


def test_every_instruction_has_doc_and_an_example():
    for insn in spec().isa.instructions:
        assert insn.doc.strip(), insn.name
        assert insn.examples, insn.name
        assert any(ex.expect for ex in insn.examples), insn.name


# ---- (d) timing, by hand from the published latencies -----------------------------------------------
#
# One instruction issues per cycle; every instruction but the prefetches holds the core unit for its
# latency. A prefetch issues in one cycle; its data lands HBM_LATENCY (100) + ceil(bytes / 64) later:
# H_PREFETCH_V moves 4 x 64 x 9/8 = 288 bytes (5 cycles), H_PREFETCH_M 64 x 64 x 9/8 = 4608 (72).
# The run's cycle count is when the last result is ready.

@pytest.mark.parametrize("program, cycles", [
    ("M_MM 0, gp0, gp0", 64),                                       # M_MM costs MLEN
    ("M_MM 0, gp0, gp0\nM_MM_WO gp1, gp0, 0", 65),                  # write-out 1 after it
    ("M_MM 0, gp0, gp0\nS_ADDI_INT gp1, gp0, 1", 65),               # compute is serialised
    ("S_ADDI_INT gp1, gp0, 1\nS_ADDI_INT gp1, gp1, 1\nS_ADDI_INT gp2, gp0, 1", 3),
    ("V_ADD_VV gp0, gp0, gp0\nV_RECI_V gp0, gp0", 3),               # 1 + 2
    ("V_RED_SUM f1, gp0\nV_RED_MAX f1, gp0", 12),                   # 8 + 4
    ("S_MAP_V_FP gp0, gp0, 0", 64),                                 # VLEN
    ("M_MV 0, gp0, gp0\nM_BMV gp0, gp0, gp0", 65),                  # MLEN + 1
    # the prefetch returns at once; the dependent add waits for the data: 105, then 1
    ("H_PREFETCH_V gp0, gp0, a0, 0, 0\nV_ADD_VV gp1, gp0, gp0", 106),
    # an add on another block does not wait: it issues at 2; the run ends when the DMA lands
    ("H_PREFETCH_V gp0, gp0, a0, 0, 0\nS_ADDI_INT gp1, gp0, 256\nV_ADD_VV gp1, gp1, gp1", 105),
    # the engine transfers one prefetch at a time: the second issues at 5 and lands at 110
    ("H_PREFETCH_V gp0, gp0, a0, 0, 0\nH_PREFETCH_V gp1, gp0, a0, 0, 0", 110),
    # a prefetch after a long op issues at 1 (the dma unit is free), lands at 106; the add waits for it
    ("M_MM 0, gp0, gp0\nH_PREFETCH_V gp0, gp0, a0, 0, 0\nV_ADD_VV gp0, gp0, gp0", 107),
    # a tile lands at 172; M_MM waits for it and takes MLEN
    ("H_PREFETCH_M gp0, gp0, a0, 0, 0\nM_MM 0, gp0, gp0", 236),
    # independent work overlaps the tile's transfer: 64 cycles of M_MM from cycle 1, on vector data only
    ("H_PREFETCH_M gp0, gp0, a0, 0, 0\nV_EXP_V gp0, gp0\nS_ADDI_INT gp1, gp0, 4096\nM_MM 0, gp1, gp0", 172),
    # the store is synchronous: 100 + 5 on the pipeline
    ("H_STORE_V gp0, gp0, a0, 0, 0\nS_ADDI_INT gp1, gp0, 1", 106),
    # prefetch then store of the same rows: the store waits for the data (105), then takes 105
    ("H_PREFETCH_V gp0, gp0, a0, 0, 0\nH_STORE_V gp0, gp0, a0, 0, 0", 210),
    # a 3-iteration loop: 1 + 3 x (1 + 1) = 7 instructions of 1 cycle
    ("C_LOOP_START gp1, 3\nS_ADDI_INT gp2, gp2, 1\nC_LOOP_END gp1", 7),
])
def test_cycles(program, cycles):
    sim = machine(program)
    result = run(sim)
    assert result.cycles == cycles


def test_double_buffering_hides_the_prefetch():
    # prefetch the next tile while computing on the current one: the second tile's M_MM does not wait
    serial = "H_PREFETCH_M gp0, gp0, a0, 0, 0\nM_MM 0, gp0, gp0\nS_LUI_INT gp1, 1\n" \
             "H_PREFETCH_M gp1, gp1, a0, 0, 0\nM_MM 0, gp1, gp0"
    overlapped = "H_PREFETCH_M gp0, gp0, a0, 0, 0\nS_LUI_INT gp1, 1\nH_PREFETCH_M gp1, gp1, a0, 0, 0\n" \
                 "M_MM 0, gp0, gp0\nM_MM 0, gp1, gp0"
    # serial: tile 0 lands 172, M_MM 172..236, S_LUI 236, prefetch 237 lands 409, M_MM 409..473
    assert run(machine(serial)).cycles == 473
    # overlapped: prefetch 0 (engine busy to 72), S_LUI 1, prefetch 72 (lands 244), M_MM 172..236,
    # second M_MM waits for 244 and ends at 308
    assert run(machine(overlapped)).cycles == 308


def test_docs_are_complete(tmp_path):
    import kcgen.docs
    md = kcgen.docs.render_markdown(spec())
    for insn in spec().isa.instructions:
        assert f"insn-{insn.name}" in md
    for heading in ("Kernel ABI", "Timing model", "Deviation: HBM timing", "Deviation: choices"):
        assert heading in md


def test_prefetch_decodes_mx_bytes_as_the_emulator():
    # bytes as the Feb-2026 emulator's quantiser writes them, decoded by hand from its dtype.rs rules:
    # field 0 is m/8 * 2^-7 (IEEE would be 2^-6), field 15 Inf/NaN, 0x77 = 240; scale 0 reads as 0.0
    sim = machine("S_ADDI_INT gp1, gp0, 256\nC_SET_SCALE_REG gp1\nH_PREFETCH_V gp0, gp0, a0, 0, 0")
    hbm = sim.view("hbm")
    hbm[0:8] = [0x07, 0x01, 0x84, 0x08, 0x77, 0x78, 0xF8, 0x7E]
    hbm[8:10] = [0x38, 0x7F]
    hbm[256], hbm[257] = 127, 0                  # block 0 scale 1; block 1 scale byte 0
    run(sim)
    v = sim.view("vsram")[:10].astype(np.float64)
    assert list(v[:5]) == [7 / 8 * 2.0 ** -7, 2.0 ** -10, -(2.0 ** -8), 2.0 ** -6, 240.0]
    assert v[5] == np.inf and v[6] == -np.inf and np.isnan(v[7])   # 0x7e is NaN here, 448 in OCP E4M3FN
    assert v[8] == 0.0 and np.isnan(v[9])                           # 1.0 * 0.0; NaN * 0.0


def test_the_ocp_variant_is_a_change_of_the_format_declarations_only(tmp_path):
    # targets/plena.isa keeps OCP MX one edit away: the OCP formats without a rule; the simulator and the
    # task layout both follow the declaration. H_STORE_V of (2, -0.5, 0...) then gives OCP's scale
    # 2^(floor(log2 2) - 8) (byte 120) and 2 / 2^-7 = 256 = 0x78 in E4M3FN, where the emulator writes 128, 0x38.
    text = (ROOT / "targets" / "plena.isa").read_text()
    lines = [ln for ln in text.splitlines() if ln.strip().startswith(("float e4m3(", "float e8m0(", "mx mxfp8("))]
    assert len(lines) == 3
    ocp = text
    for old, new in zip(lines, ['  float e4m3(exp=4, man=3, finite) "OCP E4M3FN"',
                                '  float e8m0(exp=8, man=0, unsigned, finite) "OCP E8M0"',
                                '  mx mxfp8(elem=e4m3, scale=e8m0, block=8) "OCP MX"']):
        ocp = ocp.replace(old, new)
    path = tmp_path / "plena.isa"
    path.write_text(ocp)
    spec_ocp = isadl.load(path)
    sim = Simulator(spec_ocp)
    sim.load(Assembler(spec_ocp).assemble("S_ADDI_INT gp2, gp0, 256\nC_SET_SCALE_REG gp2\n"
                                          "H_STORE_V gp0, gp0, a0, 0, 0", "k.s"))
    sim.view("vsram")[0:2] = np.array([2.0, -0.5], np.float32).astype(BF16)
    run(sim)
    assert list(sim.view("hbm")[[256, 0, 1]]) == [120, 0x78, 0xE8]
    from kcgen.paths import TASKS, load_module
    L = load_module(TASKS / "layouts" / "plena.py")
    elems, scales = L.mx_encode(np.array([2.0, -0.5] + [0.0] * 6), spec_ocp)
    assert scales[0] == 120 and list(elems[:2]) == [0x78, 0xE8]
    elems, scales = L.mx_encode(np.array([2.0, -0.5] + [0.0] * 6))     # the shipped ISA: the emulator's rule
    assert scales[0] == 128 and list(elems[:2]) == [0x38, 0xA8]
