"""`kcgen tasks --show` and `kcgen eval`'s argument rules (the evaluations themselves are tested
in test_evaluation.py and the kernel tests)."""
from __future__ import annotations

import isadl
from click.testing import CliRunner

from kcgen import taskspec
from kcgen.cli import main
from kcgen.evaluation import layout_for
from kcgen.paths import REPO


def run(*args):
    return CliRunner().invoke(main, list(args))


def test_show_prints_the_statement_built_from_the_evaluators_layout():
    out = run("tasks", "--show", "linear", "--target", "boom", "--config", "C3")
    assert out.exit_code == 0, out.output
    spec = isadl.load(REPO / "targets" / "boom.isa")
    task = taskspec.find("linear")
    lay = layout_for(spec, task, "boom", "C3")
    assert lay.prompt() in out.output  # the agent reads exactly what the evaluator will do
    assert "M = 16, K = 128, N = 128" in out.output and task.description.strip() in out.output


def test_show_needs_a_target_of_the_task():
    out = run("tasks", "--show", "conv2d", "--target", "plena")
    assert out.exit_code == 1 and "conv2d applies to amdnpu, coral, boom" in out.output


def test_eval_argument_rules():
    assert "give TASK" in run("eval", "boom").output
    both = run("eval", "boom", "relu", "k.s", "--baseline")
    assert both.exit_code == 2 and "exactly one of KERNEL.s, --baseline and --reference" in both.output
    assert run("eval", "boom", "relu").exit_code == 2
    assert "--all takes no TASK" in run("eval", "boom", "relu", "--all").output


def test_listing_and_statement_give_every_requant_shift():
    shipped = [(t, tg, o.name) for t in taskspec.all_tasks() for tg in t.targets for o in t.outputs
               if t.requant_shift(tg, o.name, t.config(tg, "C1")) is not None]
    assert shipped, "no shipped task requantises an output"
    for task, target, out in shipped:
        listing = run("tasks", "--target", target, "--level", str(task.level)).output
        for c in taskspec.CONFIGS:
            shift = task.requant_shift(target, out, task.config(target, c))
            assert f"(requantised >> {shift})" in listing.split(f"L{task.level} {task.name} ")[1].split("\nL")[0]
        show = run("tasks", "--show", task.name, "--target", target, "--config", "C3").output
        shift = task.requant_shift(target, out, task.config(target, "C3"))
        assert f"{out} = clamp((acc + {1 << shift >> 1}) >> {shift}, -128, 127)" in show
