"""Measured tolerances (kcgen.tolerances, tasks/device.py, tasks/tolerances.yaml).

- the committed table is what the measurement gives: every item is measured again on the same
  fixed seeds and must give exactly its entry (the table is generated, never edited by hand);
- tolerance_for uses the table for the benchmark's own task files, the YAML file's tolerance for
  anything else;
- the cheat the flat bf16 tolerance let through (a PLENA softmax that writes 1/N everywhere) fails
  on every seed;
- the device models' roundings are the formats' (bf16 rounded once from float64).
"""
from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest

from kcgen import numeric, taskspec
from kcgen import tolerances as T
from kcgen.evaluation import DTYPES, quantize

TABLE = T.load()
ITEMS = [(t.name, tg) for t, tg in T.items()]


def test_the_table_lists_every_float_item_and_nothing_else():
    listed = {(name, tg) for name, tgs in TABLE.items() for tg in tgs}
    assert listed == set(ITEMS)
    text = T.TABLE.read_text(encoding="utf-8")
    assert "GENERATED" in text and "python -m kcgen.tolerances" in text


@pytest.mark.parametrize("name,target", ITEMS, ids=[f"{n}-{t}" for n, t in ITEMS])
def test_the_table_entry_is_the_measurement(name, target):
    """Regenerate the item's entry (the same fixed seeds, profiles and configurations) and compare."""
    _, _, worst, _ = T._measure_item((name, target, T.SEEDS))
    got = {dt: T.derive(dt, w) for dt, w in worst.items()}
    assert all(w.nonfinite == 0 for w in worst.values())
    assert got == TABLE[name][target], (
        f"{name} on {target}: tasks/tolerances.yaml is stale; regenerate it with python -m kcgen.tolerances")


def test_every_measured_tolerance_tests_something():
    """No entry is so loose that an all-zero output (rtol >= 1) or a half-wrong one passes: a task whose
    device arithmetic is that far from float64 under some profile must leave the profile out."""
    loose = [(name, tg, dt, e["rtol"], e["at"]) for name, tgs in TABLE.items() for tg, dts in tgs.items()
             for dt, e in dts.items() if e["rtol"] > T.ILL]
    assert not loose, f"ill-conditioned (task, target, dtype, rtol, where): {loose}"


def test_the_rendered_table_round_trips():
    """render(load()) reproduces the file byte for byte (the file is the renderer's output)."""
    assert T.render(TABLE) == T.TABLE.read_text(encoding="utf-8")


def test_the_docs_show_the_table():
    """docs/tasks.md "Tolerances" carries the generated old-vs-new table of the committed file."""
    doc = T.DOCS.read_text(encoding="utf-8")
    assert T.BEGIN in doc and T.END in doc
    assert T.docs_with_table(doc, TABLE) == doc, "regenerate it: python -m kcgen.tolerances --docs"


def test_tolerance_for_uses_the_table_for_shipped_tasks_only():
    task = taskspec.find("softmax")
    entry = TABLE["softmax"]["plena"]["bf16"]
    tol = task.tolerance_for("plena", "bf16")
    assert (tol.atol, tol.rtol) == (entry["atol"], entry["rtol"])
    assert tol.atol < 1e-30 and tol.rtol < 0.1
    # the same spec text loaded as a user's own file: its YAML tolerance
    own = taskspec.load_text(open(task.path, encoding="utf-8").read(), "<my softmax>")
    assert own.tolerance_for("plena", "bf16") == own.tolerance["bf16"]
    # dtypes the table does not list (exact integer outputs) keep the YAML's
    gemm = taskspec.find("gemm")
    assert gemm.tolerance_for("coral", "i8") == gemm.tolerance["i8"] == taskspec.Tolerance(0, 0)
    dllm = taskspec.find("dllm_sampling")
    assert dllm.tolerance_for("plena", "bf16") == taskspec.Tolerance(0, 0)


def test_rules_of_the_derivation():
    w = T.Worst(rel=0.01234, at="C5 normal seed 1")
    e = T.derive("bf16", w)
    assert e["rtol"] == 0.025 and e["atol"] == float(f"{2.0 ** -126:.3g}") and e["worst"] == 0.0123
    assert T.derive("bf16", T.Worst())["rtol"] == 0.0079     # never below one unit in the last place (2^-7)
    assert T.derive("f32", T.Worst())["rtol"] == 1.2e-7      # (2^-23)
    assert T._round_up(0.0123) == 0.013 and T._round_up(2.0e-6) == 2.0e-6 and T._round_up(9.99e-3) == 0.01


def test_errors_are_judged_as_the_evaluator_judges():
    tol = taskspec.Tolerance(0.0, 0.01)
    want = np.array([1.0, -2.0, 0.0, 1e-3])
    got = want + np.array([0.0, 0.015, 0.01, 0.0])
    rms = math.sqrt(np.mean(want * want))  # 1.118: the zero element is judged against it
    rel, small, bad = T.errors(got, want, "f32")
    assert rel == pytest.approx(max(0.015 / 2.0, 0.01 / rms)) and small == 0.0 and bad == 0
    assert tol.ok(got, want).all() and not taskspec.Tolerance(0.0, 0.0085).ok(got, want).all()
    assert T.errors(np.array([np.nan, 1.0]), np.array([1.0, 1.0]), "f32")[2] == 1


