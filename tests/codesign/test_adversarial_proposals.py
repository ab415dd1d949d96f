"""Issue 18, items 1, 2, 5 and 8: a proposal only adds (parsed by the grammar's `proposal` rule, never
pasted into a header), its cycles mean what the simulator charges, and acceptance is atomic (the
overlay builds and the proposal's own examples pass, or nothing is written). Each adversarial
proposal is rejected with its located reason and leaves the work directory as it was."""
from __future__ import annotations

import re

import pytest

import isadl
from kcgen import codesign
from kcgen.paths import REPO, TASKS

from .test_codesign import ARGMAX, PLENA, VMAX, argmax

BOOM = REPO / "targets" / "boom.isa"
DLLM = (TASKS / "codesign" / "plena" / "dllm_sampling" / "extension.isa").read_text()


def snapshot(d):
    return sorted(str(p.relative_to(d)) for p in d.rglob("*")) if d.exists() else None


def rejected(tmp_path, text, reason, base=PLENA, **kw):
    workdir = tmp_path / "isa"
    before = snapshot(workdir)
    v = codesign.propose(base, text, workdir, **kw)
    assert not v.accepted and v.overlay is None, v.reasons
    assert any(re.search(reason, r) for r in v.reasons), v.reasons
    assert snapshot(workdir) == before, "a rejected proposal leaves the work directory unchanged"
    return v


LEGIT = argmax()


@pytest.mark.parametrize("text,reason", [
    ("override param HBM_LATENCY = 0\n" + LEGIT,
     r"^proposal\.isa:1:\d+: error: a proposal only adds: 'override param HBM_LATENCY'"),
    (LEGIT + "timing inorder { issue_width = 64 }\n",
     r"^proposal\.isa:16:1: error: a proposal only adds .*timing section"),
    (LEGIT + "param VLEN = 128\n", r"^proposal\.isa:16:\d+: error: a proposal only adds: parameter VLEN redefines"),
    (LEGIT + 'version "9"\n', r"^proposal\.isa:16:1: error: .*'version'"),
    (LEGIT + "} isa evil extends plena {\n" + argmax(opcode="0x34").replace("V_RED_ARGMAX", "V_EVIL"),
     r"^proposal\.isa:16:1: error: unexpected '}'"),
    ("isa evil extends plena {\n" + LEGIT + "}\n", r"^proposal\.isa:1:1: error: unexpected 'isa'"),
    (LEGIT.replace("V_RED_ARGMAX {", "M_MM {", 1), r"^proposal\.isa:1:\d+: error: .*instruction M_MM redefines"),
    (LEGIT + "regs gp[4]: u32\n", r"^proposal\.isa:16:\d+: error: .*register file gp redefines the base's register file"),
    (LEGIT + "state STRIDE: u32\n", r"redefines"),
    # collides only when the new rd operand is 0: opcode 0x01 with rd=0 is an existing instruction
    (argmax(opcode="0x01"), r"collides with the existing instruction|cannot be told apart"),
])
def test_a_proposal_only_adds(tmp_path, text, reason):
    rejected(tmp_path, text, reason)


def test_a_mnemonic_may_not_shadow_a_pseudo_instruction(tmp_path):
    text = ARGMAX.replace("V_RED_ARGMAX {", "LI {", 1)
    rejected(tmp_path, text, r"^proposal\.isa:1:\d+: error: .*instruction LI redefines \(or shadows\) the base's "
                             r"pseudo-instruction li", base=BOOM, build=False)


@pytest.mark.parametrize("cycles,reason", [
    ("18446744073709551617", r"does not fit the simulator's"),  # 2^64 + 1 as a literal
    ("(1 << 64) + 1", r"shifts by 64"),  # the simulator computed 1
    ("2**64 + 1", r"does not fit the simulator's"),
    ("(1 << 63) + 3", r"does not fit|at most 2\^31"),
    ("(1 << 62) * 4 + 8", r"does not fit the simulator's"),  # wraps to 8 in 64 bits
    ("0 - 18446744073709551608", r"does not fit"),
    ("(1 << 31) + 1", r"can be 2147483649: at most 2\^31"),
    ("0", r"can be 0: it must be at least 1"),
    ("VLEN - 100", r"can be -36"),
    ("gp[rd]", r"must be a constant expression of the parameters \(it reads rd"),
    ("rd + 8", r"must be a constant expression of the parameters"),
])
def test_cycles_mean_what_the_simulator_charges(tmp_path, cycles, reason):
    rejected(tmp_path, argmax(cycles=cycles), rf"proposal\.isa:4:\d+: error: |cycles")
    rejected(tmp_path, argmax(cycles=cycles), reason)


