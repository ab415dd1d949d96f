"""The co-design case on coral (issue 18 item 6): tasks/codesign/coral/gemm adds VOPACC4_VX, a
depth-4 int8 outer-product accumulate in the custom-0 major opcode (0x0B), to RV32IMF + Zbb +
Zve32x. The overlay is accepted by kcgen.codesign.propose and builds; its examples pass on both
simulators; its words round-trip through the overlay's assembler and disassembler and match GNU
as's `.insn r`; the base instructions assemble to the same words as on the base (and as GNU as
assembles them); the rewritten reference kernel is correct at every configuration on default
evaluation settings and faster than the base reference kernel; the README states the cycles."""
from __future__ import annotations

import re
import shutil
import subprocess

import pytest

import isadl
from kcgen import codesign, kernels, taskspec
from kcgen.asm.assembler import Assembler
from kcgen.asm.disassembler import Disassembler
from kcgen.evaluation import evaluate, layout_for
from kcgen.paths import REPO, TASKS, load_module

CASE = TASKS / "codesign" / "coral" / "gemm"
CORAL = REPO / "targets" / "coral.isa"
NAME = "VOPACC4_VX"
BASE_REF = TASKS / "kernels" / "reference" / "coral" / "gemm.s"
GNU = {t: shutil.which(f"riscv64-unknown-elf-{t}") for t in ("as", "objcopy")}
MARCH = ["-march=rv32imf_zve32x_zicsr_zifencei_zbb", "-mabi=ilp32", "-mno-relax", "-mno-arch-attr"]


def word(funct7, rs2, rs1, funct3, rd, opcode=0x0B):
    return funct7 << 25 | rs2 << 20 | rs1 << 15 | funct3 << 12 | rd << 7 | opcode


@pytest.fixture(scope="module")
def base():
    return isadl.load(CORAL)


@pytest.fixture(scope="module")
def verdict(tmp_path_factory):
    work = tmp_path_factory.mktemp("coral_codesign") / "isa"
    v = codesign.propose(CORAL, (CASE / "extension.isa").read_text(), work, tag="gemm")
    assert v.accepted, v.message()
    return v


@pytest.fixture(scope="module")
def extended(verdict):
    return isadl.load(verdict.overlay)


@pytest.fixture(scope="module")
def task():
    return taskspec.find("gemm")


@pytest.fixture(scope="module")
def base_cycles(base, task):
    out = {}
    for config in taskspec.CONFIGS:
        lay = layout_for(base, task, "coral", config)
        k = kernels.find("reference", base, task, "coral", config, lay)
        assert k is not None and k.origin.resolve() == BASE_REF.resolve()
        out[config] = evaluate(k.text, base, task, "coral", config, layout=lay, path=str(k.origin))
    return out


# ---- the proposal ------------------------------------------------------------------------------------
def test_the_proposal_is_an_overlay_of_coral(verdict, extended, base):
    text = (CASE / "extension.isa").read_text()
    assert not re.search(r"^\s*isa\b", text, re.M) and "override" not in text
    assert verdict.name == "coral_gemm" and verdict.mnemonics == [NAME]
    assert verdict.overlay.parent.name == "isa" and verdict.overlay.exists()
    assert NAME in extended.instructions and NAME not in base.instructions
    assert set(base.instructions) < set(extended.instructions)
    assert len(extended.instructions) == len(base.instructions) + 1


