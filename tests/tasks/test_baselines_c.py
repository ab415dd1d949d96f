"""The compiler baselines of coral and boom (tasks/kernels/baseline/{coral,boom}/*.s): clang-19 -O2
output of tasks/kernels/baseline/c/*.c, committed. They are what clang-19 gives today (regenerated
byte for byte when clang-19 is installed), they assemble as they are, and every one of them is
correct at every configuration: the evidence that each coral and boom item is solvable."""
from __future__ import annotations

import re
import shutil
import subprocess

import pytest

import isadl
from kcgen import kernels, taskspec
from kcgen.asm import Assembler
from kcgen.evaluation import evaluate
from kcgen.paths import TARGETS, TASKS, load_module

BASE = TASKS / "kernels" / "baseline"
compile_c = load_module(BASE / "compile_c.py")
CONFIGS = ("C1", "C2", "C3", "C4", "C5")
ITEMS = [(task.name, target) for task in taskspec.all_tasks() if task.level == 1
         for target in compile_c.TARGETS if target in task.targets]
_SPECS: dict = {}


def spec(target: str):
    if target not in _SPECS:
        _SPECS[target] = isadl.load(TARGETS / f"{target}.isa")
    return _SPECS[target]


def committed(target: str, task: str) -> str:
    return (BASE / target / f"{task}.s").read_text(encoding="utf-8")


def test_every_item_has_a_c_kernel_and_a_committed_baseline():
    assert len(ITEMS) == 24
    for task, target in ITEMS:
        assert (BASE / "c" / f"{task}.c").exists(), task
        text = committed(target, task)
        assert text.startswith(f"# {compile_c.GENERATED}\n# compiler: "), (target, task)
        assert re.search(r"^# command \(in tasks/kernels/baseline/c\): clang-19 .* -S " + task + r"\.c -o -$",
                         text, re.M), (target, task)
    on_disk = {(p.stem, p.parent.name) for t in compile_c.TARGETS for p in (BASE / t).glob("*.s")}
    assert on_disk == set(ITEMS), "a committed .s without a task, or stale"


def test_regenerated_output_is_byte_identical(tmp_path):
    clang = shutil.which(compile_c.CLANG)
    if clang is None:
        pytest.skip("clang-19 is not on PATH: the committed baselines cannot be regenerated here")
    version = subprocess.run([clang, "--version"], capture_output=True, text=True).stdout.splitlines()[0].strip()
    header = committed(*ITEMS[0][::-1]).splitlines()[1]
    if header != f"# compiler: {version}":
        pytest.skip(f"a different clang-19 build ({version!r}, files made by {header[12:]!r}): "
                    "its output may legitimately differ")
    files = compile_c.generate(tmp_path, check_asm=False)
    assert len(files) == len(ITEMS)
    for path, text in files.items():
        target, task = path.parent.name, path.stem
        assert text == committed(target, task), \
            f"{target}/{task}.s is stale: run .venv/bin/python tasks/kernels/baseline/compile_c.py"


@pytest.mark.parametrize("target", compile_c.TARGETS)
def test_committed_baselines_assemble_with_kernel_first(target):
    asm = Assembler(spec(target))
    for task, t in ITEMS:
        if t != target:
            continue
        program = asm.assemble(committed(target, task), f"{target}/{task}.s")
        assert program.symbols["kernel"] == program.text.base == program.entry, task
        # freestanding: every symbol the code names is defined in the file (no libc / libm calls)
        assert not re.search(r"^\s*(call|tail)\s", committed(target, task), re.M), task


@pytest.mark.parametrize("task,target", ITEMS)
def test_baseline_is_correct_at_every_config(task, target):
    t = taskspec.find(task)
    failures = []
    for config in CONFIGS:
        k = kernels.find("baseline", spec(target), t, target, config)
        assert k is not None and k.origin == BASE / target / f"{task}.s"
        r = evaluate(k.text, spec(target), t, target, config, trials=2, seed=11)
        if not r.correct:
            failures.append(f"{config}: {r.summary()}")
    assert not failures, "\n".join(failures)
