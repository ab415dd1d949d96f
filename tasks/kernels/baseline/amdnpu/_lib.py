"""Building blocks of the amdnpu Level-2/3 template kernels (tasks/kernels/baseline/amdnpu/<task>.py).

The Level-1 templates of tasks/kernels/baseline/amdnpu.py (matrix products, softmax, norms,
piecewise-linear silu, convolution) are reused as they are: each runs as a sub-kernel on buffers in
data memory (`sub`, which gives its labels a unique prefix so that several can share one program).
What Level 1 has no template for is written here:

* `Mem`: intermediate buffers in the data memory no tensor occupies (the unused parts of the
  input, output and neighbour regions; the scratch region 0xF000.. stays the Level-1 helpers').
  Inputs are only read. (The evaluator's memory-integrity check has to count that free memory as
  scratch at levels 2-3, as PLENA's layout counts its HBM after the inputs: a decoder block's q, k,
  v and residual stream cannot fit the 4 KiB scratch region.)
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
        for lo, hi in ((B.PROGRAM_END, 0x9000), (0x9000, 0xF000), (0x10000, 0x40000)):
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


def roll_repeats(b: Asm, lines: list[str], size: int = 6, least: int = 3) -> list[str]:
    """Runs of `least` or more identical groups of `size` straight-line operations (the unrolled hinge
    pairs of the piecewise-linear templates) become a loop of one group per iteration counted in r30
    (no template uses it)."""
    assert not any(re.search(r"\br30\b", line) for line in lines)
    out, i = [], 0
    plain = lambda l: l.startswith("    ") and not l.strip().startswith(("//", "j", "movxm")) and ";" not in l
    while i < len(lines):
        g = lines[i:i + size]
        n = 1
        if len(g) == size and all(plain(l) for l in g):
            while lines[i + n * size:i + (n + 1) * size] == g:
                n += 1
        if n >= least:
            top = b.new("roll")
            # one group per iteration: the jump's 5 delay slots take 5 of its operations (delay_slots),
            # so a second group would only grow the program
            out += [f"    movxm r30, #{n}", f"{top}:"] + g + ["    add r30, r30, #-1", f"    jnz r30, #{top}"]
            i += n * size
        else:
            out.append(lines[i])
            i += 1
    return out


def sub(a: Asm, gen, cfg: dict, prefix: str, **addrs) -> None:
    """Run a Level-1 template generator gen(asm, cfg, layout) on the buffers addrs, inside a: its code
    labels get the prefix, its tables are shared with identical ones already in a."""
    b = Asm()
    gen(b, cfg, fake_layout(**addrs))
    b.lines = roll_repeats(b, b.lines)
    _merge(a, b, prefix)


def sub_text(a: Asm, text: str, prefix: str) -> None:
    """A whole kernel's text (.text ... done [.data ...]) spliced into a, as sub() does."""
    b = Asm()
    section = ".text"
    for line in text.splitlines():
        s = line.strip()
        if s in (".text", ".data"):
            section = s
            continue
        if section == ".text":
            if s != "done":
                b.lines.append(line)
        elif s:
            b.data.append(line)
    _merge(a, b, prefix)


def _merge(a: Asm, b: Asm, prefix: str) -> None:
    tables = getattr(a, "_tables", None)
    if tables is None:
        tables = a._tables = {}
    ren_map = {}
    for line in b.lines:
        m = _LABEL.match(line)
        if m:
            ren_map[m.group(1)] = f"{prefix}_{m.group(1)}"
    new_data = []
    runtime = getattr(a, "_runtime", {})
    for name, lines in _data_blocks(b.data):
        if name in runtime:
            ren_map[name] = str(runtime[name])
            continue
        body = tuple(lines[2:]) if lines[0].strip().startswith(".p2align") else tuple(lines[1:])
        if tables.get(name) == body:
            continue
        if name in tables:
            ren_map[name] = f"{prefix}_{name}"
        else:
            tables[name] = body
        new_data += lines
    ren_map = {k: v for k, v in ren_map.items() if k != v}
    if ren_map:
        pat = re.compile(r"\b(" + "|".join(sorted(ren_map, key=len, reverse=True)) + r")\b")
        ren = lambda s: pat.sub(lambda m: ren_map[m.group(1)], s)
        b.lines = [ren(s) for s in b.lines]
        new_data = [ren(s) for s in new_data]
    a.lines += b.lines
    a.data += new_data


