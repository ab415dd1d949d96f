"""Task specs: every shipped spec loads; every file of the negative corpus (tests/tasks/bad/) is
rejected with exactly the located error it announces in its `# expect: LINE:COL: message` line."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from kcgen import taskspec
from kcgen.paths import TASKS

HERE = Path(__file__).resolve().parent
BAD = sorted((HERE / "bad").glob("*.yaml"))
ROOT = HERE.parents[1]


def test_every_shipped_task_loads():
    specs = taskspec.all_tasks()
    level1 = {s.name for s in specs if s.level == 1}
    assert level1 == {"silu", "relu", "gelu", "softmax", "layer_norm", "rms_norm", "gemv", "gemm",
                      "batch_matmul", "linear", "conv2d", "depthwise_conv"}
    for s in specs:
        assert set(s.configs) == set(taskspec.CONFIGS)
        sizes = [sum(int(__import__("numpy").prod(s.shape(t, s.configs[c]))) for t in s.tensors)
                 for c in taskspec.CONFIGS]
        assert sizes == sorted(sizes) and sizes[0] < sizes[-1], f"{s.name}: configurations must grow"


def test_targets_per_task_follow_the_published_table():
    by = {s.name: set(s.targets) for s in taskspec.all_tasks()}
    every = {"plena", "amdnpu", "coral", "boom"}
    level1 = {s.name for s in taskspec.all_tasks() if s.level == 1}
    for conv in ("conv2d", "depthwise_conv"):
        assert by[conv] == {"amdnpu", "coral", "boom"}  # plena has no convolutions
    assert all(by[k] == every for k in level1 if "conv" not in k)
    # Level 2: plena all eight; amdnpu all but flash_attention; coral and boom ffn and swiglu
    level2 = {"rope", "ffn", "swiglu", "scaled_dot_product", "flash_attention", "mha", "gqa", "mqa"}
    # and the co-design case (#9): PLENA's dLLM sampling step
    assert {s.name for s in taskspec.all_tasks() if s.level == 2} == level2 | {"dllm_sampling"}
    assert by["dllm_sampling"] == {"plena"}
    for name in level2:
        want = {"plena"} | ({"amdnpu"} if name != "flash_attention" else set()) | \
            ({"coral", "boom"} if name in ("ffn", "swiglu") else set())
        assert by[name] == want, name
    # Level 3: the decoder blocks on plena and amdnpu, conv_block on amdnpu, coral and boom
    assert {s.name: by[s.name] for s in taskspec.all_tasks() if s.level == 3} == {
        "decoder_block_llama": {"plena", "amdnpu"}, "decoder_block_t5": {"plena", "amdnpu"},
        "conv_block": {"amdnpu", "coral", "boom"}}
    assert len(by) == 23 + 1


def test_references_agree_with_hand_computed_values():
    import numpy as np
    ref = taskspec._references()
    x = np.array([-2.0, 0.0, 3.0])
    assert ref["relu"](x)["y"].tolist() == [0.0, 0.0, 3.0]
    assert ref["silu"](np.array([0.0]))["y"].tolist() == [0.0]
    a, b = np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([[5.0], [6.0]])
    assert ref["gemm"](a, b)["c"].tolist() == [[17.0], [39.0]]
    assert ref["linear"](a, np.array([[1.0, 1.0]]), np.array([0.5]))["y"].tolist() == [[3.5], [7.5]]
    x = np.arange(16.0).reshape(1, 4, 4)
    w = np.ones((1, 1, 3, 3))
    assert ref["conv2d"](x, w)["y"].tolist() == [[[45.0, 54.0], [81.0, 90.0]]]
    assert ref["depthwise_conv"](x, np.ones((1, 3, 3)))["y"].tolist() == [[[45.0, 54.0], [81.0, 90.0]]]
    s = ref["softmax"](np.array([[0.0, 0.0]]))["y"]
    assert s.tolist() == [[0.5, 0.5]]


@pytest.mark.parametrize("path", BAD, ids=lambda p: p.stem)
def test_bad_spec_is_rejected_with_a_located_error(path):
    text = path.read_text()
    expect = re.match(r"# expect: (\d+):(\d+): (.*)", text.splitlines()[0])
    assert expect, f"{path.name} needs a first line '# expect: LINE:COL: message'"
    with pytest.raises(taskspec.TaskError) as info:
        taskspec.load(path)
    first = info.value.diagnostics[0]
    assert (first.loc.line, first.loc.column, first.message) == (int(expect[1]), int(expect[2]), expect[3])
    assert str(info.value).startswith(f"{path}:{expect[1]}:{expect[2]}: error: ")


def test_negative_corpus_is_large_and_distinct():
    messages = {p.read_text().splitlines()[0] for p in BAD}
    assert len(BAD) >= 20 and len(messages) == len(BAD)


def test_cli_tasks_lists_shapes_per_config():
    done = subprocess.run([sys.executable, "-m", "kcgen.cli", "tasks", "--target", "plena", "--level", "1"],
                          capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert "gemm" in done.stdout and "conv2d" not in done.stdout
    assert "a[128, 128]" in done.stdout  # C5 shapes shown


def test_tolerance_judges_a_cancelled_sum_by_the_outputs_magnitude():
    tol = taskspec.Tolerance(atol=1e-5, rtol=1e-4)
    want = np.array([1000.0, -800.0, 1e-3, 500.0])  # 1e-3: a sum of large terms that cancelled
    got = want + np.array([0.05, -0.05, 0.05, 0.0])  # f32 rounding of the terms, not of the result
    assert tol.ok(got, want).all()
    got[0] += 1.0  # a real error in a large element is still one
    assert tol.ok(got, want).tolist() == [False, True, True, True]


def test_tolerance_accepts_nan_only_where_the_reference_is_nan():
    tol = taskspec.Tolerance(atol=0, rtol=0)
    want = np.array([np.nan, 1.0])
    assert tol.ok(np.array([np.nan, 1.0]), want).all()
    assert tol.ok(np.array([np.nan, np.nan]), want).tolist() == [True, False]
