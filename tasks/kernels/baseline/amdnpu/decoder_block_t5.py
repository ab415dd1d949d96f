"""amdnpu template baseline of decoder_block_t5 (the relative position bias, the ReLU feed-forward): the Level-1 templates and _lib's
attention, rope and element-wise blocks one after the other on buffers in free data memory, repeated
sub-kernels as routines so that the program fits its 8 KiB (_lib.decoder)."""
from pathlib import Path

from kcgen.paths import load_module

L = load_module(Path(__file__).resolve().parent / "_lib.py")
unscheduled = L.decoder_generator(llama=False)
generate = L.B.scheduled(unscheduled)
