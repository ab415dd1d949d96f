"""The adversarial suite for PLENA and amdnpu (issue #17 item 7; coral and boom are in test_adversarial.py).

One kernel per known way to buy a success without solving the task, each evaluated on the default settings
(every value profile, a seed from the OS) and each required to fail with the right diagnosis: a mismatch for
wrong numbers, `violation` naming the place for a breach of memory or ABI integrity, `error` with file:line for
an image the assembler must refuse. Every integrity test also asserts that the cheat's outputs are right, so the
integrity check alone is what fails it; two controls show that the writes the statement allows still pass.

Where a hack does not apply: PLENA has no program memory (no self-modifying code), no data directives and no
preserved registers; at level 1 all of its vector SRAM outside the outputs is scratch, so "past the output"
is a store into HBM, which is not scratch at level 1.
"""
from __future__ import annotations

import dataclasses
import functools
import json
import re
import subprocess
import sys

import ml_dtypes
import numpy as np
import pytest

import isadl
from kcgen import kernels, taskspec
from kcgen.evaluation import evaluate, layout_for, statement
from kcgen.paths import REPO


@functools.lru_cache(maxsize=None)
def isa(target: str):
    return isadl.load(REPO / "targets" / f"{target}.isa")


def run(kernel: str, target: str, task: str, config: str = "C1", **kw):
    """The default evaluation (trials=None, seed=None) unless a test says otherwise."""
    t = kw.pop("task_spec", None) or taskspec.find(task)
    return evaluate(kernel, isa(target), t, target, config, **kw)


def shipped(kind: str, target: str, task: str, config: str = "C1") -> str:
    spec, t = isa(target), taskspec.find(task)
    return kernels.find(kind, spec, t, target, config, layout_for(spec, t, target, config)).text


def only(task: str, *profiles: str):
    """The task with its trials drawn from `profiles` alone (to show what a cheat gets right)."""
    return dataclasses.replace(taskspec.find(task), profiles=profiles)


def assert_mismatch(r):
    """Failed on the numbers alone: no trap, no error, no integrity breach."""
    assert not r.correct, r.summary()
    assert r.error is None and r.trap is None and r.violation is None, r.summary()
    assert r.match_rate < 1.0, r.summary()


def assert_violation(r, *words):
    """Failed on integrity alone: the outputs are right and the diagnosis names `words`."""
    assert not r.correct, r.summary()
    assert r.error is None and r.trap is None, r.summary()
    assert r.match_rate == 1.0, "the cheat should compute the right outputs: " + r.summary()
    assert r.violation is not None, r.summary()
    for w in words:
        assert w in r.violation, f"{w!r} not in the diagnosis: {r.violation}"


def assert_halted_early(r):
    """Nothing written: every output element is still poison."""
    assert not r.correct and r.match_rate == 0.0, r.summary()
    assert r.error is None and r.trap is None and r.violation is None, r.summary()


# ---- amdnpu kernels ---------------------------------------------------------------------------------------
# relu C1: x = bf16[256] at dm 0x4000 (p0), y = bf16[256] at dm 0x9000 (p1), scratch dm[0xf000..0x10000),
# program image dm[0..0x4000). vmax_lt writes its comparison mask into r16, which the ABI preserves: the
# honest kernel keeps the caller's r16 in r28 (not preserved) and puts it back before `done`. Nothing waits
# for a result on amdnpu (an exposed pipeline): the kernels leave a load 7 cycles before its first reader.
ONES = ("ones:\n    .short " + ", ".join(["16256"] * 16) + "\n")  # 16 x bf16 1.0: a store that surely changes memory
LANDS = "    nop                        // the load lands 7 cycles after it issues\n" * 6


