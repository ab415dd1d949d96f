"""Building blocks of the amdnpu Level-2/3 template kernels (tasks/kernels/baseline/amdnpu/<task>.py).

The Level-1 templates of tasks/kernels/baseline/amdnpu.py (matrix products, softmax, norms,
piecewise-linear silu, convolution) are reused as they are: each runs as a sub-kernel on buffers in
data memory (`sub`, which gives its labels a unique prefix so that several can share one program).
What Level 1 has no template for is written here:

* `Mem`: intermediate buffers in the data memory no tensor occupies (the unused parts of the
  input, output and neighbour regions; the scratch region 0xF000.. stays the Level-1 helpers').
* `copy_rows`: row-block copies (heads out of [S, NH*D] tensors, zero padding rows).
* `hadamard` / `rope_rows`: element-wise products. The core multiplies only through the 4x8x8x4 bf16
  MAC, so an element-wise product of 16 lanes (lane 4i+j) is four MACs: MAC t multiplies the
  diagonal tile A_t (A_t[i][i] = p[4i+t], built by 16-bit scalar copies) with q masked to column t
  (vsel.16); the four add up to p * q in natural lane order.
* `add`: x + y as one MAC per 16 lanes, A = [I4 | I4] and B = [x block ; y block].
* `attention`: per head and block of query rows, scores = q k^T (the linear template, its bias
  row padding the keys to a multiple of 32 with -2^100), softmax, then p @ v (the gemm template).
"""
from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

from kcgen.paths import load_module

B = load_module(Path(__file__).resolve().parent.parent / "amdnpu.py")
Asm = B.Asm
NEG = -(2.0 ** 100)  # the padding key's score: exp(NEG - max) is the exp table's floor (about 1e-7)


def prod(shape) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


class Mem:
    """Allocator of 64-byte aligned buffers in the data memory that holds no tensor."""

    def __init__(self, layout):
        used = sorted((p.address, p.address + 2 * prod(p.shape)) for p in layout.placements.values())
        self.free = []
        for lo, hi in ((0x2000, 0x9000), (0x9000, 0xF000), (0x10000, 0x40000)):
            cur = lo
            for a, b in used:
                if b <= cur or a >= hi:
                    continue
                if a > cur:
                    self.free.append([cur, a])
                cur = max(cur, b)
            if cur < hi:
                self.free.append([cur, hi])

    def alloc(self, nbytes: int) -> int:
        nbytes = (nbytes + 63) // 64 * 64
        for f in sorted(self.free, key=lambda f: f[1] - f[0]):
            start = (f[0] + 63) // 64 * 64
            if start + nbytes <= f[1]:
                f[0] = start + nbytes
                return start
        raise MemoryError(f"no room for {nbytes} bytes of intermediate data")


def fake_layout(**addrs) -> SimpleNamespace:
    return SimpleNamespace(placements={k: SimpleNamespace(address=v) for k, v in addrs.items()})


_LABEL = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*):\s*$")


def _data_blocks(data: list[str]):
    """.data lines as [(label, lines)] (each table: its .p2align, label and values)."""
    blocks, cur = [], None
    pending = []
    for line in data:
        m = _LABEL.match(line)
        if m:
            cur = (m.group(1), pending + [line])
            pending = []
            blocks.append(cur)
        elif line.strip().startswith(".p2align"):
            pending = [line]
        else:
            cur[1].append(line)
    return blocks


