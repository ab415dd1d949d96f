"""amdnpu template baseline of decoder_block_t5: the Level-1 templates and the attention, rope, element-wise
blocks of _lib, one after the other on buffers in free data memory (_lib.decoder)."""
from pathlib import Path

from kcgen.paths import load_module

L = load_module(Path(__file__).resolve().parent / "_lib.py")


def generate(task, cfg, layout, spec):
    a = L.Asm()
    L.decoder(a, layout, cfg, llama=False)
    return a.text()
