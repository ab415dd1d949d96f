"""amdnpu template baseline of rope: per position the diagonal tiles of cos and sin, then per head
y1 = x1 cos - x2 sin, y2 = x2 cos + x1 sin as diagonal-tile MACs (_lib.rope_rows)."""
from pathlib import Path

from kcgen.paths import load_module

L = load_module(Path(__file__).resolve().parent / "_lib.py")


def unscheduled(task, cfg, layout, spec):
    S, NH, D = cfg["S"], cfg["NH"], cfg["D"]
    a = L.Asm()
    L.consts(a)
    ad = {n: p.address for n, p in layout.placements.items()}
    tiles = L.B.SCRATCH + 0x100  # the diagonal tiles of cos and sin (D * 16 bytes) in the scratch region
    assert tiles + D * 16 <= L.B.SAVE_AREA
    L.rope_rows(a, ad["x"], ad["cos"], ad["sin"], ad["y"], S, NH, D, tiles)
    return L.B.preserve(a.text())


generate = L.B.scheduled(unscheduled)
