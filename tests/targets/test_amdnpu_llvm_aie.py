"""amdnpu against every encoding llvm-aie publishes for AIE2 (issue 21, item 6).

tests/targets/data/llvm_aie_aie2_encodings.txt holds the CHECK lines of Xilinx/llvm-aie's
llvm/test/CodeGen/AIE/aie2/BinaryOutput/*.mir (the files and commits are named in it): what llvm-objdump prints
for bundles that llc and llvm-mc produce, bytes and Peano text. Every line is assembled here; a line we support
must give the published bytes and its bytes must disassemble to text that assembles back to them. A line we do
not support must belong to one of the families below, each with the reason it is left out (the deviations of
targets/amdnpu.isa), so a form that stops assembling, or a new published form, fails the test. The slot of each
form is checked too: every one-operation bundle of the file is a single-slot format, which the bytes name.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from kcgen.asm import AsmError
from kcgen.asm.disassembler import Disassembler
from tests.targets.test_amdnpu import encode, spec

FIXTURE = Path(__file__).parent / "data" / "llvm_aie_aie2_encodings.txt"

# Peano spellings this model writes differently: the vaddmac family names its destination once (deviation 11);
# a stack offset below -65536 is written as offset + 131072 (deviation 14: the same 12 bits).
SPELLING = [(re.compile(r"^(vaddmac|vaddmsc|vsubmac|vsubmsc) (cm\d+), \2, "), r"\1 \2, "),
            (re.compile(r"\[sp, #(-\d+)\]"), lambda m: f"[sp, #{int(m[1]) + 131072 if int(m[1]) < -65536 else m[1]}]")]

# Families of published forms this model leaves out, with the reason (a regex over Peano's text).
UNSUPPORTED = {
    r"^(clb|adc|sbc|divs) ": "scalar ops outside the subset: count leading bits, carry arithmetic (srcarry), division steps",
    r"\[p\d, dj\d\]": "indexed addressing by a dj register: the dimension registers dn/dj/dc are not modelled",
    r"^\S*\.[23]d[ .]|^\S+\.[23]d$": "2D/3D addressing (d0..d7 composites of m/dn/dj/dc) is not modelled",
    r"^(lda|st|mova|movxm|mov) (dj|dn|dc)\d|, (dj|dn|dc)\d$": "the dimension registers dn/dj/dc are not modelled",
    r"^(lda|st)\.tm ": "tile memory-map accesses (lda.tm/st.tm) reach the tile's configuration space, not modelled",
    r"\bsr(carry|ss0|ms0|srs_of|ups_of|compr_uf|sparse_of|fpflags|f2iflags|f2fflags)\b|\bcore_id\b": "the status registers (srcarry, srsrs_of, ...) and core_id are not modelled",
    r"\blr\b|^jl |^ret ": "calls (jl, ret, lr) are not in the subset: kernels are leaf functions",
    r"\bqx\d": "sparse MACs (qx operands: an x register and its 128-bit mask q) are not modelled",
    r"^vneg(mac|msc) |^vnegmul\.f ": "vnegmac, vnegmsc and vnegmul.f are not modelled (vnegmul is)",
    r"^vclr bm[lh]": "vclr of a 512-bit bf16 accumulator (VCLR_vclr_BF) is not modelled",
    r"^vsrsm\.": "vsrsm (shift-round-saturate with the mv-slot encoding) is not modelled",
    r"^(vmax_lt|vmin_ge)\.d": "the .d forms of vmax_lt and vmin_ge (signedness from crvaddsign) are not modelled",
    r"^vshift": "vshift / vshift.align are not modelled",
    r"^(vadd|vsub|vsel)\.32 |^vmax_lt\.s32|^vmin_ge\.s32": "the 32-bit-lane mv-slot forms overlap the scalar mov's fixed bits (deviation 10)",
    r"r17:r16|r19:r18": "the 8-bit-lane forms name a 64-bit mask register pair (deviation 10)",
    r"^vfloor\.": "vfloor (bf16 -> int32) is not modelled",
    r"^nop ; nopxm$": "the 64-bit NOP-slot bundle I64_NOP_LNG is not modelled (deviation 9)",
}


def published():
    """(file, Peano text, bytes) for every line of the fixture."""
    rows, current = [], None
    for line in FIXTURE.read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        if line.startswith("@"):
            current = line.split()[1]
            continue
        hexbytes, text = (part.strip() for part in line.split("|", 1))
        rows.append((current, text, bytes.fromhex(hexbytes.replace(" ", ""))))
    return rows


def ours(text: str) -> str:
    for pattern, replacement in SPELLING:
        text = pattern.sub(replacement, text)
    return text


def why_unsupported(text: str):
    return next((reason for pattern, reason in UNSUPPORTED.items() if re.search(pattern, text)), None)


def test_every_published_encoding(capsys):
    equal, different, unsupported, unexplained = [], [], [], []
    for file, text, want in published():
        try:
            got = encode(ours(text))
        except AsmError as e:
            unsupported.append(text)
            if why_unsupported(text) is None:
                unexplained.append(f"{file}: {text}: {str(e).splitlines()[0]}")
            continue
        (equal if got == want else different).append(f"{file}: {text}: {got.hex(' ')} != {want.hex(' ')}")
    total = len(equal) + len(different) + len(unsupported)
    with capsys.disabled():
        print(f"\nllvm-aie AIE2 encodings: {total} forms checked, {len(equal)} equal, {len(different)} different, "
              f"{len(unsupported)} unsupported")
        for reason in sorted(set(filter(None, map(why_unsupported, unsupported)))):
            n = sum(why_unsupported(t) == reason for t in unsupported)
            print(f"  unsupported x{n}: {reason}")
    assert not different, "\n".join(different)
    assert not unexplained, "published forms that fail to assemble for no documented reason:\n" + "\n".join(unexplained)
    assert total == len(published()) and len(equal) >= 297, len(equal)


@pytest.mark.parametrize("file,text,want", [r for r in published() if why_unsupported(r[1]) is None],
                         ids=lambda v: v if isinstance(v, str) else None)
def test_published_bytes_disassemble_to_text_that_reassembles(file, text, want):
    d = Disassembler(spec())
    decoded = d.decode(want)
    assert len(decoded) == 1 and decoded[0].ok, text
    back = d.source(want, 0).strip().splitlines()[-1].strip()
    assert encode(back) == want, (text, back)


def test_supported_lines_are_not_listed_as_unsupported():
    """An UNSUPPORTED family must not swallow a line that assembles to the published bytes (a stale reason)."""
    stale = []
    for _, text, want in published():
        if why_unsupported(text) is None:
            continue
        try:
            if encode(ours(text)) == want:
                stale.append(text)
        except AsmError:
            pass
    assert not stale, stale


# The mv-slot move is one instruction on AIE2 (MOV_mv_scl): destination code in bits 21:15, source code in 14:8,
# then 0xb2. The 7-bit register codes, read off mv_scl.mir's bytes: r_n = n<<2, p_n = n<<4|3, m_n = n<<2|2,
# s_n = n<<5|0b01011, control register k = k<<3|1, lc = 0b1010111, sp = 0b1100111.
MV_CODES = {"r": lambda n: n << 2, "p": lambda n: n << 4 | 0b0011, "m": lambda n: n << 2 | 0b10,
            "s": lambda n: n << 5 | 0b01011, "cr": lambda n: n << 3 | 1}
MV_SPECIAL = {"lc": 0b1010111, "sp": 0b1100111}


def mv_operands(template: str):
    """[(class or special name, count)] of the two operands of a `mov` syntax template."""
    sizes = {"r": 32, "p": 8, "m": 8, "s": 4, "cr": 12}
    out = []
    for part in template.split(" ", 1)[1].split(", "):
        m = re.fullmatch(r"\{\w+:(\w+)\}", part)
        out.append((m[1], sizes[m[1]]) if m else (part, 1))
    return out


def test_every_mv_slot_move_follows_the_published_register_codes():
    """All of this model's mv-slot moves, including the register pairs no published line shows, use AIE2's layout."""
    checked = 0
    for name, s in spec().instructions.items():
        template = s.insn.syntax
        if not template.startswith("mov ") or s.insn.slot != "mv":
            continue
        (dst, ndst), (src, nsrc) = mv_operands(template)
        for a in range(ndst):
            for b in range(nsrc):
                text = "mov " + ", ".join(k if k in MV_SPECIAL else f"{k}{i}" for k, i in ((dst, a), (src, b)))
                word = int.from_bytes(encode(text), "little")
                code = lambda k, i: MV_SPECIAL[k] if k in MV_SPECIAL else MV_CODES[k](i)
                assert (word >> 5) & 0x3fffff == code(dst, a) << 15 | code(src, b) << 8 | 0xb2, (name, text)
                checked += 1
    assert checked > 1500, checked


# Forms of this model that no published line shows, each with what checks it instead.
UNPUBLISHED = {
    "JNZD": "no BinaryOutput line; its fields are those of AIE2GenInstrFormats.td's alu-slot jnzd [not re-read here]",
    "LDA_R_I": "lda of an r register: the register code is the one of st r17 and lda.s8 r0 (published)",
    "LDA_R_M": "as LDA_R_I", "LDA_R_P": "as LDA_R_I",
    "MOVXM_M": "movxm of an m register: the lng-slot code of m is the mv-slot one (MV_CODES)",
}


def test_forms_without_a_published_encoding_are_known():
    """Every form is either decoded from a published line, a register variant of one that is (wl/wh, bml/bmh,
    the other registers of a file), a mv-slot move checked above, or listed in UNPUBLISHED."""
    d = Disassembler(spec())
    hit = set()
    for _, _, data in published():
        decoded = d.decode(data)
        if len(decoded) == 1 and decoded[0].ok:
            hit.update(name for name, _ in decoded[0].ops)
    def family(name):  # a form's name without the register classes it differs in
        return re.sub(r"_(WL|WH|BML|BMH|CM|X)(?=_|$)", "", name)
    hit_families = {family(n) for n in hit}
    missing = [n for n in spec().instructions if n not in hit and family(n) not in hit_families
               and not n.startswith("MOV_") and n not in UNPUBLISHED]
    assert not missing, missing
