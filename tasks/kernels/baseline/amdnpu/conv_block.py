"""amdnpu template baseline of conv_block: the Level-1 conv2d template (band-matrix MACs over
32-input row segments, W = 16 or 32: see the amdnpu configs), with the folded batch norm and the
ReLU applied to its fp32 results before they are stored: per output channel the tile
A = [bn0 I4 | bn1 I4] scales [conv | ones] (one MAC per 16 outputs, conv rounded to bf16 first),
then vmax against zero."""
import re
from pathlib import Path

from kcgen.paths import load_module

L = load_module(Path(__file__).resolve().parent / "_lib.py")
B = L.B
STAGE = B.SCRATCH + 0x80  # 32 bytes: scalar to vector staging


def bn_tile(a, CO: int, dst: str) -> list[str]:
    """x[dst] = [s I4 | b I4] for s = bn[0, co], b = bn[1, co] (r26 walks bn[0]; p7, x3, x6 or x9,
    x8 are free where this runs, at the top of the template's loop over output channels)."""
    tb = "x6" if dst == "x9" else "x9"
    a.lines.clear()
    a("mov p7, r26")
    a("lda.u16 r3, [p7], #2")
    a("mov r26, p7")
    a(f"movxm m7, #{2 * CO - 2}")
    a("padda [p7], m7")
    a("lda.u16 r4, [p7, #0]")
    a(f"movxm p7, #{STAGE}")
    a("st.s16 r3, [p7, #0]")
    a("vlda wl3, [p7, #0]")
    a("st.s16 r4, [p7, #0]")
    a(f"vlda wl{tb[1:]}, [p7, #0]")
    B.broadcast(a, "x3")
    B.broadcast(a, tb)
    a("vsub.16 x8, x8, x8")
    a("movxm r18, #0x8040201")   # lanes 0, 9, 18, 27: A[i][i]
    a(f"movxm r19, #{0x80402010 - (1 << 32)}")  # lanes 4, 13, 22, 31: A[i][4 + i]
    a(f"vsel.16 {dst}, x8, x3, r18")
    a(f"vsel.16 {dst}, {dst}, {tb}, r19")
    return list(a.lines)


def bn_relu(a, tile: str, zero: str) -> list[str]:
    """Replaces the conv template's narrowing of bml0/bml1 into wl4/wl5."""
    a.lines.clear()
    if zero != "x8":
        a(f"vsub.16 {zero}, {zero}, {zero}")
    a("vconv.bf16.fp32 wl4, bml0")
    a("vconv.bf16.fp32 wl5, bml1")
    a("movxm p6, #c_ones")
    a("vlda wh4, [p6, #0]")
    a("vlda wh5, [p6, #0]")
    a(f"vmul.f bml0, {tile}, x4, r9")
    a(f"vmul.f bml1, {tile}, x5, r9")
    a("vconv.bf16.fp32 wl4, bml0")
    a("vconv.bf16.fp32 wl5, bml1")
    a(f"vmax_lt.bf16 x4, r16, x4, {zero}")
    a(f"vmax_lt.bf16 x5, r16, x5, {zero}")
    return list(a.lines)


def conv_text(cfg, layout, rename: bool = False) -> str:
    """The conv2d template's program with the batch norm and ReLU spliced in (rename: the template's
    variant with registers renamed per kernel row, for the reference's scheduler; it leaves only x9
    free across its row loop, so the batch-norm tile lives there)."""
    a = L.Asm()
    lay = L.fake_layout(x=layout.placements["x"].address, w=layout.placements["w"].address,
                        y=layout.placements["y"].address)
    B.gen_conv(rename=rename)(a, {**cfg, "K": 3}, lay)
    tile, zero = ("x9", "x0") if rename else ("x6", "x8")
    assert not any(re.search(r"\b(r18|r19|r26|" + tile + r")\b", line) for line in a.lines)
    lines = a.lines
    i = next(n for n, s in enumerate(lines) if s.strip().startswith("movxm r20,"))
    assert lines[i + 1].strip().startswith("movxm r0,") and lines[i + 2].endswith(":"), lines[i:i + 3]
    t = L.Asm()
    pre = [f"    movxm r26, #{layout.placements['bn'].address}"]
    body = bn_tile(t, cfg["CO"], tile)
    lines = lines[:i] + pre + lines[i:i + 3] + body + lines[i + 3:]
    j = next(n for n, s in enumerate(lines) if s.strip() == "vconv.bf16.fp32 wl4, bml0")
    assert lines[j + 1].strip() == "vconv.bf16.fp32 wl5, bml1"
    lines = lines[:j] + bn_relu(t, tile, zero) + lines[j + 2:]
    a.lines = lines
    a.table("c_ones", [B.bfbits(1.0)] * 16)
    return a.text()


def unscheduled(task, cfg, layout, spec):
    return B.preserve(conv_text(cfg, layout))


generate = B.scheduled(unscheduled)
