"""amdnpu reference of ffn: the template baseline's structure (tasks/kernels/baseline/amdnpu/ffn.py) with
the Level-1 reference kernels as sub-kernels where they apply (_rlib.FAST: register-blocked matrix
products on pre-arranged tiles, unrolled softmax and silu, straight-line element-wise products),
packed into full VLIW bundles by the Level-1 reference's list scheduler."""
from pathlib import Path

from kcgen.paths import load_module

generate = load_module(Path(__file__).resolve().parent / "_rlib.py").reference_of("ffn")
