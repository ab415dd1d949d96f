"""amdnpu template baseline of ffn: g = x @ w1 (gemm template), silu(g) in place (the piecewise-linear
silu template), y = g @ w2 (gemm template)."""
from pathlib import Path

from kcgen.paths import load_module

L = load_module(Path(__file__).resolve().parent / "_lib.py")


def generate(task, cfg, layout, spec, fast=None):
    """fast: faster sub-kernels (the reference generator's, see _lib.fast), else the templates."""
    M, H, F = cfg["M"], cfg["H"], cfg["F"]
    a = L.Asm()
    a._fast = fast
    mem = L.Mem(layout)
    ad = {n: p.address for n, p in layout.placements.items()}
    mb, (g,) = L.row_blocks(mem, M, F * 2)
    for r in range(0, M, mb):  # blocks of rows when g[M, F] does not fit
        L.matmul(a, f"up{r}", ad["x"] + r * H * 2, ad["w1"], g, mb, H, F, scratch_b=mb == M)
        if not L.fast(a, "silu", {"N": mb * F}, f"act{r}", x=g, y=g):
            L.sub(a, L.B.gen_unary_pwl("silu"), {"N": mb * F}, f"act{r}", x=g, y=g)
        L.matmul(a, f"down{r}", g, ad["w2"], ad["y"] + r * H * 2, mb, F, H, scratch_b=mb == M)
    return a.text()
