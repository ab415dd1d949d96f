"""PLENA reference kernels: expert versions of the baselines (tasks/kernels/baseline/plena.py).

What they do better:
- matmuls (gemm, batch_matmul, linear) run on the batched matrix op (M_BMM, or M_BTMM for
  linear's w[N, K]) instead of one BLEN x BLEN block per M_MM: one M_BMM multiplies 64 rows by a
  16 x 64 slice of a weight tile in MLEN cycles. Its heads share the slice, so only head 0 is used:
  each step prefetches the 64 activation rows shifted by 16*s elements (an HBM element offset), so
  that lanes 0..15 hold the k-slice s of the activation, and accumulates slice s of the tile into
  head 0; after the K tiles' 4 slices each, M_BMM_WO writes head 0 straight into the output rows
  (the other heads' garbage lands on output rows written later, or on free scratch).
  Activation steps are double buffered and the weight tiles prefetched as soon as their matrix
  SRAM tile is free;
- gemv streams the weight tiles through all four matrix SRAM tiles, prefetching ahead so the dma
  engine never idles (the kernel is bound by HBM bandwidth);
- element-wise kernels interleave the prefetch of the rows a few groups ahead with the compute
  instead of prefetching everything first;
- softmax and the norms sum a row's chunks with vector adds into one accumulator row and reduce it
  once per row (V_RED_SUM costs 8 cycles per row, V_ADD_VV 1), and prefetch the next group of rows
  while computing the current one.
"""
from __future__ import annotations

from kcgen.paths import TASKS, load_module

_base = load_module(TASKS / "kernels" / "baseline" / "plena.py")
Prog = _base.Prog