def sub(a: Asm, gen, cfg: dict, prefix: str, **addrs) -> None:
    """Run a Level-1 template generator gen(asm, cfg, layout) on the buffers addrs, inside a: its code
    labels get the prefix, its tables are shared with identical ones already in a."""
    b = Asm()
    gen(b, cfg, fake_layout(**addrs))
    tables = getattr(a, "_tables", None)
    if tables is None:
        tables = a._tables = {}
    ren_map = {}
    for line in b.lines:
        m = _LABEL.match(line)
        if m:
            ren_map[m.group(1)] = f"{prefix}_{m.group(1)}"
    new_data = []
    for name, lines in _data_blocks(b.data):
        body = tuple(lines[2:]) if lines[0].strip().startswith(".p2align") else tuple(lines[1:])
        if tables.get(name) == body:
            continue
        if name in tables:
            ren_map[name] = f"{prefix}_{name}"
        else:
            tables[name] = body
        new_data += lines
    if ren_map:
        pat = re.compile(r"\b(" + "|".join(sorted(ren_map, key=len, reverse=True)) + r")\b")
        ren = lambda s: pat.sub(lambda m: ren_map[m.group(1)], s)
        b.lines = [ren(s) for s in b.lines]
        new_data = [ren(s) for s in new_data]
    a.lines += b.lines
    a.data += new_data


def matmul(a: Asm, prefix, pa, pb, pc, M, K, N) -> None:
    """C[M, N] = A[M, K] @ B[K, N] (the Level-1 gemm template)."""
    def gen(asm, cfg, lay):
        B.setup_modes(asm)
        B.gen_matmul(asm, pa, pb, pc, M, K, N)
    sub(a, gen, {}, prefix)


def linear(a: Asm, prefix, x, w, bias, y, M, K, N) -> None:
    """y[M, N] = x[M, K] @ w[N, K]^T + bias[N] (the Level-1 linear template)."""
    sub(a, B.gen_linear, {"M": M, "K": K, "N": N}, prefix, x=x, w=w, bias=bias, y=y)


def consts(a: Asm) -> None:
    """Tables of this module (once per kernel)."""
    a.table("c_pair", B.tile_words({**{8 * i + i: 1.0 for i in range(4)}, **{8 * i + i + 4: 1.0 for i in range(4)}}))


def _ptr(a: Asm, p: str, addr) -> None:
    """p = addr: an int (movxm) or a scalar register holding it."""
    a(f"mov {p}, {addr}" if isinstance(addr, str) else f"movxm {p}, #{addr}")


class State:
    """Loop counters and running addresses kept in memory (the Level-1 sub-kernels inside the loops
    use every register). Word i at self.base + 4 i; r6, p7 are the temporaries."""

    def __init__(self, a: Asm, mem: Mem, words: int = 16):
        self.a, self.base, self.n = a, mem.alloc(4 * words), 0

    def var(self, value) -> int:
        i = self.n
        self.n += 1
        self.set(i, value)
        return i

    def set(self, i: int, value) -> None:
        if isinstance(value, str):
            self.a(f"mov r6, {value}")
        else:
            self.a(f"movxm r6, #{value}")
        self.a(f"movxm p7, #{self.base}")
        self.a(f"st r6, [p7, #{4 * i}]")

    def get(self, reg: str, i: int) -> None:
        self.a(f"movxm p7, #{self.base}")
        self.a(f"lda {reg}, [p7, #{4 * i}]")

    def add(self, i: int, delta: int) -> None:
        self.get("r6", i)
        self.a(f"movxm r5, #{delta}")
        self.a("add r6, r6, r5")
        self.a(f"st r6, [p7, #{4 * i}]")

    def loop(self, count: int):
        st, a = self, self.a

        class _L:
            def __enter__(self):
                self.i = st.var(count)
                self.top = a.new("mloop")
                a.label(self.top)
                return self

            def __exit__(self, *exc):
                st.get("r6", self.i)
                a("add r6, r6, #-1")
                a(f"st r6, [p7, #{4 * self.i}]")
                a(f"jnz r6, #{self.top}")
        return _L()


