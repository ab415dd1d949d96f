"""amdnpu template baseline of scaled_dot_product: per K/V head and block of query rows, q k^T / sqrt(D) (linear
template), softmax (template), @ v (gemm template); see _lib.attention."""
from pathlib import Path

from kcgen.paths import load_module

L = load_module(Path(__file__).resolve().parent / "_lib.py")


def generate(task, cfg, layout, spec, fast=None):
    """fast: faster sub-kernels (the reference generator's, see _lib.fast), else the templates."""
    a = L.Asm()
    a._fast = fast
    mem = L.Mem(layout)
    L.consts(a)
    ad = {n: p.address for n, p in layout.placements.items()}
    L.attention(a, mem, "at", ad["q"], ad["k"], ad["v"], ad["o"], cfg["S"], 1, 1, cfg["D"])
    return a.text()
