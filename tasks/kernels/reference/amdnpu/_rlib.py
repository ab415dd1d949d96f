"""The Level-1 reference kernels (tasks/kernels/reference/amdnpu.py) as sub-kernels of the Level-2/3
references: FAST maps a sub-kernel name to fn(cfg, **addrs) -> its text (or None where the Level-1
reference does not apply: the baseline template is used then). The gemm and linear references
copy their B / w operand a panel at a time into MAC tiles: the callers give them a buffer in free
memory (_lib.fast_panel; the placement `buf`)."""
from pathlib import Path

from kcgen.paths import load_module

HERE = Path(__file__).resolve().parent
R = load_module(HERE.parent / "amdnpu.py")
L = load_module(HERE.parent.parent / "baseline" / "amdnpu" / "_lib.py")


def _ref(name, ok):
    def fn(cfg, **addrs):
        if not ok(cfg):
            return None
        return R.GENERATORS[name](None, cfg, L.fake_layout(**addrs), None)
    return fn


def _hadamard(cfg, p, q, out, tiles):
    """out = p * q (16 lanes per step): the four diagonal tiles of p by straight-line scalar copies
    (a word load gives two values, the high one shifted down), q masked per column by vsel, four MACs."""
    n = cfg["N"]
    if not isinstance(p, int) or not isinstance(q, int) or not isinstance(out, int):
        return None
    a = L.Asm()
    a("movxm r9, #0")
    a("movxm r19, #-16")
    for t in range(4):
        a(f"movxm r{20 + t}, #{sum(1 << (4 * i + t) for i in range(4))}")
    L.zero_tiles(a, tiles, 4)
    a("vsub.16 x11, x11, x11")
    a("vsub.16 x8, x8, x8")
    a(f"movxm p0, #{p}")
    a(f"movxm p1, #{q}")
    a(f"movxm p2, #{out}")
    lo = ["r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8"]
    hi = ["r10", "r11", "r12", "r13", "r14", "r15", "r16", "r17"]
    with a.loop("r0", n // 16):
        for w in range(8):
            a(f"lda {lo[w]}, [p0], #4")
        for w in range(8):
            a(f"lshl {hi[w]}, {lo[w]}, r19")
            for reg, e in ((lo[w], 2 * w), (hi[w], 2 * w + 1)):
                i, t = e // 4, e % 4
                a(f"movxm p5, #{tiles + 64 * t + 18 * i}")
                a(f"st.s16 {reg}, [p5, #0]")
        a("vlda wl8, [p1], #32")
        a(f"movxm p5, #{tiles}")
        for t in range(4):
            a(f"vlda wl{t}, [p5, #{64 * t}]")
            a(f"vlda wh{t}, [p5, #{64 * t + 32}]")
        a("vclr cm0")
        for t in range(4):
            a(f"vsel.16 x{4 + t}, x11, x8, r{20 + t}")
            a(f"vmac.f bml0, bml0, x{t}, x{4 + t}, r9")
        a("vconv.bf16.fp32 wl10, bml0")
        a("vst wl10, [p2], #32")
    return a.text()


FAST = {
    "hadamard": _hadamard,
    # (K <= 160: their A-tile loads address rows 0..3 with a 11-bit offset 2 K r)
    "gemm": _ref("gemm", lambda c: c["M"] % 8 == 0 and c["K"] % 16 == 0 and c["N"] % 16 == 0 and c["K"] <= 160),
    "linear": _ref("linear", lambda c: c["M"] % 8 == 0 and c["K"] % 16 == 0 and c["N"] % 16 == 0 and c["K"] <= 160),
    "softmax": _ref("softmax", lambda c: c["N"] % 64 == 0),
    "silu": _ref("silu", lambda c: c["N"] % 64 == 0),
}


PROGRAM_END = R.B.PROGRAM_END  # the ABI's program region: the inputs start here


def scheduled(base, task, cfg, layout, spec) -> str:
    """The baseline generator `base` with the FAST sub-kernels, packed into bundles (by kcgen.schedule,
    as the baseline: a reference is never slower than its baseline). The Level-1
    references are unrolled: when the program outgrows its 16 KiB, the largest are left out in turn."""
    from kcgen.evaluation import _assembler
    for leave_out in ((), ("gemm",), ("gemm", "softmax"), ("gemm", "softmax", "linear"), tuple(FAST)):
        fast = {k: v for k, v in FAST.items() if k not in leave_out}
        template = base.unscheduled(task, cfg, layout, spec, fast=fast)
        # kcgen.schedule's packing (it overlaps the work with the jumps' delay slots and pipelines), as for
        # the baseline; this module's scheduler when that does not fit
        text = R.B.wait_for_results(R.packed_or_scheduled(template, lambda: R.schedule(template, preserve=True), spec),
                                    spec)  # the AIE2 pipeline does not wait (deviation 5)
        program = _assembler(spec).assemble(text)
        if max(s.end for s in program.sections.values()) <= PROGRAM_END:
            return text
    raise ValueError("the program does not fit its 16 KiB")


def reference_of(name: str, fast: bool = True):
    """generate() of a task's reference: its baseline generator with the FAST sub-kernels (fast) or
    as it is, packed into bundles."""
    base = load_module(HERE.parent.parent / "baseline" / "amdnpu" / f"{name}.py")

    def generate(task, cfg, layout, spec):
        if fast:
            return scheduled(base, task, cfg, layout, spec)
        template = base.unscheduled(task, cfg, layout, spec)  # (its callee-saved registers kept)
        text = R.packed_or_scheduled(template, lambda: R.schedule(template, preserve=True), spec)
        return R.B.wait_for_results(text, spec)  # the AIE2 pipeline does not wait (deviation 5)
    return generate