def test_the_cost_is_honest(verdict, extended):
    insn = extended.instructions[NAME].insn
    cycles = int(extended.params_eval(insn.cycles))
    vlen = extended.params["VLEN"]
    # one cycle per 128-bit group of the int32 destination at its largest (VLMAX = VLEN/4 at e8 m2)
    assert cycles == (vlen // 4) * 32 // vlen == 8
    assert cycles >= verdict.floors[NAME]
    # 16 int8 multiplies a cycle: what the base multiplier does for vmacc.vx at SEW = 8
    assert 4 * (vlen // 4) / cycles == vlen // 8
    # same unit as the base multiplies, latency at least the base's multiply-add's
    assert extended.instructions[NAME].insn.unit == extended.instructions["VMACC_VX"].insn.unit


def test_the_simulator_charges_the_validators_cycles(verdict, extended):
    """A second, independent vopacc4.vx issues when the first frees the multiplier: the two-instruction
    program takes exactly the validator's `cycles` more than the one-instruction program (the run
    ends when the last result is written, `latency` after its issue)."""
    from kcgen.sim.simulator import Simulator
    from kcgen.target import build_target
    setup = "li t0, 32\nvsetvli zero, t0, e8, m2, ta, ma\n"
    cycles = []
    for body in ("vopacc4.vx v0, a1, v16\n", "vopacc4.vx v0, a1, v16\nvopacc4.vx v8, a1, v16\n"):
        sim = Simulator(extended, build_target(extended).built)
        sim.load(Assembler(extended).assemble(setup + body, "two"))
        run = sim.run(10)
        assert run.status == "halted"
        cycles.append(run.cycles)
    assert cycles[1] - cycles[0] == verdict.cycles[NAME] == 8


@pytest.mark.parametrize("machine", ["ref", "c"])
def test_the_examples_pass(extended, machine):
    from kcgen.sim.examples import examples, run_example
    from kcgen.sim.pyref import RefMachine
    from kcgen.sim.simulator import Simulator
    cases = [c for c in examples(extended) if c.name == NAME]
    assert len(cases) >= 2
    for case in cases:
        result = run_example(extended, case, RefMachine if machine == "ref" else Simulator)
        assert result.ok, result.message()


# ---- encodings: custom-0, sharing the 32-bit space with the base ------------------------------------------
def test_encodings_round_trip(extended):
    asm, dis = Assembler(extended), Disassembler(extended)
    lines, expect = [], []
    for vd, rs1, vs2 in [(0, 8, 16), (8, 9, 24), (8, 10, 4), (24, 31, 0), (16, 0, 8), (0, 1, 28)]:
        lines.append(f"vopacc4.vx v{vd}, x{rs1}, v{vs2}")
        expect.append((vd, rs1, vs2))
    program = asm.assemble("\n".join(lines) + "\n", "rt.s")
    data = bytes(program.text.data)
    decoded = dis.decode(data, program.text.base)
    assert len(decoded) == len(lines)
    for d, (vd, rs1, vs2) in zip(decoded, expect):
        assert d.word == word(0, vs2, rs1, 0, vd)
        assert d.ops[0][0] == NAME
        assert dict(d.ops[0][1]) == {"vd": vd, "rs1": rs1, "vs2": vs2}
    again = asm.assemble(dis.source(data, program.text.base), "again.s")
    assert bytes(again.text.data) == data


def test_the_base_decodes_nothing_in_custom_0(base, extended):
    """No base instruction decodes a word whose major opcode is 0x0B; the base disassembler leaves
    vopacc4.vx undecoded, the overlay's decodes it."""
    w = word(0, 16, 8, 0, 0).to_bytes(4, "little")
    assert not Disassembler(base).decode(w, 0)[0].ok
    assert Disassembler(extended).decode(w, 0)[0].ops[0][0] == NAME
    for other in (word(1, 16, 8, 0, 0), word(0, 16, 8, 1, 0)):   # other funct7/funct3: still free
        assert not Disassembler(extended).decode(other.to_bytes(4, "little"), 0)[0].ok


def test_base_instructions_keep_their_words(base, extended):
    """The shipped reference gemm kernel (scalar, Zbb, CSR and vector instructions) assembles to the
    same bytes on the base and on the overlay."""
    extra = ("mul a5, a0, a1\nflw ft0, 0(a0)\nfmadd.s ft2, ft0, ft1, ft2\nvle32.v v1, (a1)\n"
             "vredsum.vs v4, v1, v0\nvmacc.vx v8, a0, v16\nvwmacc.vx v0, a1, v8\nmax a0, a1, a2\ncsrr t2, vlenb\n")
    for text, least in ((BASE_REF.read_text(), 100), (extra, 9)):
        a = Assembler(base).assemble(text, "gemm.s")
        b = Assembler(extended).assemble(text, "gemm.s")
        assert bytes(a.text.data) == bytes(b.text.data) and len(a.text.data) >= 4 * least
    words = Assembler(extended).assemble(extra, "x.s").text.data
    assert words[:4] == bytes.fromhex("02b507b3")[::-1]        # GNU as 2.40 (riscv-encodings.md)


def gnu_text(tmp_path, source: str) -> bytes:
    src = tmp_path / "k.s"
    src.write_text(source)
    subprocess.run([GNU["as"], *MARCH, "-o", str(tmp_path / "k.o"), str(src)], check=True,
                   capture_output=True, text=True, timeout=60)
    subprocess.run([GNU["objcopy"], "-O", "binary", "-j", ".text", str(tmp_path / "k.o"), str(tmp_path / "k.bin")],
                   check=True, capture_output=True, text=True, timeout=60)
    return (tmp_path / "k.bin").read_bytes()


@pytest.mark.skipif(not all(GNU.values()), reason="GNU riscv64-unknown-elf binutils not installed")
def test_gnu_as_agrees(tmp_path, extended, task):
    """GNU as assembles the extended kernel, with each vopacc4.vx written as `.insn r 0x0b, 0, 0,
    vd, rs1, vs2` (register numbers), to the same bytes as the overlay's assembler."""
    gen = load_module(CASE / "kernel.py")
    lay = layout_for(extended, task, "coral", "C2")
    text = gen.generate(task, task.config("coral", "C2"), lay, extended)
    xnum = {n: i for i, n in enumerate("zero ra sp gp tp t0 t1 t2 s0 s1 a0 a1 a2 a3 a4 a5 a6 a7 "
                                       "s2 s3 s4 s5 s6 s7 s8 s9 s10 s11 t3 t4 t5 t6".split())}

    def insn(m):
        vd, rs1, vs2 = int(m.group(1)), xnum[m.group(2)], int(m.group(3))
        return f".insn r 0x0b, 0, 0, x{vd}, x{rs1}, x{vs2}"
    gnu_src, n = re.subn(r"vopacc4\.vx v(\d+), (\w+), v(\d+)", insn, text)
    assert n >= 6
    ours = bytes(Assembler(extended).assemble(text, "gemm_ext.s").text.data)
    assert gnu_text(tmp_path, gnu_src) == ours
    assert gnu_text(tmp_path, BASE_REF.read_text()) == bytes(Assembler(extended).assemble(BASE_REF.read_text(), "g.s").text.data)


# ---- the rewritten kernel --------------------------------------------------------------------------------
def test_base_reference_is_correct(base_cycles):
    bad = [f"{c}: {r.summary()[:300]}" for c, r in base_cycles.items() if not r.correct]
    assert not bad, "\n".join(bad)


def test_extended_kernel_is_correct_and_faster(extended, task, base_cycles):
    gen = load_module(CASE / "kernel.py")
    problems = []
    for config in taskspec.CONFIGS:
        lay = layout_for(extended, task, "coral", config)
        text = gen.generate(task, task.config("coral", config), lay, extended)
        code = "\n".join(ln.split("#")[0] for ln in text.splitlines())
        assert "vopacc4.vx" in code and "vwmul.vx" not in code
        r = evaluate(text, extended, task, "coral", config, layout=lay)
        if not r.correct:
            problems.append(f"{config}: {r.summary()[:300]}")
        elif not r.cycles < base_cycles[config].cycles:
            problems.append(f"{config}: extended {r.cycles} cycles, base reference {base_cycles[config].cycles}")
    assert not problems, "\n".join(problems)


def test_extended_kernel_needs_the_overlay(base, task):
    gen = load_module(CASE / "kernel.py")
    lay = layout_for(base, task, "coral", "C1")
    with pytest.raises(ValueError, match=NAME):
        gen.generate(task, task.config("coral", "C1"), lay, base)


def test_readme_states_the_measured_cycles(extended, task, base_cycles):
    text = (CASE / "README.md").read_text()
    gen = load_module(CASE / "kernel.py")
    for config, r in base_cycles.items():
        lay = layout_for(extended, task, "coral", config)
        x = evaluate(gen.generate(task, task.config("coral", config), lay, extended), extended, task, "coral",
                     config, layout=lay)
        row = next((ln for ln in text.splitlines() if ln.startswith(f"| {config} |")), None)
        assert row is not None, config
        assert str(r.cycles) in row and str(x.cycles) in row, (config, row, r.cycles, x.cycles)
