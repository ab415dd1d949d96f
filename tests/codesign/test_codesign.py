"""Co-design: every rejection reason, accepted overlays (chained, rebuilt, cached apart from the
base), the agent's tools switching to the extended target, the offline session end to end,
profiles and parameter sweeps."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import isadl
from kcgen import codesign, sweep, taskspec
from kcgen.paths import REPO, TASKS

PLENA = REPO / "targets" / "plena.isa"
VMAX = (TASKS / "codesign" / "plena" / "relu" / "extension.isa").read_text()

ARGMAX = """instruction V_RED_ARGMAX {
  syntax "V_RED_ARGMAX {rd:gp}, {rs1:gp}"
  encoding R(opcode=OPCODE, rd, rs1)
  unit core; cycles CYCLES
  semantics {
    let src = gp[rs1]
    require src % VLEN == 0 : "V_RED_ARGMAX: the vector SRAM address must be a multiple of VLEN"
    var best: u32 = 0
    for i in 1..BOUND {
      if f32(vsram[src + i]) > f32(vsram[src + best]) { best = i }
    }
    gp[rd] = best
  }
  doc "gp[rd] = the index of the largest element of the row V[gp[rs1]] (the lowest index on ties)."
}
"""


def argmax(opcode="0x33", cycles="8", bound="VLEN"):
    return ARGMAX.replace("OPCODE", opcode).replace("CYCLES", cycles).replace("BOUND", bound)


def propose(tmp_path, text, base=PLENA, **kw):
    return codesign.propose(base, text, tmp_path / "isa", **kw)


def test_a_valid_proposal_becomes_an_overlay(tmp_path):
    v = propose(tmp_path, argmax())
    assert v.accepted, v.reasons
    assert v.mnemonics == ["V_RED_ARGMAX"] and v.floors == {"V_RED_ARGMAX": 6} and v.name == "plena_x1"
    spec = isadl.load(v.overlay)
    assert spec.isa.extends == "plena" and "V_RED_ARGMAX" in spec.instructions and "M_MM" in spec.instructions
    assert v.overlay.read_text().startswith("isa plena_x1 extends plena {\n")


def test_accepted_proposals_chain(tmp_path):
    first = propose(tmp_path, VMAX)
    second = propose(tmp_path, argmax(), base=first.overlay)
    assert second.accepted and second.name == "plena_x1_x2" and second.base == "plena_x1"
    spec = isadl.load(second.overlay)
    assert {"V_MAX_VF", "V_RED_ARGMAX"} <= set(spec.instructions)


@pytest.mark.parametrize("text,reason", [
    (argmax(opcode="0x15"), r"collides with the existing instruction V_RED_SUM .*free values of field 'opcode'"),
    (argmax(cycles="1"), r"declares 1 cycles, below the floor of 6 .*a reduction 6 levels deep"),
    (argmax(bound="gp[rd]"), r"proposal\.isa:9:\d+: error: unbounded loop"),
    (argmax(bound="min(gp[rd], 64 * VLEN)"), r"below the floor of 64 "),  # the cap counts: 4096 lanes / 64
    (argmax().replace('  doc "gp[rd] = the index of the largest element of the row V[gp[rs1]] '
                      '(the lowest index on ties)."\n', ""), r"has no doc text"),
    (argmax().replace("V_RED_ARGMAX {", "V_ADD_VF {", 1), r"V_ADD_VF"),
    (argmax().replace("gp[rd] = best", "gp[rd] = vsram[src]"), r"proposal\.isa:12:\d+: error: type mismatch"),
    (argmax().replace("semantics {", "semantics {{", 1), r"proposal\.isa:5:\d+: error: "),
    ("isa mine extends plena { }", r"without an 'isa \.\.\. extends \.\.\.' header"),
    ("", r"adds no instruction"),
])
def test_each_rejection_reason(tmp_path, text, reason):
    v = propose(tmp_path, text)
    assert not v.accepted and v.overlay is None
    assert any(re.search(reason, r) for r in v.reasons), v.reasons
    assert not list((tmp_path / "isa").glob("*.isa")), "a rejected proposal leaves no overlay behind"


def test_suggested_free_opcodes_are_free(tmp_path):
    v = propose(tmp_path, argmax(opcode="0x15"))
    hint = next(r for r in v.reasons if "free values" in r)
    for value in re.findall(r"0x[0-9a-f]+", hint.split("free values")[1]):
        assert propose(tmp_path / value, argmax(opcode=value)).accepted, value


def test_a_rebuilt_extension_is_its_own_cache_entry(tmp_path):
    from kcgen.target import build_target
    base = build_target(isadl.load(PLENA))
    ext = build_target(isadl.load(propose(tmp_path, VMAX).overlay))
    assert ext.directory != base.directory and (ext.docs / "index.txt").read_text().count("V_MAX_VF") > 0
    again = build_target(isadl.load(PLENA))
    assert again.built.cached and again.directory == base.directory


def test_the_agent_tools_switch_to_the_extended_target(tmp_path):
    from kcgen.paths import agent
    A = agent()
    run = A.Run(A.RunSettings(model="scripted/codesign", target="plena", task="relu", out=tmp_path / "run",
                              codesign=True, seed=1))
    t = run.tools
    t.call("write_code", json.dumps({"code": "V_MAX_VF gp1, gp1, f0\n"}))
    assert "error" in t.call("check_syntax", "{}")
    assert "V_MAX_VF" not in t.call("grep_docs", '{"pattern": "V_MAX_VF"}').split("no match")[0]
    verdict = t.call("propose_instruction", json.dumps({"isadl": VMAX, "rationale": "relu"}))
    assert verdict.startswith("accepted: V_MAX_VF")
    assert t.call("check_syntax", "{}").startswith("All checks passed")
    assert "V_MAX_VF" in t.call("grep_docs", '{"pattern": "V_MAX_VF"}')
    rec = [r for r in run.trajectory.records() if r["type"] == "proposal"][-1]
    assert rec["accepted"] and "instruction V_MAX_VF" in rec["diff"] and rec["rationale"] == "relu"


@pytest.mark.parametrize("task,mnemonic", [("relu", "V_MAX_VF"), ("dllm_sampling", "V_RED_ARGMAX")])
def test_offline_codesign_session_end_to_end(tmp_path, task, mnemonic):
    from click.testing import CliRunner
    from kcgen.cli import main
    out = CliRunner().invoke(main, ["codesign", "plena", task, "--model", "scripted/codesign", "--out",
                                    str(tmp_path / "cd")])
    assert out.exit_code == 0, out.output
    summary = json.loads((tmp_path / "cd" / "summary.json").read_text())
    assert summary["accepted"] == [mnemonic] and summary["scripted"] is True
    assert [r["mnemonic"] for r in summary["rejected"]] == [mnemonic]
    assert "collides with the existing instruction" in summary["rejected"][0]["reason"]
    assert summary["extended_cycles"] < summary["base_cycles"]
    assert summary["speedup"] == pytest.approx(summary["base_cycles"] / summary["extended_cycles"])
    # what the new hardware costs, beside the speedup (kcgen.hwcost against the original target)
    cost = summary["hw_cost"][mnemonic]
    assert summary["added_area"] == pytest.approx(cost["added_area"]) and summary["added_area"] > 0
    assert summary["min_latency"] == {mnemonic: cost["min_latency"]} and cost["min_latency"] <= cost["declared"]
    assert summary["speedup_per_area"] == pytest.approx(
        summary["speedup"] / ((cost["base_lanes"] + summary["added_area"]) / cost["base_lanes"]), rel=1e-2)
    assert f"hardware: {summary['added_area']:.2f} base lanes added, minimum latency {mnemonic}" in out.output
    assert "co-design [scripted model]" in out.output
    # the report shows the session: cycles, speedup and what the new hardware costs
    from kcgen import report
    r = report.write(tmp_path / "cd")
    row = next(line for line in r.markdown.read_text().splitlines() if line.startswith("| . |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1:3] == ["plena", task] and cells[5] == mnemonic
    assert cells[7:11] == [f"{summary['base_cycles']:,}", f"{summary['extended_cycles']:,}",
                           f"{summary['speedup']:.2f}x", f"{summary['added_area']:.2f}"]
    assert cells[11] == f"{mnemonic} {cost['min_latency']} (declared {cost['declared']})"
    assert cells[12] == f"{summary['speedup_per_area']:.2f}" and "Co-design sessions" in r.summary


def test_profile_finds_the_hot_loop_and_its_dependent_chains():
    from kcgen import kernels
    from kcgen.evaluation import layout_for
    from kcgen.profile import profile, render
    spec = isadl.load(REPO / "targets" / "boom.isa")
    task = taskspec.find("gemm")
    lay = layout_for(spec, task, "boom", "C1")
    p = profile(spec, kernels.find("reference", spec, task, "boom", "C1", lay).text, task, "boom", "C1", lay)
    assert p.complete and p.status == "halted" and p.cycles > 0
    # one multiply (the first term) or multiply-add per MAC of the 16x16x16 product
    assert p.per_insn["FMADD_S"][0] + p.per_insn["FMUL_S"][0] == 16 ** 3
    assert (("FLW", "FMADD_S"), max(n for s, n in p.chains if s == ("FLW", "FMADD_S"))) in p.chains
    assert p.loops and p.loops[0][2] > 1
    text = render(p)
    assert "most frequent dependent chains" in text and "FLW -> FMADD_S" in text


def test_sweep_grid_and_points():
    assert sweep.grid(["A=1,2", "B=3"]) == [{"A": 1, "B": 3}, {"A": 2, "B": 3}]
    with pytest.raises(sweep.SweepError, match="give NAME=V1,V2"):
        sweep.grid(["A"])
    rows = sweep.run("boom", sweep.grid(["CONFIG=1,4"]), [taskspec.find("relu")], ["C1"])
    small, mega = rows
    assert small.reference_cycles > mega.reference_cycles and mega.roofline_cycles < small.roofline_cycles
    bad = sweep.run("plena", [{"VLEN": 128, "MLEN": 64}], [taskspec.find("relu")], ["C1"])
    assert bad[0].error.startswith("not a valid point: constraint failed")
