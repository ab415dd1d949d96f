"""Roofline: hand-computed lower bounds from tasks/roofline.yaml's rates and the tasks' work."""
from __future__ import annotations

import math

import pytest

import isadl
from kcgen import roofline, taskspec
from kcgen.evaluation import layout_for
from kcgen.paths import REPO


@pytest.fixture(scope="module")
def boom():
    return isadl.load(REPO / "targets" / "boom.isa")


def bound(spec, name, target, config):
    task = taskspec.find(name)
    return roofline.roofline_cycles(spec, task, target, config, layout_for(spec, task, target, config))


def test_gemm_on_boom_is_bound_by_its_one_fma_pipe(boom):
    # C1: 16 x 16 x 16 MACs on FP_PIPES = 1; the 3 x 256 floats are 3072 bytes at 8 per cycle
    assert bound(boom, "gemm", "boom", "C1") == 16 * 16 * 16


def test_relu_on_boom_is_bound_by_its_memory_port(boom):
    # C2: 1024 floats in and out = 8192 bytes at 8 per cycle; 1024 results at 1 + 2 * 3 per cycle
    assert bound(boom, "relu", "boom", "C2") == 1024


def test_megaboom_doubles_the_pipes_and_ports():
    mega = isadl.load(REPO / "targets" / "boom.isa", {"CONFIG": 4})
    assert bound(mega, "gemm", "boom", "C1") == 16 * 16 * 16 // 2
    assert bound(mega, "relu", "boom", "C2") == 1024 // 2


def test_coral_int8_gemm_uses_the_vector_macs():
    coral = isadl.load(REPO / "targets" / "coral.isa")
    # C3: 64^3 MACs at VLEN / 16 = 8 per cycle (widening int8 products); bytes 3 * 4096 int8 (c is
    # requantised to int8) = 12288 at 16 + 4 per cycle
    assert bound(coral, "gemm", "coral", "C3") == max(64 ** 3 // 8, 12288 // 20)


def test_a_task_without_work_has_no_roofline(boom):
    task = taskspec.find("relu")
    bare = taskspec.TaskSpec(task.name, task.level, task.description, task.tensors, task.configs, task.reference,
                             task.tolerance, task.targets, {}, task.path)
    assert roofline.roofline_cycles(boom, bare, "boom", "C1", layout_for(boom, bare, "boom", "C1")) is None


def test_every_shipped_task_states_its_work():
    for task in taskspec.all_tasks():
        assert task.work, f"{task.name} has no work: its items would have no roofline"
        for target in task.targets:
            for c in ("C1", "C5"):
                assert all(v >= 1 for v in task.work_counts(task.config(target, c)).values())


def test_an_unknown_parameter_in_the_rates_is_reported():
    with pytest.raises(roofline.RooflineError, match="'NOPE' is not a parameter"):
        roofline._rate("NOPE * 2", {"VLEN": 128})
    assert roofline._rate("9 / 8", {}) * 8 == 9
    assert math.isclose(float(roofline._rate("VLEN / 32", {"VLEN": 128})), 4.0)


def test_the_statement_says_how_the_roofline_is_computed():
    # plena C1 gemm: the numbers are hand-derived from plena.isa's parameters (HEADS = MLEN / HLEN = 4,
    # MLEN = 64, HLEN = 16, HBM_LATENCY = 100, HBM_BYTES_PER_CYCLE = 64) and the task's sizes
    from kcgen.evaluation import statement
    plena = isadl.load(REPO / "targets" / "plena.isa")
    task = taskspec.find("gemm")
    cfg = task.config("plena", "C1")
    lay = layout_for(plena, task, "plena", "C1")
    macs = cfg["M"] * cfg["N"] * cfg["K"]
    rate = 4 * 64 * 16
    inputs = sum(math.prod(p.shape) for p in lay.placements.values() if p.tensor in {t.name for t in task.inputs})
    moved = inputs * 9 / 8  # MXFP8: 9 bytes per 8 elements
    expected = math.ceil(100 + max(macs / rate, moved / 64))
    text = statement(task, "plena", "C1", lay, plena)
    line = next(l for l in text.splitlines() if l.startswith("Roofline: "))
    assert f"= {expected}," in line and bound(plena, "gemm", "plena", "C1") == expected
    assert f"multiply-accumulates {macs} / {rate} (= HEADS * MLEN * HLEN) per cycle" in line
    assert "100 (memory latency)" in line and "(= HBM_BYTES_PER_CYCLE)" in line