def relu(before_done: str = "", data: str = "", keep_r16: bool = True) -> str:
    """The honest amdnpu relu C1 kernel, with `before_done` (the cheat) run after the results are stored and
    `data` (labels in .data, 32-byte aligned) appended."""
    return (".text\n"
            + ("    mov r28, r16               // r16 is callee-saved and vmax_lt overwrites it\n" if keep_r16 else "")
            + "    movxm p0, #16384           // x\n"
              "    movxm p1, #36864           // y\n"
              "    vsub.16 x11, x11, x11      // zeros\n"
              "    movxm r1, #8               // 8 x 32 elements\n"
              "loop:\n"
              "    vlda wl0, [p0], #32\n"
              "    vlda wh0, [p0], #32\n"
            + LANDS
            + "    vmax_lt.bf16 x4, r16, x0, x11\n"
              "    nop                        // vmax_lt's result lands 2 cycles after it issues\n"
              "    vst wl4, [p1], #32\n"
              "    vst wh4, [p1], #32\n"
              "    add r1, r1, #-1\n"
              "    jnz r1, #loop\n"
              + "    nop                        // the jump's 5 delay slots\n" * 5
            + before_done
            + ("    mov r16, r28\n" if keep_r16 else "")
            + "    done\n"
            + (".data\n    .p2align 5\n" + data if data else ""))


def test_amdnpu_honest_relu_passes_and_allowed_writes_pass():
    """Control: the base kernel is correct, and stores into its own .data and the ABI's scratch are allowed."""
    assert run(relu(), "amdnpu", "relu").correct
    allowed = relu("    movxm p2, #buf             // own .data: writable\n"
                   "    vst wl4, [p2, #0]\n"
                   "    movxm p2, #0xf000          // the ABI's scratch region tmp\n"
                   "    vst wh4, [p2, #0]\n",
                   "buf:\n    .short " + ", ".join(["0"] * 16) + "\n")
    r = run(allowed, "amdnpu", "relu")
    assert r.correct, r.summary()


def test_amdnpu_constant_softmax_fails_every_time():
    """Cheat: ignore x and write 1/N = 1/64 (bf16 0x3c80) into every element of y[4, 64]."""
    kernel = (".text\n"
              "    movxm p1, #36864\n"
              "    movxm p2, #inv64\n"
              "    vlda wl0, [p2, #0]\n"
              + LANDS +
              "    movxm r1, #16              // 16 stores of 16 elements = y\n"
              "loop:\n"
              "    vst wl0, [p1], #32\n"
              "    add r1, r1, #-1\n"
              "    jnz r1, #loop\n"
              + "    nop                        // the jump's 5 delay slots\n" * 5
              + "    done\n"
              ".data\n    .p2align 5\ninv64:\n    .short " + ", ".join(["15488"] * 16) + "\n")
    for _ in range(5):
        r = run(kernel, "amdnpu", "softmax")
        assert_mismatch(r)
        assert np.all(r.outputs["y"].kernel == 1 / 64), "the kernel should write 1/64 everywhere"


def test_amdnpu_clobbered_input_is_a_violation():
    """Cheat: the right y, then 32 bytes of 1.0 over x[0..16)."""
    kernel = relu("    movxm p2, #ones\n"
                  "    vlda wl5, [p2, #0]\n"
                  "    movxm p2, #16384           // x\n"
                  + LANDS +
                  "    vst wl5, [p2, #0]\n", ONES)
    assert_violation(run(kernel, "amdnpu", "relu"), "memory integrity", "dm", "0x4000", "input x")


def test_amdnpu_vector_store_past_the_output_is_a_violation():
    """Cheat: the right y, then one vector store right after y (p1 ends at 0x9200)."""
    kernel = relu("    movxm p2, #ones\n"
                  "    vlda wl5, [p2, #0]\n"
                  + LANDS +
                  "    vst wl5, [p1, #0]          // y + 512 bytes\n", ONES)
    assert_violation(run(kernel, "amdnpu", "relu"), "memory integrity", "dm", "0x9200",
                     "0 bytes past the end of output y")


@pytest.mark.parametrize("address,where", [(0x1F00, "outside every region the ABI declares"),
                                           (0x10000, "dm")], ids=["image-area", "neighbours"])
