"""dllm_sampling (issue #9 item 4, the dLLM case on PLENA): the golden's rules on hand-made cases,
the base-ISA reference and baseline kernels at every configuration, and the reference extension
(tasks/codesign/plena/dllm_sampling: V_RED_ARGMAX) as an overlay of plena, with its examples and
its kernel, correct and faster than the base reference."""
from __future__ import annotations

import numpy as np
import pytest

import isadl
from kcgen import codesign, kernels, taskspec
from kcgen.evaluation import evaluate, layout_for
from kcgen.paths import REPO, TASKS, load_module

R = load_module(TASKS / "reference.py")
EXT = TASKS / "codesign" / "plena" / "dllm_sampling"
SEED = 2026


def golden(logits, mask, K):
    out = R.dllm_sampling(np.asarray(logits, float), np.asarray(mask, float), K)
    hi, lo = out["tokens_hi"], out["tokens_lo"]
    assert ((hi < 0) == (lo < 0)).all()
    return np.where(lo < 0, -1.0, 256 * hi + lo).tolist(), out["mask_out"].tolist()


# ---- the golden ---------------------------------------------------------------------------------------
def test_token_ties_go_to_the_lowest_index():
    x = np.zeros((2, 64))
    x[0, [9, 3, 40]] = 2.0                  # three equal largest logits
    x[1, :] = -1.0                          # all equal
    tokens, mask_out = golden(x, [1.0, 1.0], 2)
    assert tokens == [3.0, 0.0] and mask_out == [0.0, 0.0]


def test_confidence_ties_go_to_the_lowest_position():
    x = np.zeros((4, 64))
    x[:, 5] = 1.0                           # four identical rows: equal confidences
    tokens, mask_out = golden(x, [1.0, 1.0, 1.0, 1.0], 2)
    assert tokens == [5.0, 5.0, -1.0, -1.0] and mask_out == [0.0, 0.0, 1.0, 1.0]


def test_confidence_is_compared_in_bf16_as_stated():
    # Row 1's exact softmax maximum is larger (one other logit is a little lower), but exp(-2^-10)
    # rounds to 1.0 in bf16, so both confidences are the same bf16 value: position 0 wins the tie.
    x = np.zeros((2, 64))
    x[:, 0] = 2.0
    x[1, 63] = -2.0 ** -10
    exact = np.exp(x - 2.0).sum(axis=1)
    assert exact[1] < exact[0]
    tokens, _ = golden(x, [1.0, 1.0], 1)
    assert tokens == [0.0, -1.0]


def test_more_confident_position_wins_and_only_masked_positions_count():
    x = np.zeros((4, 64))
    x[0, 1], x[1, 2], x[2, 3], x[3, 4] = 1.0, 4.0, 3.0, 6.0
    # position 3 is the most confident but not masked (mask <= 0); then 1, then 2
    tokens, mask_out = golden(x, [0.5, 1.0, 2.0, 0.0], 2)
    assert tokens == [-1.0, 2.0, 3.0, -1.0] and mask_out == [1.0, 0.0, 0.0, 0.0]
    tokens, mask_out = golden(x, [1.0, -1.0, 1.0, 1.0], 1)
    assert tokens == [-1.0, -1.0, -1.0, 4.0] and mask_out == [1.0, 0.0, 1.0, 0.0]


def test_token_ids_beyond_256_are_split_exactly():
    x = np.zeros((2, 32768))
    x[0, [30000, 31000]] = 3.0              # the lowest of two equal maxima, in group 117
    x[1, 256] = 1.0                         # group 1, index 0
    out = R.dllm_sampling(x, np.array([1.0, 1.0]), 2)
    assert out["tokens_hi"].tolist() == [117.0, 1.0] and out["tokens_lo"].tolist() == [48.0, 0.0]
    tokens, _ = golden(x, [1.0, 1.0], 2)
    assert tokens == [30000.0, 256.0]


def test_fewer_masked_positions_than_k():
    x = np.zeros((4, 64))
    x[:, 7] = 1.0
    tokens, mask_out = golden(x, [0.0, 1.0, 0.0, 0.0], 3)
    assert tokens == [-1.0, 7.0, -1.0, -1.0] and mask_out == [0.0] * 4
    tokens, mask_out = golden(x, [0.0] * 4, 3)
    assert tokens == [-1.0] * 4 and mask_out == [0.0] * 4


def test_the_sum_is_rounded_to_bf16_chunk_by_chunk():
    # Row 0: 1.0 and 127 terms w = bf16(exp(-2.5)). Chunk by chunk, S = bf16(bf16(1 + 63w) + 64w) =
    # 11.375, c = bf16(1/11.375); rounded once, S would be bf16(1 + 127w) = 11.4375, a smaller c.
    # Row 1: S = 11 + 3 * 0.125 = 11.375 exactly (the -30 terms vanish in fp32): the same c. So the
    # stated rule makes the two tie and position 0 wins; a once-rounded sum would pick position 1.
    x = np.full((2, 128), -30.0)
    x[0, :] = -2.5
    x[0, 0] = 0.0
    x[1, :11] = 0.0
    x[1, 11:14] = float(R._bf16_round(np.log(0.125)))
    w = float(R._bf16_round(np.exp(-2.5)))
    chunked = R._bf16_round(np.float32(R._bf16_round(np.float32(1 + 63 * w))) + np.float32(64 * w))
    assert chunked == 11.375 and R._bf16_round(1 + 127 * w) == 11.4375
    assert R._bf16_round(np.exp(R._bf16_round(np.log(0.125)))) == 0.125
    tokens, _ = golden(x, [1.0, 1.0], 1)
    assert tokens == [0.0, -1.0]


