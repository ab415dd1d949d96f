"""amdnpu reference of conv_block: the baseline's program (tasks/kernels/baseline/amdnpu/conv_block.py)
on the conv2d template's variant with registers renamed per kernel row (as the Level-1 conv2d
reference uses it), so that the Level-1 reference's list scheduler overlaps the kernel rows' loads,
selection MACs and band MACs when it packs the bundles."""
from pathlib import Path

from kcgen.paths import load_module

HERE = Path(__file__).resolve().parent
R = load_module(HERE.parent / "amdnpu.py")
BASE = load_module(HERE.parent.parent / "baseline" / "amdnpu" / "conv_block.py")


def generate(task, cfg, layout, spec):
    text = R.schedule(BASE.conv_text(cfg, layout, rename=True), preserve=True)
    return R.B.wait_for_results(text, spec)  # the AIE2 pipeline does not wait (deviation 5 of amdnpu.isa)
