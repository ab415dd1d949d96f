"""amdnpu template baseline of swiglu: g = x @ wg, u = x @ wu (gemm template), silu(g) in place
(piecewise-linear silu template), u = silu(g) * u (diagonal-tile MACs, _lib.hadamard),
y = u @ wd (gemm template)."""
from pathlib import Path

from kcgen.paths import load_module

L = load_module(Path(__file__).resolve().parent / "_lib.py")


def generate(task, cfg, layout, spec, fast=None):
    """fast: faster sub-kernels (the reference generator's, see _lib.fast), else the templates."""
    M, H, F = cfg["M"], cfg["H"], cfg["F"]
    a = L.Asm()
    a._fast = fast
    mem = L.Mem(layout)
    L.consts(a)
    ad = {n: p.address for n, p in layout.placements.items()}
    tiles = mem.alloc(256)
    mb, (g, u) = L.row_blocks(mem, M, F * 2, 2)
    for r in range(0, M, mb):  # blocks of rows when g, u[M, F] do not fit
        L.matmul(a, f"gate{r}", ad["x"] + r * H * 2, ad["wg"], g, mb, H, F, scratch_b=mb == M)
        L.matmul(a, f"up{r}", ad["x"] + r * H * 2, ad["wu"], u, mb, H, F, scratch_b=mb == M)
        if not L.fast(a, "silu", {"N": mb * F}, f"act{r}", x=g, y=g):
            L.sub(a, L.B.gen_unary_pwl("silu"), {"N": mb * F}, f"act{r}", x=g, y=g)
        L.hadamard(a, g, u, u, mb * F, tiles)
        L.matmul(a, f"down{r}", u, ad["wd"], ad["y"] + r * H * 2, mb, F, H, scratch_b=mb == M)
    return a.text()
