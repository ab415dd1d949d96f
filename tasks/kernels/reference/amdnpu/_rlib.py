"""The Level-1 reference kernels (tasks/kernels/reference/amdnpu.py) as sub-kernels of the Level-2/3
references: FAST maps a sub-kernel name to fn(cfg, **addrs) -> its text (or None where the Level-1
reference does not apply: the baseline template is used then). The gemm and linear references
rearrange their B / w operand in place, so the callers give them scratch copies (_lib.matmul's
scratch_b, _lib.linear's scratch_w)."""
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


FAST = {
    # (K <= 160: their A-tile loads address rows 0..3 with a 11-bit offset 2 K r)
    "gemm": _ref("gemm", lambda c: c["M"] % 8 == 0 and c["K"] % 16 == 0 and c["N"] % 16 == 0 and c["K"] <= 160),
    "linear": _ref("linear", lambda c: c["M"] % 8 == 0 and c["K"] % 16 == 0 and c["N"] % 16 == 0
                   and c["N"] * 16 <= 0xE00 and c["K"] <= 160),
    "softmax": _ref("softmax", lambda c: c["N"] % 64 == 0),
    "silu": _ref("silu", lambda c: c["N"] % 64 == 0),
}


PROGRAM_END = 0x2000  # the ABI's program region: the inputs start here


def scheduled(base, task, cfg, layout, spec) -> str:
    """The baseline generator `base` with the FAST sub-kernels, packed into bundles. The Level-1
    references are unrolled: when the program outgrows its 8 KiB, the largest are left out in turn."""
    from kcgen.evaluation import _assembler
    for leave_out in ((), ("gemm",), ("gemm", "softmax"), ("gemm", "softmax", "linear"), tuple(FAST)):
        fast = {k: v for k, v in FAST.items() if k not in leave_out}
        text = R.schedule(base.generate(task, cfg, layout, spec, fast=fast))
        program = _assembler(spec).assemble(text)
        if max(s.end for s in program.sections.values()) <= PROGRAM_END:
            return text
    raise ValueError("the program does not fit its 8 KiB")
