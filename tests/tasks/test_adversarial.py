"""Kernels that try to buy a success without doing the work, on the RISC-V targets (coral, boom):
each must fail on default settings (every value profile, OS seeds) with the right diagnosis.
PLENA and amdnpu have theirs in test_adversarial_plena_amdnpu.py."""
from __future__ import annotations

import numpy as np
import pytest

import isadl
from kcgen import taskspec
from kcgen.evaluation import _assembler, _simulator, draw, evaluate, layout_for, start_trial

TARGETS = ("coral", "boom")
SPECS = {t: isadl.load(isadl.find_target(t)) for t in TARGETS}
RELU = taskspec.find("relu")


def relu_loop(before: str = "", body: str = "", after: str = "") -> str:
    """A correct f32 relu (a0 = x, a1 = y, a2 = N) with code spliced in before, inside and after its loop."""
    return f"""
        .text
        .globl relu
relu:   fmv.w.x ft1, zero
        mv      t3, a0          # keep the tensors' bases for the cheats below
        mv      t4, a1
{before}
1:      flw     ft0, 0(a0)
        fmax.s  ft0, ft0, ft1
        fsw     ft0, 0(a1)
{body}
        addi    a0, a0, 4
        addi    a1, a1, 4
        addi    a2, a2, -1
        bnez    a2, 1b
{after}
        ret
"""


def run(target: str, kernel: str, config: str = "C1", **kw):
    spec = SPECS[target]
    return evaluate(kernel, spec, RELU, target, config, **kw)


@pytest.mark.parametrize("target", TARGETS)
def test_the_honest_kernel_passes(target):
    r = run(target, relu_loop())
    assert r.correct, r.summary()
    assert r.profiles == list(taskspec.PROFILES) and len(set(r.seeds)) == len(r.seeds)


@pytest.mark.parametrize("target", TARGETS)
def test_constant_outputs_fail(target):
    """y = 0.5 everywhere, whatever x is."""
    k = relu_loop(before="        li t0, 0x3f000000\n        fmv.w.x ft2, t0",
                  body="        fsw     ft2, 0(a1)")
    r = run(target, k)
    assert not r.correct and r.match_rate < 0.5 and r.violation is None


@pytest.mark.parametrize("target", TARGETS)
def test_clobbered_input_fails(target):
    """Right outputs, but x is zeroed on the way."""
    r = run(target, relu_loop(body="        sw      zero, 0(a0)"))
    assert not r.correct and r.match_rate == 1.0
    assert "memory integrity" in r.violation and "(input x)" in r.violation
    # the diagnosis names the first byte that changed: the first nonzero byte of x in that trial (x[0]'s
    # first byte unless it already was 0 -- 1 in 256 for coral's random f32, seen in CI -- or x[0] was 0.0)
    changed = int(r.violation.split(" from ")[1].split()[0], 16)
    x = layout_for(SPECS[target], RELU, target, "C1").placements["x"]
    assert x.address <= changed < x.address + 4 * 256, (hex(changed), hex(x.address))


@pytest.mark.parametrize("target", TARGETS)
def test_write_past_the_output_fails(target):
    """Right outputs, then 1 KiB of junk after y (as a full-width vector store past N would)."""
    tail = "        li t1, 256\n2:      sw t3, 0(a1)\n        addi a1, a1, 4\n        addi t1, t1, -1\n        bnez t1, 2b"
    r = run(target, relu_loop(after=tail))
    assert not r.correct and r.match_rate == 1.0
    assert "past the end of output y" in r.violation, r.violation


@pytest.mark.parametrize("target", TARGETS)
def test_right_only_for_small_values_fails(target):
    """relu that gives 0 for every x > 8: passes the normal, uniform, small profiles."""
    k = relu_loop(before="        li t0, 0x41000000\n        fmv.w.x ft3, t0",
                  body="        flt.s   t5, ft3, ft0\n        beqz    t5, 3f\n        fsw     ft1, 0(a1)\n3:")
    r = run(target, k, "C5")
    assert not r.correct and r.violation is None
    assert 0.9 < r.match_rate < 1.0  # wrong on the large and extreme values only