def test_latency_is_bounded_over_its_operands(tmp_path):
    text = argmax().replace("cycles 8", "cycles 8; latency 8 + (rd << 28)")
    rejected(tmp_path, text, r"latency can be \d+: at most 2\^31")
    ok = codesign.propose(PLENA, argmax().replace("cycles 8", "cycles 8; latency 8 + rd"), tmp_path / "ok",
                          build=False)
    assert ok.accepted, ok.reasons


@pytest.mark.parametrize("text,program", [
    (argmax(), "V_RED_ARGMAX gp1, gp2\n"),
    (argmax(cycles="4 * (VLEN / 16) + (1 << 3) % 5"), "V_RED_ARGMAX gp1, gp2\n"),
    (VMAX, "V_MAX_VF gp1, gp0, f0\n"),
    (DLLM, "V_RED_ARGMAX f1, f2, gp0, 0\n"),
    # test_floor's FP SRAM scan, at the floor its memory reads set (256 bf16 at one a cycle)
    ("""instruction S_SUM_FP {
  syntax "S_SUM_FP {rd:f}, {rs1:gp}"
  encoding R(opcode=0x33, rd, rs1)
  unit core; cycles 256
  semantics { f[rd] = bf16(sum(k in 0..256: f32(fpsram[gp[rs1] + k]))) }
  doc "Sums 256 entries of the FP SRAM."
}
""", "S_SUM_FP f1, gp0\n"),
])
def test_the_validators_cycles_are_the_simulators(tmp_path, text, program):
    """Every accepted proposal of these tests and tasks/codesign: one instruction, run once on the
    built overlay, costs what the validator read from its `cycles`."""
    from kcgen.asm import Assembler
    from kcgen.sim.simulator import Simulator
    from kcgen.target import build_target
    v = codesign.propose(PLENA, text, tmp_path / "isa")
    assert v.accepted, v.reasons
    spec = isadl.load(v.overlay)
    sim = Simulator(spec, build_target(spec).built)
    sim.load(Assembler(spec).assemble(program, "one"))
    run = sim.run(10)
    assert run.status == "halted" and run.instret == 1
    (mnemonic,) = v.mnemonics
    assert run.cycles == v.cycles[mnemonic] >= v.floors[mnemonic]


def test_a_proposal_whose_build_fails_leaves_nothing_and_the_chain_does_not_advance(tmp_path, monkeypatch):
    import kcgen.target as target
    workdir = tmp_path / "isa"
    real = target.build_target

    def broken(spec, force=False):
        raise RuntimeError("the C compiler rejected the generated simulator")
    monkeypatch.setattr(target, "build_target", broken)
    v = codesign.propose(PLENA, VMAX, workdir)
    assert not v.accepted and v.overlay is None
    assert any("does not build" in r and "C compiler rejected" in r for r in v.reasons), v.reasons
    assert not workdir.exists() or not list(workdir.iterdir()), "no overlay, no temporary file"
    monkeypatch.setattr(target, "build_target", real)
    nxt = codesign.propose(PLENA, argmax(), workdir)
    assert nxt.accepted and nxt.name == "plena_x1" and nxt.base == "plena", nxt.reasons
    assert isadl.load(nxt.overlay).isa.extends == "plena" and "V_MAX_VF" not in isadl.load(nxt.overlay).instructions


def test_a_proposal_whose_examples_fail_is_rejected(tmp_path):
    text = VMAX.replace("vsram[65] == 2.0", "vsram[65] == 3.0")
    v = rejected(tmp_path, text, r"^proposal\.isa:\d+:\d+: error: example V_MAX_VF#0 fails on the built simulator")
    assert any("vsram[65] == 3.0" in r for r in v.reasons), v.reasons


def test_the_written_overlay_is_built_from_the_parsed_proposal(tmp_path):
    v = codesign.propose(PLENA, "# a comment without a newline at the end\n" + VMAX + "# end", tmp_path / "isa")
    assert v.accepted, v.reasons
    assert v.overlay.read_text().startswith("isa plena_x1 extends plena {\n") and v.overlay.read_text().endswith("}\n")
    assert sorted(p.name for p in (tmp_path / "isa").iterdir()) == ["plena_x1.isa"]


def test_the_proposal_grammar_rule_is_a_list_of_items():
    from isadl.parser import parse_proposal
    isa = parse_proposal(VMAX, "proposal.isa", "plena_x1", "plena")
    assert isa.name == "plena_x1" and isa.extends == "plena" and [i.name for i in isa.instructions] == ["V_MAX_VF"]
    with pytest.raises(isadl.IsaError, match=r"proposal\.isa:1:1: error: unexpected '}'"):
        parse_proposal("} isa x extends plena {", "proposal.isa", "plena_x1", "plena")
