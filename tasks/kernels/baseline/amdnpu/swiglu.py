"""amdnpu template baseline of swiglu: g = x @ wg, u = x @ wu (gemm template), silu(g) in place
(piecewise-linear silu template), u = silu(g) * u (diagonal-tile MACs, _lib.hadamard),
y = u @ wd (gemm template); _lib.ffn_generator."""
from pathlib import Path

from kcgen.paths import load_module

L = load_module(Path(__file__).resolve().parent / "_lib.py")
unscheduled = L.ffn_generator(gated=True)
generate = L.B.scheduled(unscheduled)
