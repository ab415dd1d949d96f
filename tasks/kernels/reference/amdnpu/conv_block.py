"""amdnpu reference of conv_block: the template baseline (tasks/kernels/baseline/amdnpu/conv_block.py) packed into full VLIW
bundles by the Level-1 reference's list scheduler (both load units, every slot, each operation as
early as its operands' latencies allow)."""
from pathlib import Path

from kcgen.paths import load_module

generate = load_module(Path(__file__).resolve().parent / "_rlib.py").reference_of("conv_block", fast=False)