def test_amdnpu_stray_stores_elsewhere_are_violations(address, where):
    """Cheat: the right y, then a store into the unused program-image area or a neighbour's memory."""
    kernel = relu("    movxm p2, #ones\n"
                  "    vlda wl5, [p2, #0]\n"
                  f"    movxm p2, #{address}\n"
                  + LANDS +
                  "    vst wl5, [p2, #0]\n", ONES)
    assert_violation(run(kernel, "amdnpu", "relu"), "memory integrity", hex(address), where)


def test_amdnpu_self_modifying_code_is_a_violation():
    """Cheat: the right y, then a store over the first word of the program's own .text (dm 0x0)."""
    kernel = relu("    movxm p2, #0               // the program image starts at dm 0\n"
                  "    movxm r2, #-1\n"
                  "    st r2, [p2, #0]\n")
    assert_violation(run(kernel, "amdnpu", "relu"), "memory integrity", "0x0", "the program's .text section")


def _preserved():
    regs = [name for name, _, _ in isa("amdnpu").preserved_registers()]
    assert regs, "amdnpu's ABI declares its callee-saved registers (targets/amdnpu.isa abi preserve)"
    return regs


def test_amdnpu_changed_preserved_register_is_a_violation():
    """Cheat: the right y, and p7 (callee-saved) left changed at `done`."""
    assert "p7" in _preserved()
    kernel = relu("    movxm p7, #4660\n")
    assert_violation(run(kernel, "amdnpu", "relu"), "p7", "preserves")


def test_amdnpu_implicitly_clobbered_r16_is_a_violation():
    """The same relu without saving r16: vmax_lt leaves its comparison mask in r16 (callee-saved)."""
    assert "r16" in _preserved()
    assert_violation(run(relu(keep_r16=False), "amdnpu", "relu"), "r16", "preserves")


def test_amdnpu_relu_clipped_at_8_passes_typical_values_only():
    """Partial work: y = min(max(x, 0), 8), right while every x < 8 (the old three-profile default)."""
    kernel = relu(data="eights:\n    .short " + ", ".join(["16640"] * 16) + "\n").replace(  # bf16 8.0
        "    vsub.16 x11, x11, x11      // zeros\n",
        "    vsub.16 x11, x11, x11      // zeros\n"
        "    movxm p2, #eights\n"
        "    vlda wl10, [p2, #0]\n"
        "    vlda wh10, [p2, #0]\n").replace(
        "    vmax_lt.bf16 x4, r16, x0, x11\n",
        "    vmax_lt.bf16 x4, r16, x0, x11\n"
        "    vmin_ge.bf16 x4, r16, x4, x10  // the cheat: clip at 8\n")
    assert run(kernel, "amdnpu", "relu", task_spec=only("relu", "normal", "uniform", "small")).correct
    r = run(kernel, "amdnpu", "relu")
    assert_mismatch(r)
    y = r.outputs["y"]
    assert np.all(y.reference[~y.ok] > 8), "only the elements above 8 should be wrong"


def preserving(text: str) -> str:
    """`text` (an amdnpu kernel with one `done`) wrapped to keep the callee-saved registers it names, and
    r16 that vmax_lt writes, in spare unpreserved registers (shipped kernels may predate the preserve list)."""
    keep = sorted(set(re.findall(r"\b(r1[6-9]|r2[0-3]|p6|p7)\b", text)) | {"r16"})
    spare = [r for r in ("r26", "r27", "r28", "r29", "r30", "r31") if not re.search(rf"\b{r}\b", text)]
    assert len(spare) >= len(keep) and text.count("    done\n") == 1 and text.startswith(".text\n")
    save = "".join(f"    mov {s}, {k}\n" for k, s in zip(keep, spare))
    restore = "".join(f"    mov {k}, {s}\n" for k, s in zip(keep, spare))
    return text.replace(".text\n", ".text\n" + save, 1).replace("    done\n", restore + "    done\n")