def emit(a: Asm, key: str, prefix: str, gen, cfg: dict, **addrs) -> None:
    """A sub-kernel: inline (sub), or a call of the routine `key` when the kernel has an Outliner."""
    ol = getattr(a, "_ol", None)
    if ol is None:
        sub(a, gen, cfg, prefix, **addrs)
    else:
        ol.call(a, key, gen, cfg, **addrs)


def fast_sub(asm: Asm, name: str, cfg: dict, prefix: str, **addrs) -> bool:
    """When the kernel is built with faster sub-kernels (a._fast, set by the reference generators:
    name -> fn(cfg, **addrs) -> kernel text or None where it does not apply), splice one in."""
    fns = getattr(asm, "_fast", None)
    if not fns or getattr(asm, "_ol", None) is not None or name not in fns:
        return False
    text = fns[name](cfg, **addrs)
    if text is None:
        return False
    sub_text(asm, text, prefix)
    return True


def fast_panel(asm: Asm, name: str, cfg: dict, prefix: str, size: int, **addrs) -> bool:
    """fast_sub for the matrix references (gemm, linear), which copy their B / w operand a panel at a
    time into MAC tiles: the panel buffer (size bytes) is free memory (asm._mem) for the sub-kernel's
    duration."""
    mem = getattr(asm, "_mem", None)
    if mem is None or not getattr(asm, "_fast", None) or name not in asm._fast:
        return False
    saved = mark(mem)
    try:
        buf = mem.alloc(size)
    except MemoryError:
        return False
    finally:
        restore(mem, saved)
    return fast_sub(asm, name, cfg, prefix, buf=buf, **addrs)


def matmul(a: Asm, prefix, pa, pb, pc, M, K, N) -> None:
    """C[M, N] = A[M, K] @ B[K, N] (the Level-1 gemm template, or the faster reference's: fast_panel)."""
    if fast_panel(a, "gemm", {"M": M, "K": K, "N": N}, prefix, K * 32 * (2 if N % 32 == 0 else 1), a=pa, b=pb, c=pc):
        return
    def gen(asm, cfg, lay):
        B.setup_modes(asm)
        pl = lay.placements
        B.gen_matmul(asm, pl["ma"].address, pl["mb"].address, pl["mc"].address, M, K, N)
    emit(a, "mm", prefix, gen, {}, ma=pa, mb=pb, mc=pc)


def linear(a: Asm, prefix, x, w, bias, y, M, K, N) -> None:
    """y[M, N] = x[M, K] @ w[N, K]^T + bias[N] (the Level-1 linear template, or the faster reference's)."""
    if fast_panel(a, "linear", {"M": M, "K": K, "N": N}, prefix, K * 32, x=x, w=w, bias=bias, y=y):
        return
    emit(a, "lin", prefix, B.gen_linear, {"M": M, "K": K, "N": N}, x=x, w=w, bias=bias, y=y)


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
                self.i = st.var(count - 1)  # the jump tests the count before its delay slots decrement it
                self.top = a.new("mloop")
                a.label(self.top)
                return self

            def __exit__(self, *exc):
                st.get("r6", self.i)
                a(f"jnz r6, #{self.top}")
                a(f"add r6, r6, #-1 {B.DS_TAG}")
                a(f"st r6, [p7, #{4 * self.i}] {B.DS_TAG}")
        return _L()


