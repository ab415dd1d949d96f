"""GNU syntax completeness on coral and boom: each form of GNU as's RISC-V opcode table (binutils
opcodes/riscv-opc.c) and of the RISC-V assembly programmer's manual that applies to the target's
extensions, fed to GNU as and to our assembler, must give the same bytes.

The probe corpus is tests/asm/gnu_forms/: common.s (RV32I/RV64I aliases and macros, M, F, Zicsr,
Zifencei) and <target>.s (what only that target has: rv32 high counters, Zbb and Zve32x on coral,
RV64 and D on boom). Each probe is assembled alone, followed by a label `foo` in .text and a word
`dat` in .data (the targets of call, la, `lw a0, dat` ...), and GNU's object is linked at our
section addresses. The test prints "N of M forms equal" per target and requires all to be equal.

The negative corpus: forms GNU as refuses are refused by ours too (illegal fence sets, `li` of a
value wider than the target's registers, `lw a0, 8`).
"""
from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from kcgen.asm import AsmError
from kcgen.sim.pyref import RefMachine

from . import common

ROOT = Path(__file__).resolve().parents[2]
CORPUS = Path(__file__).resolve().parent / "gnu_forms"
TOOLS = {t: shutil.which(f"riscv64-unknown-elf-{t}") for t in ("as", "ld", "objcopy")}
TARGETS = {
    "coral": (["-march=rv32imf_zve32x_zicsr_zifencei_zbb", "-mabi=ilp32"], "elf32lriscv"),
    "boom": (["-march=rv64imfd_zicsr_zifencei", "-mabi=lp64d"], "elf64lriscv"),
}
TAIL = "\nfoo: nop\n.data\ndat: .word 0\n"


def probes(target: str) -> list[str]:
    lines = []
    for name in ("common.s", f"{target}.s"):
        for line in (CORPUS / name).read_text().splitlines():
            if line.strip() and not line.lstrip().startswith("#"):
                lines.append(line.strip())
    return lines


for _t in TARGETS:  # the shared helpers look ISAs up by name
    common.FIXTURES.setdefault(_t, ROOT / "targets" / f"{_t}.isa")
ours = common.assembler


def gnu_text(text: str, target: str, bases: dict[str, int], workdir: Path) -> bytes | str:
    """The .text bytes GNU as and ld give with every section at our address, or GNU's error."""
    flags, emulation = TARGETS[target]
    src, obj, elf, out, script = (workdir / n for n in ("g.s", "g.o", "g.elf", "g.bin", "g.ld"))
    src.write_text(text)
    p = subprocess.run([TOOLS["as"], *flags, "-mno-relax", "-mno-arch-attr", "-o", str(obj), str(src)],
                       capture_output=True, text=True, timeout=60)
    if p.returncode:
        return p.stderr.strip()
    script.write_text("SECTIONS {\n" + "".join(f"  {n} {a:#x} : {{ *({n}) }}\n" for n, a in bases.items())
                      + "  /DISCARD/ : { *(.comment) *(.note*) *(.riscv.attributes) }\n}\n")
    for cmd in ([TOOLS["ld"], "-m", emulation, "--no-relax", "-e", hex(bases[".text"]), "-T", str(script),
                 "-o", str(elf), str(obj)],
                [TOOLS["objcopy"], "-O", "binary", "-j", ".text", str(elf), str(out)]):
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        if p.returncode:
            return p.stderr.strip()
    return out.read_bytes()


def compare_probe(target: str, probe: str, workdir: Path) -> str | None:
    """None when GNU as and ours give the same bytes for the probe, else what differs."""
    text = probe + TAIL
    try:
        program = ours(target).assemble(text, "probe.s")
    except AsmError as exc:
        return f"ours refuses: {str(exc).splitlines()[0]}"
    bases = {n: s.base for n, s in program.sections.items() if s.data}
    want = gnu_text(text, target, bases, workdir)
    if isinstance(want, str):
        return f"GNU as refuses: {want.splitlines()[-1]}"
    got = bytes(program.sections[".text"].data)[:len(want)]
    if got != want:
        return f"ours {got.hex()} GNU {want.hex()}"
    return None