def test_amdnpu_softmax_without_the_max_subtraction_fails():
    """Partial work: the shipped baseline computes d = x - max with one fp32 matrix product against t_sub
    (1.0 for x, -1.0 = bf16 49024 for the max); zeroing the -1.0s leaves d = x, and its exp (a
    piecewise-linear fit on [-16, 0]) goes on linearly past 0: right while x stays near 0 (the small
    profile), wrong on the default profiles."""
    base = preserving(shipped("baseline", "amdnpu", "softmax"))
    m = re.search(r"^t_sub:\n((?:    \..*\n)+)", base, re.M)
    assert m and "49024" in m.group(1), "the baseline's t_sub table changed: rebuild this cheat"
    cheat = base[:m.start(1)] + m.group(1).replace("49024", "0") + base[m.end(1):]
    assert run(base, "amdnpu", "softmax").correct, "control: the wrapped baseline itself must pass"
    assert run(cheat, "amdnpu", "softmax", task_spec=only("softmax", "small")).correct
    assert_mismatch(run(cheat, "amdnpu", "softmax"))


def test_amdnpu_lookup_table_for_one_seed_fails_on_fresh_seeds():
    """Cheat: y copied from a table that holds relu(x) for the inputs of seed 1234's first trial."""
    seed = 1234
    probe = run(".text\n    done\n", "amdnpu", "relu", trials=1, seed=seed)
    want = np.asarray(probe.outputs["y"].reference, dtype=ml_dtypes.bfloat16).view(np.uint16)
    rows = "".join("    .short " + ", ".join(str(int(v)) for v in want[i:i + 16]) + "\n" for i in range(0, 256, 16))
    kernel = (".text\n"
              "    movxm p1, #36864\n"
              "    movxm p2, #table\n"
              "    movxm r1, #8\n"
              "loop:\n"
              "    vlda wl0, [p2], #32\n"
              "    vlda wh0, [p2], #32\n"
              + LANDS[:-len(LANDS) // 6] +  # 5: the first store is 7 cycles after the first load
              "    vst wl0, [p1], #32\n"
              "    vst wh0, [p1], #32\n"
              "    add r1, r1, #-1\n"
              "    jnz r1, #loop\n"
              + "    nop                        // the jump's 5 delay slots\n" * 5
              + "    done\n"
              ".data\n    .p2align 5\ntable:\n" + rows)
    assert run(kernel, "amdnpu", "relu", trials=1, seed=seed).correct, "the table should fit its own seed"
    assert_mismatch(run(kernel, "amdnpu", "relu"))


def test_amdnpu_immediate_halt_fails():
    assert_halted_early(run(".text\n    done\n", "amdnpu", "relu"))


def test_amdnpu_outputs_of_a_previous_evaluation_do_not_count():
    assert run(preserving(shipped("reference", "amdnpu", "relu")), "amdnpu", "relu").correct
    assert_halted_early(run(".text\n    done\n", "amdnpu", "relu"))


def test_amdnpu_image_overlapping_a_tensor_is_an_error():
    """Cheat: a .data section padded (.p2align 14: 16 KiB) until it runs over a tensor (x)."""
    r = run(relu(data="    .byte 1\n    .p2align 14\n    .byte 2\n"), "amdnpu", "relu")
    assert not r.correct and r.error and "overlaps tensor" in r.error, r.summary()


def test_amdnpu_image_past_the_abi_image_area_is_an_error():
    """Cheat: a table placed at dm 0x10000 (.p2align 16), past the 16 KiB image area, in the neighbours'
    memory the ABI gives the tensors that do not fit, missing the C1 tensors (x at 0x4000..0x4200, y at
    0x9000). (In the inputs region every such section overlaps x: the inputs are packed from its start.)"""
    kernel = relu("    movxm p2, #far\n"
                  "    vst wl4, [p2, #0]          // its own .data, 64 KiB up\n",
                  "    .p2align 16\nfar:\n    .short " + ", ".join(["0"] * 16) + "\n")
    r = run(kernel, "amdnpu", "relu")
    assert not r.correct and r.error and "lies in the ABI's region neighbours" in r.error, r.summary()


# ---- resource bounds: in a child process with a 1.5 GiB address-space limit, so that an assembler without
# the bound fails fast with MemoryError instead of growing to many GB on a shared machine ---------------------
_CHILD = """
import resource
resource.setrlimit(resource.RLIMIT_AS, (3 << 29, 3 << 29))  # 1.5 GiB: a full evaluation peaks near 0.35 GiB
import json, sys
import isadl
from kcgen import taskspec
from kcgen.evaluation import evaluate
target, task = sys.argv[1:3]
try:
    r = evaluate(sys.stdin.read(), isadl.load(isadl.find_target(target)), taskspec.find(task), target, "C1")
    print(json.dumps({"correct": r.correct, "error": r.error}))
except MemoryError:
    print(json.dumps({"crash": "MemoryError"}))
"""


def evaluate_bounded(kernel: str, target: str, task: str) -> dict:
    proc = subprocess.run([sys.executable, "-c", _CHILD, target, task], input=kernel, capture_output=True,
                          text=True, timeout=120, cwd=REPO)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def assert_located_error(out: dict, line: int):
    assert "crash" not in out, f"the evaluation crashed: {out}"
    assert not out["correct"] and out["error"], out
    assert re.search(rf"kernel\.s:{line}:\d+", out["error"]), f"no file:line {line} in: {out['error']}"


@pytest.mark.parametrize("target,task,kernel,line", [
    ("amdnpu", "relu", ".text\n    done\n.data\n    .space 2000000000\n", 4),
    ("plena", "softmax", "; reserve 2 GB\n.space 2000000000\n", 2),
], ids=["amdnpu", "plena"])
def test_huge_space_is_a_located_error(target, task, kernel, line):
    assert_located_error(evaluate_bounded(kernel, target, task), line)


def test_amdnpu_huge_alignment_is_a_located_error():
    """amdnpu has no .space; .p2align 31 after one byte reserves 2 GiB all the same."""
    kernel = ".text\n    done\n.data\n    .byte 1\n    .p2align 31\n    .byte 2\n"
    assert_located_error(evaluate_bounded(kernel, "amdnpu", "relu"), 5)


# ---- PLENA kernels ----------------------------------------------------------------------------------------
# softmax C1: x = bf16[4, 64] as MXFP8 in HBM at a0 = 0 (256 element bytes, then 32 scale bytes), y in vector
# SRAM rows 0..255; SCALE_OFFSET is 256 after the reference's first lines. Scratch at level 1: vector SRAM from
# 256, matrix SRAM, INT SRAM, FP SRAM from 3 (0..2 hold the constants 0, 1, -inf); HBM is not scratch.
def plena_softmax() -> str:
    return shipped("reference", "plena", "softmax")


def test_plena_reference_passes_and_allowed_writes_pass():
    """Control: the reference is correct, and stores into every scratch region the statement lists pass."""
    assert run(plena_softmax(), "plena", "softmax").correct
    allowed = plena_softmax() + ("S_ADDI_INT gp5, gp0, 256\n"
                                 "V_ADD_VF gp5, gp0, f2        ; vector SRAM row 256\n"
                                 "S_ST_FP f2, gp0, 3           ; FP SRAM after the constants\n"
                                 "S_ADDI_INT gp6, gp0, 7\n"
                                 "S_ST_INT gp6, gp0, 31        ; INT SRAM\n"
                                 "H_PREFETCH_M gp0, gp0, a0, 1, 0  ; matrix SRAM tile 0\n")
    r = run(allowed, "plena", "softmax")
    assert r.correct, r.summary()


def test_plena_constant_softmax_c5_fails_every_time():
    """Cheat (the issue's): ignore x and write 1/1024 = 1/N into all 48 x 1024 elements of y."""
    kernel = ("S_LD_FP f1, gp0, 1            ; 1.0\n"
              "S_ADD_FP f2, f1, f1           ; 2\n"
              "S_MUL_FP f2, f2, f2           ; 4\n"
              "S_MUL_FP f2, f2, f2           ; 16\n"
              "S_MUL_FP f2, f2, f2           ; 256\n"
              "S_ADD_FP f3, f1, f1\n"
              "S_ADD_FP f3, f3, f3           ; 4\n"
              "S_MUL_FP f2, f2, f3           ; 1024\n"
              "S_RECI_FP f1, f2              ; 1/1024\n"
              "S_LUI_INT gp2, 12             ; scratch row 49152\n"
              "V_SUB_VV gp2, gp2, gp2        ; zeros\n"
              "S_ADDI_INT gp1, gp0, 0\n"
              "C_LOOP_START gp3, 768         ; 768 rows of 64 = y\n"
              "V_ADD_VF gp1, gp2, f1\n"
              "S_ADDI_INT gp1, gp1, 64\n"
              "C_LOOP_END gp3\n")
    for _ in range(5):
        r = run(kernel, "plena", "softmax", "C5")
        assert_mismatch(r)
        assert np.all(r.outputs["y"].kernel == 1 / 1024), "the kernel should write 1/1024 everywhere"


def test_plena_clobbered_input_is_a_violation():
    """Cheat: the right y, then H_STORE_V of y's four rows over x in HBM."""
    kernel = plena_softmax() + "H_STORE_V gp0, gp0, a0, 0, 0  ; V[0..256) -> HBM[a0 + 0..]\n"
    assert_violation(run(kernel, "plena", "softmax"), "memory integrity", "hbm", "input x")


def test_plena_store_into_hbm_past_the_input_is_a_violation():
    """Cheat: the right y, then four rows stored into HBM after x: not scratch at level 1."""
    spec, task = isa("plena"), taskspec.find("softmax")
    said = statement(task, "plena", "C1", layout_for(spec, task, "plena", "C1"), spec)
    scratch = said.split("Scratch:", 1)[1].split("\n", 1)[0]
    assert "hbm" not in scratch, "the statement lists HBM as scratch at level 1: " + scratch
    kernel = plena_softmax() + ("S_ADDI_INT gp5, gp0, 1024\n"
                                "H_STORE_V gp0, gp5, a0, 0, 0  ; HBM[1024..1280), scales at 384..416\n")
    r = run(kernel, "plena", "softmax")
    assert_violation(r, "memory integrity", "hbm")
    assert "input x" not in r.violation, r.violation


def test_plena_clobbered_constant_is_a_violation():
    """Cheat: the right y, then the preloaded -inf in FP SRAM overwritten (it is not scratch)."""
    kernel = plena_softmax() + "S_ST_FP f1, gp0, 2            ; FP SRAM[2] = the last row's max\n"
    assert_violation(run(kernel, "plena", "softmax"), "memory integrity", "fpsram")


def test_plena_softmax_without_the_max_subtraction_fails():
    """Partial work: the reference without V_SUB_VF (exp(x) instead of exp(x - max)): right while exp(x)
    stays in bf16's range, inf and NaN once an input passes 88 (the extremes profile)."""
    cheat = "".join(line for line in plena_softmax().splitlines(True) if not line.startswith("V_SUB_VF"))
    assert cheat != plena_softmax()
    assert run(cheat, "plena", "softmax", task_spec=only("softmax", "uniform", "small")).correct
    assert_mismatch(run(cheat, "plena", "softmax"))


@pytest.mark.parametrize("kernel", ["", "; nothing at all\n", "S_ADDI_INT gp1, gp0, 1\n"],
                         ids=["empty", "comment", "one-instruction"])
def test_plena_immediate_halt_fails(kernel):
    assert_halted_early(run(kernel, "plena", "softmax"))


def test_plena_outputs_of_a_previous_evaluation_do_not_count():
    assert run(plena_softmax(), "plena", "softmax").correct
    assert_halted_early(run("", "plena", "softmax"))