def fill(a: Asm, dst: int, nbytes: int, value: float = 0.0) -> None:
    """dst[..nbytes] = value (bf16), nbytes a multiple of 32."""
    assert nbytes % 32 == 0 and dst % 32 == 0
    if value == 0.0:
        a("vsub.16 x11, x11, x11")
    else:
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
    n = row_bytes // 32
    with a.loop("r7", rows):
        for c in range(n):  # (loads into different registers: one load latency per row)
            a(f"vlda wl{c % 8}, [p6], #32")
        for c in range(n):
            a(f"vst wl{c % 8}, [p7], #32")
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
    n = row_bytes // 32
    regs = (0, 1, 2, 4)
    for r in regs:
        a(f"vsub.16 x{r}, x{r}, x{r}")
    with a.loop("r7", rows):
        for c in range(n):  # (four registers and accumulators: one latency chain per row)
            a(f"vlda wl{regs[c % 4]}, [p4], #32")
        for c in range(n):
            a(f"vmul.f bml{c % 4}, x3, x{regs[c % 4]}, r9")
        for c in range(n):
            a(f"vconv.bf16.fp32 wl{5 + c % 4}, bml{c % 4}")
            a(f"vst wl{5 + c % 4}, [p5], #32")
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


def consts(a: Asm) -> None:
    """Tables of this module (once per kernel): c_pair = [I4 | I4]; c_cols = the vsel.16 masks of the
    four columns of a 4x4 block (lanes 4i + t)."""
    a.table("c_pair", B.tile_words({**{8 * i + i: 1.0 for i in range(4)}, **{8 * i + i + 4: 1.0 for i in range(4)}}))
    words = []
    for t in range(4):
        m = sum(1 << (4 * i + t) for i in range(4))
        words += [m & 0xffff, m >> 16]
    a.table("c_cols", words, align=2)  # (scalar loads)


def diag_tiles(a: Asm, src: str, tiles: int, blocks: int = 1) -> None:
    """The diagonal A tiles of blocks x 16 bf16 values at pointer `src` (advanced past them): block b,
    tile t (at tiles + 256 b + 64 t, zero off the diagonal) has A[i][i] = src[16 b + 4i + t].
    Uses r1..r6, p6, p7, m4..m7."""
    a("movxm m6, #8")
    a("movxm m7, #18")
    a("movxm m5, #-30")   # next t: back 4 values, one on
    a("movxm m4, #-8")    # next tile: 72 - 8 + ... (st ends at +72, the next tile is at +64)
    a(f"movxm p7, #{tiles}")
    a(f"mov p6, {src}")
    with a.loop("r1", blocks):
        with a.loop("r2", 4):
            for r in ("r3", "r4", "r5", "r6"):
                a(f"lda.u16 {r}, [p6], m6")
            for r in ("r3", "r4", "r5", "r6"):
                a(f"st.s16 {r}, [p7], m7")
            a("padda [p7], m4")
            a("padda [p6], m5")
        a("padda [p6], #24")  # 4 x -30 + 4 x 32 bytes + 16 = 32 bytes on from the block start
    a(f"mov {src}, p6")


def zero_tiles(a: Asm, tiles: int, count: int) -> None:
    a("vsub.16 x0, x0, x0")
    a(f"movxm p6, #{tiles}")
    with a.loop("r7", count):
        a("vst wl0, [p6], #32")
        a("vst wl0, [p6], #32")


def hadamard_block(a: Asm, tiles, qreg: str, acc: str, neg: bool = False, unroll: bool = False) -> None:
    """acc (+|-)= p * q for the 16 lanes of q in wl of x[qreg] (wh zero) and the four diagonal tiles of
    p at `tiles` (an address or a register). Uses x1, x2, x11, p5, p6, r7, r20; r9 = 0 (unroll: the
    four steps straight-line, in x1..x8 and r20..r23, no loop)."""
    _ptr(a, "p5", tiles)
    a("movxm p6, #c_cols")
    a("vsub.16 x11, x11, x11")
    op = "vmsc.f" if neg else "vmac.f"
    if unroll:
        for t in range(4):
            a(f"vlda wl{1 + t}, [p5], #32")
            a(f"vlda wh{1 + t}, [p5], #32")
            a(f"lda r{20 + t}, [p6], #4")
            a(f"vsel.16 x{5 + t}, x11, {qreg}, r{20 + t}")
            a(f"{op} {acc}, {acc}, x{1 + t}, x{5 + t}, r9")
        return
    with a.loop("r7", 4):
        a("vlda wl1, [p5], #32")
        a("vlda wh1, [p5], #32")
        a("lda r20, [p6], #4")
        a(f"vsel.16 x2, x11, {qreg}, r20")
        a(f"{op} {acc}, {acc}, x1, x2, r9")