@pytest.mark.skipif(not all(TOOLS.values()), reason="GNU binutils for RISC-V missing: "
                    "apt-get install -y binutils-riscv64-unknown-elf")
@pytest.mark.parametrize("target", sorted(TARGETS))
def test_every_gnu_form_assembles_as_gnu_does(target, capsys):
    forms = probes(target)
    differ = {}
    with tempfile.TemporaryDirectory() as d:
        for probe in forms:
            why = compare_probe(target, probe, Path(d))
            if why is not None:
                differ[probe] = why
    with capsys.disabled():
        print(f"\n{target}: {len(forms) - len(differ)} of {len(forms)} forms equal to GNU as")
    assert not differ, "\n".join(f"{p!r}: {w}" for p, w in differ.items())


# Forms GNU as refuses (its message in the comment); ours must refuse them as well.
GNU_REFUSES = {
    "coral": [
        "fence ir",          # illegal operands: both sets or neither
        "fence rw",
        "fence 0, rw",       # a set is letters, not a number
        "fence ir, rx",
        "vsetvli a0, a1, e8, ta, m1",  # the order is sew, lmul, tail, mask
        "vmslt.vi v1, v2, 17",  # the immediate minus one must fit 5 signed bits
        "csrr a0, 4096",     # improper CSR address
        "csrr a0, -1",
        "csrr a0, nosuchcsr",
    ],
    "boom": [
        "fence ir",
        "fence rw",
        "fence 0, rw",
        "lla a0, 0x80000000",  # offset too large: a constant address must be a signed 32-bit number
        "la a0, -0x80000001",
        "li a0, 0x10000000000000000",
        "csrr a0, 4096",
    ],
}


@pytest.mark.skipif(not all(TOOLS.values()), reason="GNU binutils for RISC-V missing")
@pytest.mark.parametrize("target,probe", [(t, p) for t, ps in sorted(GNU_REFUSES.items()) for p in ps])
def test_forms_gnu_refuses_are_refused(target, probe, tmp_path):
    assert isinstance(gnu_text(probe + TAIL, target, {".text": 0, ".data": 0x1000}, tmp_path), str), \
        f"GNU as accepts {probe!r}: the negative corpus is wrong"
    with pytest.raises(AsmError):
        ours(target).assemble(probe + TAIL, "probe.s")


def test_csr_names_of_extensions_a_target_lacks_are_refused_with_the_numbers_allowed():
    """GNU as knows every CSR name of every extension on every target (`csrr a0, vlenb` assembles
    for rv64imfd); ours knows the names of the target's own extensions and takes any 12-bit number
    for the rest: the refusal says so."""
    with pytest.raises(AsmError, match=r"'vlenb' is not a valid csr \(one of: fflags.* or a number 0\.\.4095\)"):
        ours("boom").assemble("csrr a0, vlenb\n", "probe.s")
    assert ours("boom").assemble("csrr a0, 0xc22\n", "probe.s").image()[:4] == bytes.fromhex("732520c2")


@pytest.mark.parametrize("text,traps", [
    ("csrr a0, fcsr", False),
    ("csrr a0, 0x3", False),
    ("csrr a0, cycle", False),
    ("csrr a0, 0xc22", True),      # vlenb: no vector unit on boom
    ("csrr a0, cycleh", True),     # rv32 only
    ("csrrs a0, 0x7c0, zero", True),
    ("unimp", True),               # a write to the read-only cycle CSR, by definition
])
def test_boom_assembles_any_csr_and_traps_on_those_it_lacks(text, traps):
    """GNU as takes any 12-bit CSR number; the hardware raises an illegal-instruction exception for
    a CSR it does not implement, and so does the model, when the instruction executes."""
    m = RefMachine(common.spec("boom"))
    m.load(ours("boom").assemble(text + "\nebreak\n", "csr.s"))
    res = m.run(10)
    assert res.status == ("trap" if traps else "halted"), res