@pytest.mark.parametrize("target,name", [("plena", "softmax"), ("boom", "linear")])
def test_the_measurement_draws_the_evaluators_inputs(target, name):
    """draw_inputs gives exactly what kcgen.evaluation.start_trial writes (PLENA: after its MXFP8 rounding)."""
    import isadl
    from kcgen.evaluation import _assembler, _simulator, layout_for, start_trial
    from kcgen.kernels import find
    spec = isadl.load(isadl.find_target(target))
    task = taskspec.find(name)
    cfg = task.config(target, "C1")
    lay = layout_for(spec, task, target, "C1")
    program = _assembler(spec).assemble(find("baseline", spec, task, target, "C1", lay).text)
    for k, profile in enumerate(task.profiles):
        seen = start_trial(_simulator(spec), program, task, lay, 500 + k, profile, cfg)
        drawn = T.draw_inputs(task, target, cfg, 500 + k, profile)
        for n in seen:
            assert np.array_equal(seen[n].astype(np.float64), drawn[n].astype(np.float64), equal_nan=True), (profile, n)


def test_bf16_rounds_once_from_float64():
    dev = T._device()
    rng = np.random.default_rng(7)
    x = np.concatenate([rng.standard_normal(20000) * 10.0 ** rng.integers(-40, 39, 20000),
                        # halfway cases of bf16 that float32 rounding would move off the tie
                        (np.arange(1, 2001) * 2.0 + 1) * 2.0 ** -9 + 2.0 ** -40,
                        [0.0, -0.0, 3.4e38, 1e-45, np.inf, -np.inf]])
    exact = numeric.decode_array(numeric.BF16, numeric.encode_array(numeric.BF16, x))
    got = dev.bf16(x)
    same = (got == exact) | (np.isnan(got) & np.isnan(exact))
    assert same.all(), x[~same][:5]
    assert np.array_equal(dev.f32(x[:100]), x[:100].astype(np.float32).astype(np.float64))


def test_sums_are_sequential_float32():
    dev = T._device()
    rng = np.random.default_rng(3)
    a = rng.standard_normal((5, 37)).astype(np.float32)
    b = rng.standard_normal((37, 6)).astype(np.float32)
    acc = np.zeros((5, 6), np.float32)
    for k in range(37):
        acc = acc + a[:, k:k + 1] * b[k]
    assert np.array_equal(dev.matsum(a, b), acc)
    s = np.float32(0)
    for v in a[0]:
        s = np.float32(s + v)
    assert dev.seqsum(a[:1])[0, 0] == s


def test_the_software_functions_stay_within_their_ulps():
    dev = T._device()
    d = dev.Scalar32(np.random.default_rng(1))
    x = np.linspace(-20, 20, 100001)
    got = d.exp(x)
    exact = np.exp(x)
    assert np.all(np.abs(got - exact) <= d.soft_ulps * dev.ulp(exact, 23) * (1 + 1e-12))
    assert np.any(np.abs(got - exact) > dev.ulp(exact, 23))  # the model does use its allowance


# ---- the cheat of issue 17: a PLENA softmax that writes 1/N everywhere ---------------------------------
def _softmax_trials(seed: int):
    """The trials an evaluation of PLENA softmax C5 with `seed` runs: one per profile, seeds seed + k."""
    task = taskspec.find("softmax")
    cfg = task.config("plena", "C5")
    ref = taskspec.reference(task)
    for k, profile in enumerate(task.profiles):
        x = T.draw_inputs(task, "plena", cfg, seed + k, profile)["x"].astype(np.float64)
        want = quantize(ref(x=x, **cfg)["y"], DTYPES["bf16"]).astype(np.float64)
        yield profile, want


def test_constant_softmax_fails_every_evaluation():
    task = taskspec.find("softmax")
    tol = task.tolerance_for("plena", "bf16")
    cfg = task.config("plena", "C5")
    cheat = np.full((cfg["M"], cfg["N"]), float(ml_dtypes.bfloat16(1.0 / cfg["N"])))
    old = task.tolerance["bf16"]
    passed_old = 0  # trials the flat tolerance of issue 17 lets the cheat through
    rng = np.random.default_rng(20260)
    for seed in rng.integers(0, 2 ** 31 - 64, 50).tolist():
        failed = []
        for profile, want in _softmax_trials(seed):
            ok = tol.ok(cheat, want).all()
            failed.append(not ok)
            passed_old += bool(old.ok(cheat, want).all())
            if profile == "normal":
                # the tolerance itself catches it, not only the large profile: the normal trial fails
                assert not ok, f"seed {seed}: the constant kernel passes the normal trial"
        assert any(failed), f"seed {seed}: the constant softmax passes every trial"
    # the cheat is a real one: the flat tolerance (atol 2e-2 > every output) let it through, on the
    # uniform, small, sparse and repeated trials (with the emulator's MXFP8 inputs (issue 21) no longer
    # on the normal one, whose largest output is now above 2e-2)
    assert passed_old > 0


def test_a_correct_device_computation_passes_the_table():
    """The device arithmetic itself (what the table was measured from) passes on fresh seeds."""
    dev = T._device()
    task = taskspec.find("softmax")
    for target in ("plena", "amdnpu", "boom"):
        dt = task.dtype(target, "y")
        tol = task.tolerance_for(target, dt)
        cfg = task.config(target, "C3")
        for k, profile in enumerate(task.profiles):
            inputs = {n: v.astype(np.float64) for n, v in T.draw_inputs(task, target, cfg, 99991 + k, profile).items()}
            want = quantize(taskspec.reference(task)(**inputs, **cfg)["y"], DTYPES[dt]).astype(np.float64)
            got = quantize(dev.compute(task, target, inputs, cfg, 99991 + k)["y"], DTYPES[dt]).astype(np.float64)
            assert tol.ok(got, want).all(), (target, profile)