def hadamard(a: Asm, p, q, out, n: int, tiles: int) -> None:
    """out[n] = p * q element-wise (n a multiple of 16; out may be q). tiles: 256 bytes."""
    assert n % 16 == 0
    if fast_sub(a, "hadamard", {"N": n}, a.new("had"), p=p, q=q, out=out, tiles=tiles):
        return
    a.comment("element-wise product: four diagonal-tile MACs per 16 lanes")
    a("movxm r9, #0")
    zero_tiles(a, tiles, 4)
    _ptr(a, "p0", p)
    _ptr(a, "p1", q)
    _ptr(a, "p2", out)
    with a.loop("r0", n // 16):
        diag_tiles(a, "p0", tiles)
        a("vsub.16 x0, x0, x0")
        a("vlda wl0, [p1], #32")
        a("vclr cm0")
        hadamard_block(a, tiles, "x0", "bml0", unroll=True)
        a("vconv.bf16.fp32 wl9, bml0")
        a("vst wl9, [p2], #32")


def rope_rows(a: Asm, x, cos, sin, y, S: int, NH: int, D: int, tiles: int) -> None:
    """Rotate-half RoPE of x[S, NH*D] (cos, sin [S, D/2]) into y (may be x).
    Per position: the diagonal tiles of cos and sin (D/2 values each), then per head and 16-lane block
    y1 = x1 cos - x2 sin and y2 = x2 cos + x1 sin (eight MACs each). tiles: D * 16 bytes."""
    half = D // 2
    assert half % 16 == 0
    nb = half // 16
    a.comment("rope: diagonal tiles of cos and sin per position, eight MACs per 16 outputs")
    a("movxm r9, #0")
    zero_tiles(a, tiles, 2 * nb * 4)
    _ptr(a, "p0", cos)
    _ptr(a, "p1", sin)
    _ptr(a, "p2", x)
    _ptr(a, "p3", y)
    st = tiles + 256 * nb
    with a.loop("r0", S):
        diag_tiles(a, "p0", tiles, nb)
        diag_tiles(a, "p1", st, nb)
        with a.loop("r8", NH):
            a(f"movxm r10, #{tiles}")
            with a.loop("r11", nb):
                a("vsub.16 x9, x9, x9")
                a("vsub.16 x10, x10, x10")
                a("vlda wl9, [p2, #0]")           # x1 block
                a("mov p4, p2")
                a(f"padda [p4], #{2 * half}")
                a("vlda wl10, [p4, #0]")          # x2 block
                a("vclr cm0")
                a(f"movxm r12, #{256 * nb}")
                a("add r12, r10, r12")            # the sin tiles of this block
                hadamard_block(a, "r10", "x9", "bml0", unroll=True)
                hadamard_block(a, "r12", "x10", "bml0", neg=True, unroll=True)
                hadamard_block(a, "r10", "x10", "bmh0", unroll=True)
                hadamard_block(a, "r12", "x9", "bmh0", unroll=True)
                a("vconv.bf16.fp32 wl1, bml0")
                a("vconv.bf16.fp32 wl2, bmh0")
                a("vst wl1, [p3, #0]")
                a("mov p4, p3")
                a(f"padda [p4], #{2 * half}")
                a("vst wl2, [p4, #0]")
                a("padda [p2], #32")
                a("padda [p3], #32")
                a("movxm r13, #256")
                a("add r10, r10, r13")
            a(f"padda [p2], #{2 * D - 32 * nb}")
            a(f"padda [p3], #{2 * D - 32 * nb}")


def pad32(n: int) -> int:
    return max(32, (n + 31) // 32 * 32)


def attention(a: Asm, mem: Mem, tag: str, q: int, k: int, v: int, o: int, S: int, NH: int, NKV: int, D: int,
              scale: bool = True, bias: int | None = None) -> None:
    """o[S, NH*D] = per head softmax(q_h k_g^T (/ sqrt(D)) (+ bias[h])) v_g, g = h // (NH / NKV);
    q, o rows NH*D wide, k, v rows NKV*D wide; bias [NH, S, S] or None. Per K/V head the head's k and v
    are copied into [Sp, D] buffers (Sp = S padded to a multiple of 32 with zero rows; the linear
    template's bias row gives the padding keys the score NEG), per query head and block of R rows:
    scores (linear template), + bias, softmax (template), @ v (gemm template)."""
    quick = bool(getattr(a, "_fast", None))  # the faster sub-kernels
    Sp = (S + 63) // 64 * 64 if quick else pad32(S)  # (the Level-1 softmax reference takes rows of 64 k)
    R = 32 if S % 32 == 0 else S
    assert S % R == 0 and R % 4 == 0 and D % 16 == 0 and D * 2 % 32 == 0
    direct = NKV == 1 and Sp == S  # k, v are [S, D] already: no copies
    kc, vc = (k, v) if direct else (mem.alloc(Sp * D * 2), mem.alloc(Sp * D * 2))
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
        if not direct:
            st.get("r17", kp)
            copy_rows(a, "r17", NKV * D * 2, kc, D * 2, S, D * 2)
            st.get("r17", vp)
            copy_rows(a, "r17", NKV * D * 2, vc, D * 2, S, D * 2)
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
                if not fast_sub(a, "softmax", {"M": R, "N": Sp}, a.new(tag + "m"), x=sc, y=sc):
                    sub(a, B.gen_softmax, {"M": R, "N": Sp}, a.new(tag + "m"), x=sc, y=sc)
                matmul(a, a.new(tag + "v"), sc, vc, ob, R, Sp, D)
                st.get("r17", orow)
                copy_rows(a, ob, D * 2, "r17", NH * D * 2, R, D * 2)
                st.add(qr, R * NH * D * 2)
                st.add(orow, R * NH * D * 2)
            st.add(qp, D * 2)
            st.add(op, D * 2)
        st.add(kp, D * 2)
        st.add(vp, D * 2)


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
    [H, F] (linear template with a zero bias), residual add; in blocks of rows when memory is short.
    Repeated sub-kernels are routines (Outliner) and the exp / silu tables are built at run time:
    the program has to fit its 16 KiB."""
    S, NH, D, F = cfg["S"], cfg["NH"], cfg["D"], cfg["F"]
    H = NH * D
    ad = {n: p.address for n, p in layout.placements.items()}
    mem = Mem(layout)
    ol = Outliner(a, mem)
    consts(a)
    for fn in ("exp", "silu") if llama else ("exp",):
        runtime_pwl(a, mem, fn)
    runtime_recips(a, mem)
    hb, x2 = mem.alloc(S * H * 2), mem.alloc(S * H * 2)  # x2 = x + attention (x is an input: only read)
    norm = B.gen_norm(False)
    emit(a, "norm", "norm1", norm, {"M": S, "N": H}, x=ad["x"], gamma=ad["g"], y=hb)
    saved = mark(mem)
    q, k, v = (mem.alloc(S * H * 2) for _ in range(3))
    att = q  # each block of query rows is read (scaled copy) before its outputs are written
    w = ad["wqkvo"]
    for i, dst in enumerate((q, k, v)):
        matmul(a, f"proj{i}", hb, w + i * H * H * 2, dst, S, H, H)
    if llama:
        tiles = mem.alloc(D * 16)
        cs = ad["cs"]

        def rope(asm, cfg_, lay):
            pl = lay.placements
            rope_rows(asm, pl["x"].address, pl["c"].address, pl["s"].address, pl["x"].address, S, NH, D,
                      pl["t"].address)
        for t in (q, k):
            emit(a, "rope", f"rope{t}", rope, {}, x=t, c=cs, s=cs + S * (D // 2) * 2, t=tiles)
    attention(a, mem, "att", q, k, v, att, S, NH, NH, D, scale=llama,
              bias=None if llama else ad["bias"])
    matmul(a, "proj3", att, w + 3 * H * H * 2, hb, S, H, H)
    add(a, ad["x"], hb, x2, S * H)
    restore(mem, saved)
    emit(a, "norm", "norm2", norm, {"M": S, "N": H}, x=x2, gamma=ad["g"] + H * 2, y=hb)
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
            emit(a, "silu", f"silu{r}", B.gen_unary_pwl("silu"), {"N": mb * F}, x=g, y=g)
            emit(a, "had", f"had{r}", lambda asm, c_, lay: hadamard(asm, g, u, u, mb * F, tiles), {})
        else:
            emit(a, "relu", f"relu{r}", B.gen_relu, {"N": mb * F}, x=g, y=g)
        linear(a, f"ffd{r}", u, wf + (2 if llama else 1) * H * F * 2, zb, o, mb, F, H)
        add(a, x2 + r * H * 2, o, ad["y"] + r * H * 2, mb * H)
    ol.finalize(a)


_MOVXM = re.compile(r"^\s*movxm (\w+), #(-?\w+)\s*$")


_MOVXM_R = re.compile(r"^(\s*)movxm (r\d+), #(-?\d+)\s*$")


def short_moves(line: str) -> str:
    """`movxm rN, #v` (long slot, 6 bytes) as `movx rN, #v` (4 bytes) when v fits 11 bits."""
    m = _MOVXM_R.match(line)
    if m and -1024 <= int(m.group(3)) <= 1023:
        return f"{m.group(1)}movx {m.group(2)}, #{m.group(3)}"
    return line


def _p7_dead(lines: list[str], k: int) -> bool:
    """p7 is written before it is read from line k on (straight-line code only: a label or a jump
    first counts as a read)."""
    for line in lines[k:]:
        t = line.strip()
        if t.endswith(":") or t.startswith("j"):
            return False
        if re.search(r"\bp7\b", t):
            return bool(re.match(r"(movxm|mov|mova|lda) p7,", t))
    return False


class Outliner:
    """Sub-kernels used more than once become routines, emitted once after the kernel's `done`: the
    instances of a routine differ only in `movxm reg, #imm` lines (addresses and sizes), which become
    parameters: each call has a table of them in .data, and stores its address and the return
    address into a parameter block before it jumps; the routine keeps the table's address in r31
    (no template uses r31) and loads each parameter from it (through p7, saved in r30 where it is
    live: r30 is otherwise only the counter of roll_repeats' loops), then returns with `j p7`. Program memory is 16 KiB (dm[0..0x4000]), the composites need this."""

    def __init__(self, a: Asm, mem: Mem):
        self.pb = mem.alloc(4 * 64)
        self.inst: dict[str, list[list[str]]] = {}
        a._ol = self

    def call(self, a: Asm, key: str, gen, cfg: dict, **addrs) -> None:
        b = Asm()
        b._tables = getattr(a, "_tables", {})
        a._tables = b._tables
        b._runtime = getattr(a, "_runtime", {})
        sub(b, gen, cfg, "R" + key, **addrs)
        assert not any(re.search(r"\br31\b", line) for line in b.lines), "r31 is the routines' temporary"
        a.data += b.data
        self.inst.setdefault(key, []).append(b.lines)
        a.lines.append(f"@@CALL {key} {len(self.inst[key]) - 1}")

    def finalize(self, a: Asm) -> None:
        params, bodies = {}, []
        for key, insts in self.inst.items():
            if len(insts) == 1:
                continue
            n = len(insts[0])
            assert all(len(i) == n for i in insts), key
            pos = []
            for k in range(n):
                lines = {i[k] for i in insts}
                if len(lines) > 1:
                    ms = [_MOVXM.match(i[k]) for i in insts]
                    assert all(ms) and len({m.group(1) for m in ms}) == 1, (key, lines)
                    pos.append(k)
            params[key] = pos
            bodies += [f"R{key}_entry:", f"    movxm p7, #{self.pb}", "    lda r31, [p7, #4]"]
            body = insts[0]
            for k, line in enumerate(body):
                if k in pos:
                    reg = _MOVXM.match(line).group(1)
                    off = 4 * pos.index(k)
                    if reg.startswith("p"):
                        bodies += [f"    mov {reg}, r31", f"    lda {reg}, [{reg}, #{off}]"]
                    elif _p7_dead(body, k + 1):
                        bodies += ["    mov p7, r31", f"    lda {reg}, [p7, #{off}]"]
                    else:
                        bodies += ["    mov r30, p7", "    mov p7, r31", f"    lda {reg}, [p7, #{off}]", "    mov p7, r30"]
                else:
                    bodies.append(line)
            bodies += [f"    movxm p7, #{self.pb}", "    lda p7, [p7, #0]", "    j p7"]
        out = []
        for line in a.lines:
            if not line.startswith("@@CALL"):
                out.append(line)
                continue
            _, key, idx = line.split()
            inst = self.inst[key][int(idx)]
            if key not in params:
                out += inst
                continue
            ret = a.new("ret")
            out.append(f"    movxm p7, #{self.pb}")
            if params[key]:
                a.data += ["    .p2align 2", f"{ret}_args:",
                           "    .long " + ", ".join(_MOVXM.match(inst[k]).group(2) for k in params[key])]
                out += [f"    movxm r6, #{ret}_args", "    st r6, [p7, #4]"]
            out += [f"    movxm r6, #{ret}", "    st r6, [p7, #0]", f"    j #R{key}_entry", f"{ret}:"]
        a.lines = [short_moves(line) for line in out + ["    done"] + bodies]
        a._ol = None


def runtime_recips(a: Asm, mem: Mem) -> None:
    """The reciprocal tables of the Level-1 templates (t_rec, t_rsqrt: bf16 values in [0.5, 1], high
    byte 0x3F) built at run time from their low bytes: interleaving the bytes with 0x3F bytes
    (vshuffle mode 20) gives the 16-bit values, 32 per step. Half the bytes of program image."""
    b = Asm()
    B.common_tables(b)
    blocks = {name: [int(v) for l in lines if l.strip().startswith(".short")
                     for v in l.strip()[6:].split(",")] for name, lines in _data_blocks(b.data)}
    names = [n for n in ("t_rec", "t_rsqrt") if n in blocks]
    vals = [v for n in names for v in blocks[n]]
    if not names or any(not 0x3F00 <= v <= 0x3FFF for v in vals) or len(vals) % 32:
        return
    runtime = getattr(a, "_runtime", None)
    if runtime is None:
        runtime = a._runtime = {}
    dest = mem.alloc(2 * len(vals))
    off = 0
    for n in names:
        runtime[n] = dest + off
        off += 2 * len(blocks[n])
    low = [v & 0xFF for v in vals]
    a.table("c_recip_bytes", [low[i] | low[i + 1] << 8 for i in range(0, len(low), 2)])
    a.comment("t_rec, t_rsqrt: 0x3F00 + their low bytes")
    a(f"movxm r6, #{0x3F3F}")
    a(f"movxm p6, #{B.SCRATCH}")
    a("st.s16 r6, [p6, #0]")
    a("vlda wl1, [p6, #0]")
    a("movxm r10, #2")
    B.broadcast(a, "x1")
    a("movxm r11, #20")
    a("movxm p0, #c_recip_bytes")
    a(f"movxm p1, #{dest}")
    with a.loop("r0", len(vals) // 32):
        a("vlda wl0, [p0], #32")
        a("vshuffle x2, x0, x1, r11")
        a("vst wl2, [p1], #32")
        a("vst wh2, [p1], #32")


def runtime_pwl(a: Asm, mem: Mem, fn: str) -> None:
    """The piecewise-linear table pwl_<fn> of the Level-1 templates built at run time from its hinge
    pairs (8 bytes a pair instead of 128) into free data memory; sub() points the templates at it."""
    pairs = B.pwl_pairs(fn)
    dest = mem.alloc(128 * len(pairs))
    runtime = getattr(a, "_runtime", None)
    if runtime is None:
        runtime = a._runtime = {}
    runtime["pwl_" + fn] = dest
    words = [B.bfbits(v) for op, ta, ca, tb, cb in pairs for v in (ta, ca, tb, cb)]
    a.table(f"c_pwlc_{fn}", words, align=2)  # (scalar loads)
    a.comment(f"pwl_{fn}: per hinge pair the knot vector [ta x16 | tb x16] and the tile [ca I4 | cb I4]")
    a(f"movxm p0, #c_pwlc_{fn}")
    a(f"movxm p1, #{dest}")
    a("vsub.16 x0, x0, x0")
    a("movxm m2, #18")
    with a.loop("r0", len(pairs)):
        for r in ("r3", "r4", "r5", "r6"):
            a(f"lda.u16 {r}, [p0], #2")
        for r in ("r3", "r5"):
            with a.loop("r1", 16):
                a(f"st.s16 {r}, [p1], #2")
        a("vst wl0, [p1, #0]")
        a("vst wl0, [p1, #32]")
        for r, off in (("r4", 0), ("r6", 8)):
            a("mov p2, p1")
            if off:
                a(f"padda [p2], #{off}")
            for _ in range(4):
                a(f"st.s16 {r}, [p2], m2")
        a("padda [p1], #64")


def attention_generator(heads):
    """generate() of the attention tasks: heads(cfg) -> (NH, NKV); q, k, v, o as the tasks name them."""
    def generate(task, cfg, layout, spec, fast=None):
        """fast: faster sub-kernels (the reference generator's, see fast_sub()), else the templates."""
        a = Asm()
        a._fast = fast
        mem = a._mem = Mem(layout)
        consts(a)
        ad = {n: p.address for n, p in layout.placements.items()}
        nh, nkv = heads(cfg)
        attention(a, mem, "at", ad["q"], ad["k"], ad["v"], ad["o"], cfg["S"], nh, nkv, cfg["D"])
        return B.preserve(a.text())
    return generate


def decoder_generator(llama: bool):
    """generate() of decoder_block_llama (llama) and decoder_block_t5."""
    def generate(task, cfg, layout, spec):
        a = Asm()
        decoder(a, layout, cfg, llama=llama)
        return B.preserve(a.text())
    return generate


def ffn_generator(gated: bool):
    """generate() of ffn (y = silu(x @ w1) @ w2) and, gated, swiglu (y = (silu(x @ wg) * (x @ wu)) @ wd):
    per block of rows (all M when the [M, F] intermediates fit), the gemm template, the silu template,
    the element-wise product; fast: the reference generator's sub-kernels (see fast_sub())."""
    def generate(task, cfg, layout, spec, fast=None):
        M, H, F = cfg["M"], cfg["H"], cfg["F"]
        a = Asm()
        a._fast = fast
        mem = a._mem = Mem(layout)
        consts(a)
        ad = {n: p.address for n, p in layout.placements.items()}
        w_in, w_out = ("wg", "wd") if gated else ("w1", "w2")
        tiles = mem.alloc(256) if gated else None
        mb, bufs = row_blocks(mem, M, F * 2, 2 if gated else 1)
        g, u = bufs[0], bufs[-1]
        for r in range(0, M, mb):
            xr = ad["x"] + r * H * 2
            matmul(a, f"gate{r}", xr, ad[w_in], g, mb, H, F)
            if gated:
                matmul(a, f"up{r}", xr, ad["wu"], u, mb, H, F)
            if not fast_sub(a, "silu", {"N": mb * F}, f"act{r}", x=g, y=g):
                sub(a, B.gen_unary_pwl("silu"), {"N": mb * F}, f"act{r}", x=g, y=g)
            if gated:
                hadamard(a, g, u, u, mb * F, tiles)
            matmul(a, f"down{r}", u, ad[w_out], ad["y"] + r * H * 2, mb, F, H)
        return B.preserve(a.text())
    return generate