def fill(a: Asm, dst: int, nbytes: int, value: float = 0.0) -> None:
    """dst[..nbytes] = value (bf16), nbytes a multiple of 32."""
    assert nbytes % 32 == 0 and dst % 32 == 0
    a(f"movxm r6, #{B.bfbits(value)}")
    a(f"movxm p6, #{B.SCRATCH}")
    a("st.s16 r6, [p6, #0]")
    a("vlda wl11, [p6, #0]")
    a("movxm r10, #2")
    B.broadcast(a, "x11")
    a(f"movxm p6, #{dst}")
    with a.loop("r7", nbytes // 32):
        a("vst wl11, [p6], #32")


def copy_rows(a: Asm, src, src_stride: int, dst, dst_stride: int, rows: int, row_bytes: int) -> None:
    """Copy rows x row_bytes (a multiple of 32, 32-byte aligned rows); src/dst an address or a register."""
    assert row_bytes % 32 == 0 and src_stride % 32 == 0 and dst_stride % 32 == 0
    _ptr(a, "p6", src)
    _ptr(a, "p7", dst)
    a(f"movxm m6, #{src_stride - row_bytes}")
    a(f"movxm m7, #{dst_stride - row_bytes}")
    with a.loop("r7", rows):
        for _ in range(row_bytes // 32):
            a("vlda wl0, [p6], #32")
            a("vst wl0, [p7], #32")
        a("padda [p6], m6")
        a("padda [p7], m7")


def scale_rows(a: Asm, src, src_stride: int, dst, dst_stride: int, rows: int, row_bytes: int, s: float) -> None:
    """dst = src * s (s a power of two: exact), rows of row_bytes (a multiple of 32)."""
    assert row_bytes % 32 == 0
    a("movxm r9, #0")
    a("movxm r10, #2")
    a(f"movxm r6, #{B.bfbits(s)}")
    B.diag_from_scalar(a, "r6", "x3")
    _ptr(a, "p4", src)
    _ptr(a, "p5", dst)
    a(f"movxm m4, #{src_stride - row_bytes}")
    a(f"movxm m5, #{dst_stride - row_bytes}")
    a("vsub.16 x0, x0, x0")
    with a.loop("r7", rows):
        for _ in range(row_bytes // 32):
            a("vlda wl0, [p4], #32")
            a("vmul.f bml0, x3, x0, r9")
            a("vconv.bf16.fp32 wl1, bml0")
            a("vst wl1, [p5], #32")
        a("padda [p4], m4")
        a("padda [p5], m5")


def add(a: Asm, x, y, out, n: int) -> None:
    """out[n] = x + y (bf16, the sum in fp32 and rounded once), n a multiple of 16; out may be x or y.
    Needs the c_pair table (consts)."""
    assert n % 16 == 0
    a("movxm r9, #0")
    a("movxm p6, #c_pair")
    a("vlda wl3, [p6, #0]")
    a("vlda wh3, [p6, #32]")
    _ptr(a, "p4", x)
    _ptr(a, "p5", y)
    _ptr(a, "p6", out)
    with a.loop("r7", n // 16):
        a("vlda wl0, [p4], #32")
        a("vlda wh0, [p5], #32")
        a("vmul.f bml0, x3, x0, r9")
        a("vconv.bf16.fp32 wl1, bml0")
        a("vst wl1, [p6], #32")


def col_masks(a: Asm) -> None:
    """vsel.16 masks of the four columns of a 4x4 block (lanes 4i + t) in r20..r23."""
    for t in range(4):
        m = sum(1 << (4 * i + t) for i in range(4))
        a(f"movxm r{20 + t}, #{m}")


def diag_tiles(a: Asm, src: str, tiles: int) -> None:
    """The four diagonal A tiles of the 16 bf16 values at pointer `src` (advanced by 32):
    tile t (at tiles + 64 t, zero off the diagonal) has A[i][i] = src[4i + t]. Uses r3..r6, p6, p7, m4, m6, m7."""
    a("movxm m6, #8")
    a("movxm m7, #18")
    for t in range(4):
        a(f"mov p6, {src}")
        if t:
            a(f"movxm m4, #{2 * t}")
            a("padda [p6], m4")
        a(f"movxm p7, #{tiles + 64 * t}")
        regs = ("r3", "r4", "r5", "r6")
        for i in range(4):
            a(f"lda.u16 {regs[i]}, [p6], m6")
        for i in range(4):
            a(f"st.s16 {regs[i]}, [p7], m7")
    a(f"padda [{src}], #32")


def zero_tiles(a: Asm, tiles: int, count: int) -> None:
    a("vsub.16 x0, x0, x0")
    a(f"movxm p6, #{tiles}")
    for _ in range(2 * count):
        a("vst wl0, [p6], #32")


def hadamard_block(a: Asm, tiles: int, qreg: str, acc: str, first: bool, neg: bool = False) -> None:
    """acc (+|-)= p * q for the 16 lanes of q in wl of x[qreg] (wh zero) and the diagonal tiles of p at
    `tiles` (first: acc = the product). Uses x1, x2, x11, p5; masks in r20..r23, r9 = 0."""
    a(f"movxm p5, #{tiles}")
    a("vsub.16 x11, x11, x11")
    for t in range(4):
        a("vlda wl1, [p5], #32")
        a("vlda wh1, [p5], #32")
        a(f"vsel.16 x2, x11, {qreg}, r{20 + t}")
        if first and t == 0 and not neg:
            a(f"vmul.f {acc}, x1, x2, r9")
        else:
            a(f"{'vmsc.f' if neg else 'vmac.f'} {acc}, {acc}, x1, x2, r9")


def hadamard(a: Asm, p, q, out, n: int, tiles: int) -> None:
    """out[n] = p * q element-wise (n a multiple of 16; out may be q). tiles: 256 bytes."""
    assert n % 16 == 0
    a.comment("element-wise product: four diagonal-tile MACs per 16 lanes")
    a("movxm r9, #0")
    col_masks(a)
    zero_tiles(a, tiles, 4)
    _ptr(a, "p0", p)
    _ptr(a, "p1", q)
    _ptr(a, "p2", out)
    with a.loop("r0", n // 16):
        diag_tiles(a, "p0", tiles)
        a("vsub.16 x0, x0, x0")
        a("vlda wl0, [p1], #32")
        hadamard_block(a, tiles, "x0", "bml0", True)
        a("vconv.bf16.fp32 wl4, bml0")
        a("vst wl4, [p2], #32")


def rope_rows(a: Asm, x, cos, sin, y, S: int, NH: int, D: int, tiles: int) -> None:
    """Rotate-half RoPE of x[S, NH*D] (cos, sin [S, D/2]) into y (may be x).
    Per position: the diagonal tiles of cos and sin (D/2 values each), then per head and 16-lane block
    y1 = x1 cos - x2 sin and y2 = x2 cos + x1 sin (eight MACs each). tiles: D * 16 bytes."""
    half = D // 2
    assert half % 16 == 0
    nb = half // 16
    a.comment("rope: diagonal tiles of cos and sin per position, eight MACs per 16 outputs")
    a("movxm r9, #0")
    col_masks(a)
    zero_tiles(a, tiles, 2 * nb * 4)
    _ptr(a, "p0", cos)
    _ptr(a, "p1", sin)
    _ptr(a, "p2", x)
    _ptr(a, "p3", y)
    with a.loop("r0", S):
        for b in range(nb):
            diag_tiles(a, "p0", tiles + 256 * b)
            diag_tiles(a, "p1", tiles + 256 * (nb + b))
        with a.loop("r8", NH):
            for b in range(nb):
                ct, st = tiles + 256 * b, tiles + 256 * (nb + b)
                a("vsub.16 x0, x0, x0")
                a("vsub.16 x3, x3, x3")
                a(f"vlda wl0, [p2, #{32 * b}]")          # x1 block
                a("mov p4, p2")
                a(f"padda [p4], #{2 * half + 32 * b}")
                a("vlda wl3, [p4, #0]")                  # x2 block
                hadamard_block(a, ct, "x0", "bml0", True)
                hadamard_block(a, st, "x3", "bml0", False, neg=True)
                hadamard_block(a, ct, "x3", "bmh0", True)
                hadamard_block(a, st, "x0", "bmh0", False)
                a("vconv.bf16.fp32 wl4, bml0")
                a("vconv.bf16.fp32 wl5, bmh0")
                a(f"vst wl4, [p3, #{32 * b}]")
                a("mov p4, p3")
                a(f"padda [p4], #{2 * half + 32 * b}")
                a("vst wl5, [p4, #0]")
            a(f"padda [p2], #{2 * D}")
            a(f"padda [p3], #{2 * D}")


def pad32(n: int) -> int:
    return max(32, (n + 31) // 32 * 32)


def attention(a: Asm, mem: Mem, tag: str, q: int, k: int, v: int, o: int, S: int, NH: int, NKV: int, D: int,
              scale: bool = True, bias: int | None = None) -> None:
    """o[S, NH*D] = per head softmax(q_h k_g^T (/ sqrt(D)) (+ bias[h])) v_g, g = h // (NH / NKV);
    q, o rows NH*D wide, k, v rows NKV*D wide; bias [NH, S, S] or None. Per K/V head the head's k and v
    are copied into [Sp, D] buffers (Sp = S padded to a multiple of 32 with zero rows; the linear
    template's bias row gives the padding keys the score NEG), per query head and block of R rows:
    scores (linear template), + bias, softmax (template), @ v (gemm template)."""
    Sp = pad32(S)
    R = 32 if S % 32 == 0 else S
    assert S % R == 0 and R % 4 == 0 and D % 16 == 0 and D * 2 % 32 == 0
    kc, vc = mem.alloc(Sp * D * 2), mem.alloc(Sp * D * 2)
    qb, sc, ob = mem.alloc(R * D * 2), mem.alloc(R * Sp * 2), mem.alloc(R * D * 2)
    brow = mem.alloc(Sp * 2)
    bb = mem.alloc(R * Sp * 2) if bias is not None else None
    fill(a, brow, (Sp * 2 + 31) // 32 * 32, 0.0)
    if Sp > S:
        a(f"movxm r6, #{B.bfbits(NEG)}")
        a(f"movxm p6, #{brow + 2 * S}")
        with a.loop("r7", Sp - S):
            a("st.s16 r6, [p6], #2")
        fill(a, kc + S * D * 2, (Sp - S) * D * 2)
        fill(a, vc + S * D * 2, (Sp - S) * D * 2)
    if bb is not None:
        fill(a, bb, R * Sp * 2)
    st = State(a, mem)
    kp, vp, qp, op = st.var(k), st.var(v), st.var(q), st.var(o)
    bp = st.var(bias) if bias is not None else None
    qr, orow = st.var(0), st.var(0)
    with st.loop(NKV):
        st.get("r17", kp)
        copy_rows(a, "r17", NKV * D * 2, kc, D * 2, S, D * 2)
        st.get("r17", vp)
        copy_rows(a, "r17", NKV * D * 2, vc, D * 2, S, D * 2)
        st.add(kp, D * 2)
        st.add(vp, D * 2)
        with st.loop(NH // NKV):
            st.get("r17", qp)
            st.set(qr, "r17")
            st.get("r17", op)
            st.set(orow, "r17")
            with st.loop(S // R):
                st.get("r17", qr)
                scale_rows(a, "r17", NH * D * 2, qb, D * 2, R, D * 2, D ** -0.5 if scale else 1.0)
                linear(a, a.new(tag + "s"), qb, kc, brow, sc, R, D, Sp)
                if bias is not None:
                    st.get("r17", bp)
                    a("mov p6, r17")
                    a(f"movxm p7, #{bb}")
                    a(f"movxm m7, #{(Sp - S) * 2}")
                    with a.loop("r7", R):
                        with a.loop("r8", S):
                            a("lda.u16 r6, [p6], #2")
                            a("st.s16 r6, [p7], #2")
                        a("padda [p7], m7")
                    st.add(bp, R * S * 2)
                    add(a, sc, bb, sc, R * Sp)
                sub(a, B.gen_softmax, {"M": R, "N": Sp}, a.new(tag + "m"), x=sc, y=sc)
                matmul(a, a.new(tag + "v"), sc, vc, ob, R, Sp, D)
                st.get("r17", orow)
                copy_rows(a, ob, D * 2, "r17", NH * D * 2, R, D * 2)
                st.add(qr, R * NH * D * 2)
                st.add(orow, R * NH * D * 2)
            st.add(qp, D * 2)
            st.add(op, D * 2)


def row_blocks(mem: Mem, M: int, bytes_per_row: int, buffers: int = 1):
    """The largest block of rows (a divisor of M, a multiple of 4) whose `buffers` buffers of
    bytes_per_row each fit, and their addresses."""
    for mb in sorted((d for d in range(4, M + 1, 4) if M % d == 0), reverse=True):
        saved = [list(f) for f in mem.free]
        try:
            return mb, [mem.alloc(mb * bytes_per_row) for _ in range(buffers)]
        except MemoryError:
            mem.free = saved
    raise MemoryError("no room for a block of 4 rows")


def mark(mem: Mem):
    return [list(f) for f in mem.free]


def restore(mem: Mem, saved) -> None:
    mem.free = [list(f) for f in saved]


def decoder(a: Asm, layout, cfg, llama: bool) -> None:
    """The Level-3 decoder blocks (decoder_block_llama / decoder_block_t5) from the templates above:
    rms_norm (template), q/k/v/o projections (gemm template), rope (llama), attention, residual adds,
    rms_norm, then the gated SiLU (llama) or ReLU (t5) feed-forward with the down projection stored
    [H, F] (linear template with a zero bias), residual add; in blocks of rows when memory is short."""
    S, NH, D, F = cfg["S"], cfg["NH"], cfg["D"], cfg["F"]
    H = NH * D
    ad = {n: p.address for n, p in layout.placements.items()}
    mem = Mem(layout)
    consts(a)
    hb, x2 = mem.alloc(S * H * 2), mem.alloc(S * H * 2)
    norm = B.gen_norm(False)
    sub(a, norm, {"M": S, "N": H}, "norm1", x=ad["x"], gamma=ad["g"], y=hb)
    saved = mark(mem)
    q, k, v, att = (mem.alloc(S * H * 2) for _ in range(4))
    w = ad["wqkvo"]
    for i, dst in enumerate((q, k, v)):
        matmul(a, f"proj{i}", hb, w + i * H * H * 2, dst, S, H, H)
    if llama:
        tiles = mem.alloc(D * 16)
        cs = ad["cs"]
        for t in (q, k):
            rope_rows(a, t, cs, cs + S * (D // 2) * 2, t, S, NH, D, tiles)
    attention(a, mem, "att", q, k, v, att, S, NH, NH, D, scale=llama,
              bias=None if llama else ad["bias"])
    matmul(a, "proj3", att, w + 3 * H * H * 2, x2, S, H, H)
    add(a, ad["x"], x2, x2, S * H)
    restore(mem, saved)
    sub(a, norm, {"M": S, "N": H}, "norm2", x=x2, gamma=ad["g"] + H * 2, y=hb)
    wf = ad["wffn" if llama else "wff"]
    zb = mem.alloc(H * 2)
    fill(a, zb, (H * 2 + 31) // 32 * 32)
    tiles = mem.alloc(256)
    mb, bufs = row_blocks(mem, S, F * 2 + H * 2, 2 if llama else 1)
    g, u = bufs[0], bufs[-1]
    o = bufs[0] + mb * F * 2  # [mb, H] after g
    for r in range(0, S, mb):
        hr = hb + r * H * 2
        matmul(a, f"ffg{r}", hr, wf, g, mb, H, F)
        if llama:
            matmul(a, f"ffu{r}", hr, wf + H * F * 2, u, mb, H, F)
            sub(a, B.gen_unary_pwl("silu"), {"N": mb * F}, f"silu{r}", x=g, y=g)
            hadamard(a, g, u, u, mb * F, tiles)
        else:
            sub(a, B.gen_relu, {"N": mb * F}, f"relu{r}", x=g, y=g)
        linear(a, f"ffd{r}", u, wf + (2 if llama else 1) * H * F * 2, zb, o, mb, F, H)
        add(a, x2 + r * H * 2, o, ad["y"] + r * H * 2, mb * H)
