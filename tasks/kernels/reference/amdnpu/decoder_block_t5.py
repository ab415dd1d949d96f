"""amdnpu reference of decoder_block_t5: the template baseline (tasks/kernels/baseline/amdnpu/decoder_block_t5.py) packed
into full VLIW bundles by the Level-1 reference's list scheduler (both load units, every slot,
each operation as early as its operands' latencies allow)."""
from pathlib import Path

from kcgen.paths import load_module

HERE = Path(__file__).resolve().parent
R = load_module(HERE.parent / "amdnpu.py")
BASE = load_module(HERE.parent.parent / "baseline" / "amdnpu" / "decoder_block_t5.py")


def generate(task, cfg, layout, spec):
    return R.schedule(BASE.generate(task, cfg, layout, spec))