# ---- the kernels on the base ISA ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def plena():
    return isadl.load(REPO / "targets" / "plena.isa")


@pytest.fixture(scope="module")
def task():
    return taskspec.find("dllm_sampling")


@pytest.fixture(scope="module")
def base_cycles(plena, task):
    """Cycles of the base-ISA reference kernel per configuration (checked correct)."""
    out = {}
    for config in taskspec.CONFIGS:
        lay = layout_for(plena, task, "plena", config)
        k = kernels.find("reference", plena, task, "plena", config, lay)
        r = evaluate(k.text, plena, task, "plena", config, trials=2, seed=SEED, layout=lay, path=str(k.origin))
        out[config] = r
    return out


def test_base_reference_is_correct_at_every_config(base_cycles):
    problems = [f"{c}: {r.summary()[:300]}" for c, r in base_cycles.items() if not r.correct]
    assert not problems, "\n".join(problems)


def test_baseline_is_correct_and_not_faster_than_the_reference(plena, task, base_cycles):
    problems = []
    for config in taskspec.CONFIGS:
        lay = layout_for(plena, task, "plena", config)
        k = kernels.find("baseline", plena, task, "plena", config, lay)
        assert k is not None and k.origin.name == "dllm_sampling.py"
        r = evaluate(k.text, plena, task, "plena", config, trials=2, seed=SEED, layout=lay, path=str(k.origin))
        if not r.correct:
            problems.append(f"{config}: {r.summary()[:300]}")
        elif r.cycles < base_cycles[config].cycles:
            problems.append(f"{config}: baseline {r.cycles} cycles < reference {base_cycles[config].cycles}")
    assert not problems, "\n".join(problems)


# ---- the reference extension ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def extended(tmp_path_factory):
    """extension.isa proposed as an agent would: validated and wrapped as plena_dllm extends plena."""
    work = tmp_path_factory.mktemp("codesign")
    verdict = codesign.propose(REPO / "targets" / "plena.isa", (EXT / "extension.isa").read_text(), work, tag="dllm")
    assert verdict.accepted, verdict.message()
    assert verdict.mnemonics == ["V_RED_ARGMAX"] and verdict.name == "plena_dllm"
    return isadl.load(verdict.overlay), verdict


def test_extension_is_an_overlay_with_an_honest_cost(extended):
    spec, verdict = extended
    insn = spec.instructions["V_RED_ARGMAX"]
    cycles = int(spec.params_eval(insn.insn.cycles))
    vlen = spec.params["VLEN"]
    # at least a one-cycle pass over the VLEN lanes plus a log-depth tree, and the validator's floor
    assert cycles >= 1 + int(np.log2(vlen)) and cycles >= verdict.floors["V_RED_ARGMAX"]
    assert cycles > int(spec.params_eval(spec.instructions["V_RED_MAX"].insn.cycles))
    assert "V_RED_ARGMAX" not in isadl.load(REPO / "targets" / "plena.isa").instructions
    assert not (EXT / "extension.isa").read_text().lstrip().startswith("isa ")


@pytest.mark.parametrize("machine", ["ref", "c"])
def test_extension_examples_pass(extended, machine):
    from kcgen.sim.examples import examples, run_example
    from kcgen.sim.pyref import RefMachine
    from kcgen.sim.simulator import Simulator
    spec, _ = extended
    cases = [c for c in examples(spec) if c.name == "V_RED_ARGMAX"]
    assert len(cases) >= 3
    for case in cases:
        result = run_example(spec, case, RefMachine if machine == "ref" else Simulator)
        assert result.ok, result.message()


def test_extension_kernel_is_correct_and_faster_than_the_base_reference(extended, task, base_cycles):
    spec, _ = extended
    gen = load_module(EXT / "kernel.py")
    problems = []
    for config in taskspec.CONFIGS:
        lay = layout_for(spec, task, "plena", config)
        text = gen.generate(task, task.config("plena", config), lay, spec)
        assert "V_RED_ARGMAX" in text
        r = evaluate(text, spec, task, "plena", config, trials=2, seed=SEED, layout=lay)
        if not r.correct:
            problems.append(f"{config}: {r.summary()[:300]}")
        elif not r.cycles < base_cycles[config].cycles:
            problems.append(f"{config}: extended {r.cycles} cycles, base reference {base_cycles[config].cycles}")
    assert not problems, "\n".join(problems)


def test_extension_kernel_needs_the_overlay(plena, task):
    gen = load_module(EXT / "kernel.py")
    lay = layout_for(plena, task, "plena", "C1")
    with pytest.raises(ValueError, match="V_RED_ARGMAX"):
        gen.generate(task, task.config("plena", "C1"), lay, plena)


def test_readme_states_the_measured_cycles(extended, task, base_cycles):
    text = (EXT / "README.md").read_text()
    for config, r in base_cycles.items():
        assert f"| {config} |" in text and str(r.cycles) in text, config
