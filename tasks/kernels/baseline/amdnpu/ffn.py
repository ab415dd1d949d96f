"""amdnpu template baseline of ffn: g = x @ w1 (gemm template), silu(g) in place (the piecewise-linear
silu template), y = g @ w2 (gemm template); _lib.ffn_generator."""
from pathlib import Path

from kcgen.paths import load_module

L = load_module(Path(__file__).resolve().parent / "_lib.py")
unscheduled = L.ffn_generator(gated=False)
generate = L.B.scheduled(unscheduled)