class Alloc:
    """Free vector SRAM intervals; take() hands out VLEN-aligned blocks."""

    def __init__(self, free: list[tuple[int, int]]):
        self.free = [(lo, hi) for lo, hi in free if hi > lo]

    def take(self, n: int) -> int:
        n = -(-n // 64) * 64
        for i, (lo, hi) in enumerate(self.free):
            lo2 = -(-lo // 64) * 64
            if hi - lo2 >= n:
                self.free[i] = (lo2 + n, hi)
                return lo2
        raise ValueError(f"no {n} free elements of vector SRAM in {self.free}")


# ---- matmuls on M_BMM / M_BTMM ---------------------------------------------------------------------------
def matmul(p: Prog, task: str) -> None:
    cfg = p.cfg
    B = cfg.get("B", 1)
    M, K, N = cfg["M"], cfg["K"], cfg["N"]
    V, T, HL, ML = p.VLEN, p.TILE, p.HLEN, p.MLEN
    heads = ML // HL
    linear = task == "linear"
    act, wt, outn = ("x", "w", "y") if linear else ("a", "b", "c")
    out = p.out(outn)
    R = B * M
    nt_n, kt_n = -(-N // V), K // ML
    mb_n = -(-M // ML)
    vtotal = 1024 * V
    wo_rows = heads * ML * V  # what M_BMM_WO writes

    # output blocks of up to 64 rows x 64 columns, in increasing vector SRAM address
    blocks = []
    for nt in range(nt_n):
        for b in range(B):
            for mb in range(mb_n):
                r0 = b * M + mb * ML
                rows = min(ML, M - mb * ML)
                blocks.append(dict(nt=nt, b=b, r0=r0, rows=rows, addr=out + (nt * R + r0) * V))
    for blk in blocks:
        blk["direct"] = blk["addr"] + wo_rows <= vtotal
    out_end = out + nt_n * R * V
    zone_end = max([out_end] + [blk["addr"] + wo_rows for blk in blocks if blk["direct"]])
    alloc = Alloc([(0, out), (zone_end, vtotal)])
    bufs = [alloc.take(ML * V), alloc.take(ML * V)]
    scratch = alloc.take(wo_rows) if not all(blk["direct"] for blk in blocks) else None
    bias = alloc.take(-(-N // (V * p.VROWS)) * p.VROWS * V) if linear else None

    # weight tiles in order of first use, and the steps (block, K tile, slice)
    tiles, steps = [], []
    for bi, blk in enumerate(blocks):
        for kt in range(kt_n):
            key = (blk["b"], blk["nt"], kt)
            if key not in tiles:
                tiles.append(key)
            for s in range(heads):
                steps.append(dict(block=bi, tile=tiles.index(key), s=s, kt=kt,
                                  last=(kt == kt_n - 1 and s == heads - 1)))
    last_use = {}
    for j, st in enumerate(steps):
        last_use[st["tile"]] = j
    slots = ML * ML * 0, T, 2 * T, 3 * T
    nslots = len(slots)

    a_act, a_wt = p.areg(act), p.areg(wt)
    n_act, n_wt = p.tensor_elems(act), p.tensor_elems(wt)
    wstride = K if linear else N
    p(f"; PLENA reference: {task} on {'M_BTMM' if linear else 'M_BMM'} (head 0, activation shifted per 16-wide k-slice)")
    if linear:  # the bias rows first (prefetch_image uses gp10..gp15)
        p.prefetch_image("bias", bias, 1, N)
    p.li("gp10", n_act)
    p.li("gp11", K)
    p.li("gp12", n_wt)
    p.li("gp13", wstride)
    state = {"cur": None}

    def use(which):
        if state["cur"] != which:
            p("C_SET_SCALE_REG gp10", "C_SET_STRIDE_REG gp11") if which == "act" else \
                p("C_SET_SCALE_REG gp12", "C_SET_STRIDE_REG gp13")
            state["cur"] = which

    def prefetch_tile(i):
        b, nt, kt = tiles[i]
        off = (b * K * N + kt * ML * N + nt * V) if not linear else (nt * V * K + kt * ML)
        use("wt")
        p.li("gp7", slots[i % nslots])
        p.li("gp8", off)
        p(f"H_PREFETCH_M gp7, gp8, {a_wt}, 1, 0")

    def prefetch_step(j):
        st = steps[j]
        blk = blocks[st["block"]]
        off = blk["r0"] * K + st["kt"] * ML + st["s"] * HL
        use("act")
        p.li("gp1", bufs[j % 2])
        p.li("gp2", off)
        groups = -(-blk["rows"] // p.VROWS)
        with p.loop("gp3", groups):
            p(f"H_PREFETCH_V gp1, gp2, {a_act}, 1, 0")
            if groups > 1:
                p(f"S_ADDI_INT gp1, gp1, {p.VROWS * V}")
                p.add("gp2", "gp2", p.VROWS * K)

    for i in range(min(nslots, len(tiles))):
        prefetch_tile(i)
    prefetch_step(0)
    op = "M_BTMM" if linear else "M_BMM"
    for j, st in enumerate(steps):
        if j + 1 < len(steps):
            prefetch_step(j + 1)
        blk = blocks[st["block"]]
        mat = slots[st["tile"] % nslots] + (st["s"] * HL if linear else st["s"] * HL * ML)
        p.li("gp4", mat)
        p.li("gp5", bufs[j % 2])
        p(f"{op} 0, gp4, gp5")
        nxt = st["tile"] + nslots
        if last_use[st["tile"]] == j and nxt < len(tiles):
            prefetch_tile(nxt)
        if st["last"]:
            if blk["direct"]:
                p.li("gp6", blk["addr"])
                p("M_BMM_WO gp6, 0")
            else:  # its garbage heads would run past the end of vector SRAM: write out to scratch, copy
                p.li("gp6", scratch)
                p("M_BMM_WO gp6, 0")
                p.li("gp9", blk["addr"])
                with p.loop("gp3", blk["rows"]):
                    p("V_ADD_VF gp9, gp6, f0", f"S_ADDI_INT gp9, gp9, {V}", f"S_ADDI_INT gp6, gp6, {V}")
    if linear:  # y[m, chunk] += bias[chunk], four rows per iteration
        p.li("gp1", out)
        p.li("gp2", bias)
        for nt in range(nt_n):
            unroll = 4 if R % 4 == 0 else 1
            with p.loop("gp3", R // unroll):
                for _ in range(unroll):
                    p("V_ADD_VV gp1, gp1, gp2", f"S_ADDI_INT gp1, gp1, {V}")
            p(f"S_ADDI_INT gp2, gp2, {V}")


def generate(task, cfg, layout, spec):
    p = Prog(spec, layout, cfg)
    name = task.name
    if name in ("gemm", "batch_matmul", "linear"):
        matmul(p, name)
    else:
        return _base.generate(task, cfg, layout, spec)
    return p.text()
