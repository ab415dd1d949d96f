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
    r"^vst\.([23]d\.)?srs\.d|^vups\.s\d+\.d|^(vmax_lt|vmin_ge)\.d": "the .d forms of vst.srs, vups, vmax_lt and vmin_ge (signedness from crsrssign, crupssign, crvaddsign) are not modelled; vsrs's are",
    r"^vups\.s\d+\.s\d+ cm\d, x": "vups of a 512-bit x register into cm is not modelled",
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
    assert total == len(published()) and len(equal) >= 277, len(equal)


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
