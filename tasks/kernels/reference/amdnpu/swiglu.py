"""amdnpu reference of swiglu: the template baseline's structure (tasks/kernels/baseline/amdnpu/swiglu.py)
with the Level-1 reference kernels as its sub-kernels where they apply (_rlib.FAST: register-blocked
matrix products on pre-arranged tiles, unrolled softmax and silu), the whole packed into full VLIW
bundles by the Level-1 reference's list scheduler."""
from pathlib import Path

from kcgen.paths import load_module

HERE = Path(__file__).resolve().parent
RL = load_module(HERE / "_rlib.py")
BASE = load_module(HERE.parent.parent / "baseline" / "amdnpu" / "swiglu.py")


def generate(task, cfg, layout, spec):
    return RL.scheduled(BASE, task, cfg, layout, spec)
