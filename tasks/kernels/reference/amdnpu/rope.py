"""amdnpu reference of rope: the baseline's diagonal-tile products (tasks/kernels/baseline/amdnpu/
rope.py, _lib.rope_rows) restructured: per position the cos/sin diagonal tiles are built by
straight-line scalar copies (the lda slot runs one per cycle), per 16-lane block the eight tiles
stay in x0..x7 for all heads, each head's 16 products are vsel + MAC pairs with no reloads, and the
whole is packed into bundles by the Level-1 reference's list scheduler."""
from pathlib import Path

from kcgen.paths import load_module

HERE = Path(__file__).resolve().parent
R = load_module(HERE.parent / "amdnpu.py")
L = load_module(HERE.parent.parent / "baseline" / "amdnpu" / "_lib.py")


def generate(task, cfg, layout, spec):
    S, NH, D = cfg["S"], cfg["NH"], cfg["D"]
    half = D // 2
    nb = half // 16
    ad = {n: p.address for n, p in layout.placements.items()}
    tiles = L.B.SCRATCH + 0x100  # the diagonal tiles of cos and sin (D * 16 bytes) in the scratch region
    assert tiles + D * 16 <= L.B.SAVE_AREA
    a = L.Asm()
    a.comment("rope reference: per position diagonal tiles of cos and sin, kept in x0..x7 per block")
    a("movxm r9, #0")
    for t in range(4):
        a(f"movxm r{20 + t}, #{sum(1 << (4 * i + t) for i in range(4))}")
    L.zero_tiles(a, tiles, 2 * nb * 4)
    a("vsub.16 x11, x11, x11")
    a(f"movxm p0, #{ad['cos']}")
    a(f"movxm p1, #{ad['sin']}")
    a(f"movxm r10, #{ad['x']}")
    a(f"movxm r11, #{ad['y']}")
    ptr = {0: "p6", 1: "p7"}
    with a.loop("r0", S):
        # straight-line diagonal tiles: value e = 16 b + 4 i + t -> tile (b, t), lane 9 i
        regs = ["r1", "r2", "r3", "r4", "r5", "r6", "r7", "r12"]
        for which, src, base in ((0, "p0", tiles), (1, "p1", tiles + 256 * nb)):
            for b in range(nb):
                for e in range(16):
                    a(f"lda.u16 {regs[e % 8]}, [{src}], #2")
                    if e % 8 == 7:
                        for e2 in range(e - 7, e + 1):
                            i, t = e2 // 4, e2 % 4
                            a(f"movxm p5, #{base + 256 * b + 64 * t + 18 * i}")
                            a(f"st.s16 {regs[e2 % 8]}, [p5, #0]")
        for b in range(nb):
            a(f"movxm p5, #{tiles + 256 * b}")
            for t in range(4):
                a(f"vlda wl{t}, [p5, #{64 * t}]")
                a(f"vlda wh{t}, [p5, #{64 * t + 32}]")
            a(f"movxm p5, #{tiles + 256 * (nb + b)}")
            for t in range(4):
                a(f"vlda wl{4 + t}, [p5, #{64 * t}]")
                a(f"vlda wh{4 + t}, [p5, #{64 * t + 32}]")
            a("vsub.16 x8, x8, x8")
            a("vsub.16 x9, x9, x9")
            a("mov p2, r10")
            a("mov p3, r11")
            if b:
                a(f"padda [p2], #{32 * b}")
                a(f"padda [p3], #{32 * b}")
            a(f"movxm m2, #{2 * D}")
            with a.loop("r8", NH):
                a("vlda wl8, [p2, #0]")
                a(f"vlda wl9, [p2, #{2 * half}]")
                a("padda [p2], m2")
                a("vclr cm0")
                for t in range(4):
                    a(f"vsel.16 x10, x11, x8, r{20 + t}")
                    a(f"vmac.f bml0, bml0, x{t}, x10, r9")
                    a(f"vmac.f bmh0, bmh0, x{4 + t}, x10, r9")
                    a(f"vsel.16 x10, x11, x9, r{20 + t}")
                    a(f"vmsc.f bml0, bml0, x{4 + t}, x10, r9")
                    a(f"vmac.f bmh0, bmh0, x{t}, x10, r9")
                a("vconv.bf16.fp32 wl10, bml0")
                a("vst wl10, [p3, #0]")
                a("vconv.bf16.fp32 wl10, bmh0")
                a(f"vst wl10, [p3, #{2 * half}]")
                a("padda [p3], m2")
        a(f"movxm r13, #{2 * NH * D}")
        a("add r10, r10, r13")
        a("add r11, r11, r13")
    # the AIE2 pipeline does not wait (deviation 5 of amdnpu.isa): nops before early reads
    return R.B.wait_for_results(R.schedule(a.text(), preserve=True), spec)