@pytest.mark.parametrize("target", TARGETS)
def test_a_lookup_table_for_one_seed_fails_on_fresh_seeds(target):
    """The outputs for seed 12345's first trial, stored in .data and copied out."""
    spec, seed = SPECS[target], 12345
    lay = layout_for(spec, RELU, target, "C1")
    n = RELU.config(target, "C1")["N"]
    x = draw(np.random.default_rng(seed), "normal", (n,), np.dtype(np.float32))
    table = np.maximum(x, 0).view(np.uint32)
    words = "\n".join(f"        .word {int(w)}" for w in table)
    k = f"""
        .text
relu:   la      t0, table
1:      lw      t1, 0(t0)
        sw      t1, 0(a1)
        addi    t0, t0, 4
        addi    a1, a1, 4
        addi    a2, a2, -1
        bnez    a2, 1b
        ret
        .data
table:
{words}
"""
    assert run(target, k, trials=1, seed=seed, layout=lay).correct  # the table is right for its seed
    r = run(target, k)
    assert not r.correct and r.match_rate < 0.6


@pytest.mark.parametrize("target", TARGETS)
def test_an_immediate_return_fails(target):
    r = run(target, "        .text\nrelu:   ret\n")
    assert not r.correct and r.match_rate == 0.0 and r.trap is None


@pytest.mark.parametrize("target", TARGETS)
def test_outputs_left_by_a_previous_evaluation_do_not_count(target):
    """The same simulator ran the honest kernel just before: its outputs must not survive."""
    assert run(target, relu_loop()).correct
    r = run(target, "        .text\nrelu:   ret\n")
    assert not r.correct and r.match_rate == 0.0


@pytest.mark.parametrize("target", TARGETS)
def test_self_modifying_code_fails(target):
    """Overwrites its own first instruction (the simulator runs pre-decoded code, so only the
    integrity check can see it)."""
    r = run(target, relu_loop(before="        la t0, relu\n        sw zero, 0(t0)"))
    assert not r.correct and "the program's .text section" in r.violation


@pytest.mark.parametrize("target", TARGETS)
def test_writing_its_own_data_is_allowed(target):
    k = relu_loop(before="        la t0, buf\n        sw t3, 0(t0)") + "        .data\nbuf:    .word 0\n"
    assert run(target, k).correct


@pytest.mark.parametrize("target", TARGETS)
def test_the_stack_is_scratch(target):
    store = "sd" if target == "boom" else "sw"
    k = relu_loop(before=f"        addi sp, sp, -64\n        {store} t3, 0(sp)\n        {store} t3, 56(sp)",
                  after="        addi sp, sp, 64")
    assert run(target, k).correct


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("reg", ["s0", "s11", "sp", "gp", "tp"])
def test_a_changed_callee_saved_register_fails(target, reg):
    r = run(target, relu_loop(before=f"        addi {reg}, {reg}, 16"))
    assert not r.correct and r.match_rate == 1.0
    assert f"with {reg} changed" in r.violation, r.violation


def test_boom_fs_registers_are_callee_saved():
    r = run("boom", relu_loop(before="        fmv.s fs3, ft1\n        fadd.s fs3, fs3, fs3\n        li t0, 1\n"
                                     "        fcvt.s.w fs3, t0"))
    assert not r.correct and "with fs3 changed" in r.violation


def test_coral_fs_registers_are_caller_saved_under_ilp32():
    """coral's kernels are ilp32 (integer calling convention) functions: as in GCC and LLVM for that
    ABI, no f register is callee-saved."""
    assert run("coral", relu_loop(before="        li t0, 1\n        fcvt.s.w fs3, t0")).correct


@pytest.mark.parametrize("target", TARGETS)
def test_saving_and_restoring_a_callee_saved_register_passes(target):
    store, load = ("sd", "ld") if target == "boom" else ("sw", "lw")
    k = relu_loop(before=f"        addi sp, sp, -16\n        {store} s1, 0(sp)\n        li s1, 77",
                  after=f"        {load} s1, 0(sp)\n        addi sp, sp, 16")
    assert run(target, k).correct


@pytest.mark.parametrize("target", TARGETS)
def test_a_huge_space_directive_is_an_assembler_error(target):
    r = run(target, relu_loop() + "        .data\nbuf:    .space 2000000000\n")
    assert not r.correct and r.error and "error" in r.error


@pytest.mark.parametrize("target", TARGETS)
def test_a_kernel_that_spins_is_stopped_by_the_wall_clock(target):
    """A step budget too large to matter: the evaluation's wall-clock limit ends it."""
    r = run(target, "        .text\nrelu:   j relu\n", max_steps=10**15, seconds=0.5)
    assert not r.correct and "wall-clock limit" in r.trap


@pytest.mark.parametrize("target", TARGETS)
def test_clearing_a_callee_saved_register_is_not_preserving_it(target):
    """Callee-saved registers start random: one used as a temporary and zeroed before the return fails."""
    r = run(target, relu_loop(after="        li s4, 0\n        mv gp, zero"))
    assert not r.correct and "changed" in r.violation
