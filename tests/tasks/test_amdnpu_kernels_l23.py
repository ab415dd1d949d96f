"""amdnpu's Level-2 and Level-3 kernels (tasks/kernels/{baseline,reference}/amdnpu/<task>.py):
structural checks only (tests/tasks/test_solvability.py evaluates items at every configuration).

Every item has both kernels; they assemble and their program image (text and tables) fits the 16 KiB
the ABI keeps for it below the inputs (dm[0..PM_BYTES]: the assembler does not check this, an image
that runs over is overwritten by the inputs), and no straight-line read comes before its result (the
exposed pipeline would read the old value); at C1 both are correct (two trials, fixed seed)."""
from __future__ import annotations

import pytest

import isadl
from kcgen import kernels, taskspec
from kcgen.evaluation import _assembler, evaluate, layout_for
from kcgen.paths import REPO, load_module
from kcgen.sim.hazards import stale_reads

LEVEL2 = ["rope", "ffn", "swiglu", "scaled_dot_product", "mha", "gqa", "mqa"]
LEVEL3 = ["decoder_block_llama", "decoder_block_t5", "conv_block"]


@pytest.fixture(scope="module")
def spec():
    return isadl.load(REPO / "targets" / "amdnpu.isa")


def test_the_generators_and_the_layout_keep_the_isas_program_region(spec):
    pm = spec.params["PM_BYTES"]
    base = load_module(REPO / "tasks" / "kernels" / "baseline" / "amdnpu.py")
    lay = load_module(REPO / "tasks" / "layouts" / "amdnpu.py")
    assert base.PROGRAM_END == lay.IMAGE_END == pm == 16 * 1024


def test_every_task_has_its_own_generators():
    for kind in kernels.KINDS:
        for name in LEVEL2 + LEVEL3:
            assert (REPO / "tasks" / "kernels" / kind / "amdnpu" / f"{name}.py").is_file(), (kind, name)


@pytest.mark.parametrize("name", LEVEL2 + LEVEL3)
def test_every_item_has_both_kernels_and_they_fit_program_memory(spec, name):
    task = taskspec.find(name)
    assert "amdnpu" in task.targets
    for config in taskspec.CONFIGS:
        lay = layout_for(spec, task, "amdnpu", config)
        for kind in kernels.KINDS:
            k = kernels.find(kind, spec, task, "amdnpu", config, lay)
            assert k is not None and k.origin.name == f"{name}.py", (name, config, kind)
            program = _assembler(spec).assemble(k.text)
            end = max(s.end for s in program.sections.values())
            assert end <= spec.params["PM_BYTES"], f"{name} {config} {kind}: program image ends at {end:#x}"
            early = stale_reads(spec, program, "kernel.s", k.text, limit=1)
            assert not early, f"{name} {config} {kind}: {early[0]}"


@pytest.mark.parametrize("name", LEVEL2 + LEVEL3)
def test_both_kernels_are_correct_at_c1(spec, name):
    task = taskspec.find(name)
    lay = layout_for(spec, task, "amdnpu", "C1")
    for kind in kernels.KINDS:
        k = kernels.find(kind, spec, task, "amdnpu", "C1", lay)
        r = evaluate(k.text, spec, task, "amdnpu", "C1", trials=2, seed=2026, layout=lay, path=str(k.origin))
        assert r.correct, f"{name} C1 {kind}: {r.summary()[:300]}"


def test_the_reference_generators_pack_bundles(spec):
    """decoder_block_t5's reference is its baseline template's operations (as written, before
    kcgen.schedule packs the baseline) in full bundles (fewer bundles, the same operations but the
    empty bundles that wait for latencies); the other references also change what they schedule."""
    task = taskspec.find("decoder_block_t5")
    lay = layout_for(spec, task, "amdnpu", "C1")
    gen = load_module(REPO / "tasks" / "kernels" / "baseline" / "amdnpu" / "decoder_block_t5.py")
    base = gen.unscheduled(task, task.config("amdnpu", "C1"), lay, spec)
    ref = kernels.find("reference", spec, task, "amdnpu", "C1", lay).text
    assert any(line.count(";") >= 2 for line in ref.splitlines())
    ops = lambda t: sorted(op.strip().split()[0] for line in t.splitlines()  # noqa: E731
                           if line.startswith("    ") and not line.strip().startswith(("//", "."))
                           for op in line.split(";") if not op.strip().startswith("nop"))
    # the reference is the scheduled baseline: packing keeps the template's operations exactly, and
    # software pipelining (kcgen.schedule, with main's delay slots the loops now fit the program
    # region pipelined) adds copies of loop operations in prologues and epilogues, nothing else
    from kcgen.schedule import schedule
    assert ref == kernels.find("baseline", spec, task, "amdnpu", "C1", lay).text
    # (counts: an operation may move to another slot's instruction of the same meaning, movx -> mova)
    assert len(ops(schedule(spec, base, pipeline=False))) == len(ops(base))
    assert len(ops(ref)) > len(ops(base))


def test_outlined_routines_and_run_time_tables_keep_the_decoders_small(spec):
    lib = load_module(REPO / "tasks" / "kernels" / "baseline" / "amdnpu" / "_lib.py")
    task = taskspec.find("decoder_block_llama")
    lay = layout_for(spec, task, "amdnpu", "C1")
    text = kernels.find("baseline", spec, task, "amdnpu", "C1", lay).text
    assert "j p7" in text and "Rmm_entry:" in text and "Rnorm_entry:" in text
    assert "\npwl_exp:" not in text and "\nc_pwlc_exp:" in text
    assert lib.short_moves("    movxm r3, #1023") == "    movx r3, #1023"
    assert lib.short_moves("    movxm r3, #1024") == "    movxm r3, #1024"
