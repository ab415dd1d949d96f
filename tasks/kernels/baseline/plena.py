"""PLENA baselines: template kernels in the style of PLENA's own compiler (PLENA_Compiler
asm_templates): one straightforward loop nest per task, every tensor prefetched before the compute
that uses it, no double buffering, the matrix machine used the way the ISA doc's "Writing
kernels" describes it (M_MM per BLEN x BLEN output block and K tile, then M_MM_WO; for a GEMV,
M_TMV per BLEN outputs and K tile, then M_MV_WO).

generate(task, cfg, layout, spec) -> assembly text for the item, or None for a task without a
template. The layout (tasks/layouts/plena.py) says where everything is; the kernel writes its
outputs where the layout reads them.

The emitter below (Prog) is shared with the reference kernels (tasks/kernels/reference/plena.py).
"""
from __future__ import annotations

from contextlib import contextmanager


class Prog:
    """Assembly text with PLENA idioms: constants, counted loops, prefetches of chunked images."""

    def __init__(self, spec, layout, cfg):
        P = spec.params
        self.VLEN, self.MLEN, self.BLEN, self.HLEN = P["VLEN"], P["MLEN"], P["BLEN"], P["HLEN"]
        self.VROWS = P["V_PREFETCH_ROWS"]
        self.TILE = self.MLEN * self.MLEN
        self.MTILES = P["MSRAM_ROWS"] // self.MLEN   # MLEN x MLEN tiles the matrix SRAM holds
        self.layout, self.cfg = layout, cfg
        self.lines: list[str] = []
        self.matmul = mm   # the product the composite templates use (the reference kernels swap in their own)
        self.vend = P["VSRAM_ROWS"] * self.VLEN   # end of the vector SRAM the composite templates allocate from
        self.vmem = None
        self.rope_rot = None

    def __call__(self, *lines: str) -> None:
        self.lines.extend(lines)

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"

    # -- addresses and registers
    def out(self, name: str) -> int:
        return self.layout.placements[name].index

    def areg(self, name: str) -> str:
        """The a register holding an input's HBM base."""
        for reg, _, what in self.layout.args:
            if what == f"address of {name} in HBM":
                return reg
        raise KeyError(name)

    def li(self, rd: str, value: int) -> None:
        """rd = value (S_ADDI_INT below 2^18, else S_LUI_INT + S_ADDI_INT)."""
        assert 0 <= value < 1 << 32
        if value < 1 << 18:
            self(f"S_ADDI_INT {rd}, gp0, {value}")
        else:
            self(f"S_LUI_INT {rd}, {value >> 12}")
            if value & 4095:
                self(f"S_ADDI_INT {rd}, {rd}, {value & 4095}")

    def add(self, rd: str, rs: str, value: int, tmp: str = "gp15") -> None:
        """rd = rs + value."""
        if value < 1 << 18:
            self(f"S_ADDI_INT {rd}, {rs}, {value}")
        else:
            self.li(tmp, value)
            self(f"S_ADD_INT {rd}, {rs}, {tmp}")

    @contextmanager
    def loop(self, reg: str, count: int):
        """C_LOOP_START reg, count ... C_LOOP_END reg (the body is emitted once; no loop for count 1)."""
        assert count >= 1
        if count == 1:
            yield
            return
        self(f"C_LOOP_START {reg}, {count}")
        yield
        self(f"C_LOOP_END {reg}")

    def scale_stride(self, n: int, stride: int | None = None, tmp: str = "gp15") -> None:
        self.li(tmp, n)
        self(f"C_SET_SCALE_REG {tmp}")
        if stride is not None:
            self.li(tmp, stride)
            self(f"C_SET_STRIDE_REG {tmp}")

    # -- vector SRAM images
    def image_size(self, rows: int, width: int) -> int:
        return -(-width // self.VLEN) * rows * self.VLEN

    def prefetch_image(self, tensor: str, dst: int, rows: int, width: int, hbm_row0: int = 0,
                       regs=("gp11", "gp12", "gp13", "gp14", "gp10")) -> None:
        """H_PREFETCH_V a [rows, width] row-major HBM tensor (from row hbm_row0) into vector SRAM at dst in
        the chunked layout [width/VLEN, rows, VLEN]; a 1-D tensor (rows = 1) as consecutive rows.
        Sets SCALE_OFFSET and STRIDE. Rows come V_PREFETCH_ROWS at a time."""
        d, o, p, l1, l2 = regs
        n = self.tensor_elems(tensor)
        a = self.areg(tensor)
        V, R = self.VLEN, self.VROWS
        if rows == 1:
            self(f"; prefetch {tensor}[{width}] -> V[{dst}]")
            self.scale_stride(n)
            self.li(d, dst)
            self.li(o, 0)
            with self.loop(l1, -(-width // (V * R))):
                self(f"H_PREFETCH_V {d}, {o}, {a}, 0, 0")
                self(f"S_ADDI_INT {d}, {d}, {V * R}")
                self(f"S_ADDI_INT {o}, {o}, {V * R}")
            return
        assert rows % R == 0 and width % V == 0, (rows, width)
        self(f"; prefetch {tensor}[{rows}, {width}] -> V[{dst}] as [{width // V}, {rows}, {V}]")
        self.scale_stride(n, width)
        self.li(d, dst)
        self.li(o, hbm_row0 * width)
        with self.loop(l1, width // V):
            self(f"S_ADDI_INT {p}, {o}, 0")
            with self.loop(l2, rows // R):
                self(f"H_PREFETCH_V {d}, {p}, {a}, 1, 0")
                self(f"S_ADDI_INT {d}, {d}, {V * R}")
                self.add(p, p, R * width)
            self(f"S_ADDI_INT {o}, {o}, {V}")

    def tensor_elems(self, tensor: str) -> int:
        """Element bytes of an HBM input's image (its SCALE_OFFSET): the layout pads level-1 rows."""
        return self.layout.hbm_elems(tensor)

    def ld(self, tensor: str) -> int:
        """Elements from one HBM row of an input to the next (the layout's row stride)."""
        return self.layout.row_stride(tensor)


# ---- element-wise ---------------------------------------------------------------------------------------
def _activation_body(p: Prog, task: str, x: str, t: str) -> None:
    """Row V[x] := f(V[x]) using the scratch row V[t]; f1 = 1.0 and the task's constants in f2.."""
    if task == "silu":  # x / (1 + exp(-x))
        p(f"V_SUB_VF {t}, {x}, f0, 0, 1", f"V_EXP_V {t}, {t}", f"V_ADD_VF {t}, {t}, f1", f"V_RECI_V {t}, {t}",
          f"V_MUL_VV {x}, {x}, {t}")
    elif task == "relu":  # x * sigmoid(k x), k = 2^32: exactly x or 0 unless |x| < 2^-27
        p(f"V_MUL_VF {t}, {x}, f2", f"V_EXP_V {t}, {t}", f"V_ADD_VF {t}, {t}, f1", f"V_RECI_V {t}, {t}",
          f"V_MUL_VV {x}, {x}, {t}")
    elif task == "gelu":  # x * sigmoid(2 sqrt(2/pi) (x + 0.044715 x^3)) = the tanh form of GELU
        p(f"V_MUL_VV {t}, {x}, {x}", f"V_MUL_VF {t}, {t}, f3", f"V_ADD_VF {t}, {t}, f2", f"V_MUL_VV {t}, {t}, {x}",
          f"V_EXP_V {t}, {t}", f"V_ADD_VF {t}, {t}, f1", f"V_RECI_V {t}, {t}", f"V_MUL_VV {x}, {x}, {t}")
    else:
        raise ValueError(task)


def activation_constants(p: Prog, task: str) -> None:
    p("S_LD_FP f1, gp0, 1                 ; f1 = 1.0")
    if task == "relu":
        p("S_ADD_FP f2, f1, f1                ; f2 = 2", "S_MUL_FP f2, f2, f2", "S_MUL_FP f2, f2, f2",
          "S_MUL_FP f2, f2, f2", "S_MUL_FP f2, f2, f2", "S_MUL_FP f2, f2, f2   ; 2^32",
          "S_SUB_FP f2, f0, f2                ; f2 = -2^32")
    elif task == "gelu":
        p("S_LD_FP f2, gp0, 2                 ; sqrt(2/pi)", "S_ADD_FP f2, f2, f2", "S_SUB_FP f2, f0, f2"
          "                ; f2 = -2 sqrt(2/pi)", "S_LD_FP f3, gp0, 3                 ; 0.044715",
          "S_MUL_FP f3, f3, f2                ; f3 = -2 sqrt(2/pi) 0.044715")


def elementwise(p: Prog, task: str) -> None:
    n = p.cfg["N"]
    y = p.out("y")
    rows = n // p.VLEN
    tmp = y + rows * p.VLEN
    p.prefetch_image("x", y, 1, n)
    activation_constants(p, task)
    p.li("gp1", y)
    p.li("gp2", tmp)
    with p.loop("gp3", rows):
        _activation_body(p, task, "gp1", "gp2")
        p(f"S_ADDI_INT gp1, gp1, {p.VLEN}")


# ---- row-wise: softmax, layer_norm, rms_norm -------------------------------------------------------------
def rowwise(p: Prog, task: str) -> None:
    M, N = p.cfg["M"], p.cfg["N"]
    V = p.VLEN
    y = p.out("y")
    chunks = N // V
    step = M * V  # from a row's chunk to its next chunk
    end = y + M * N
    p.prefetch_image("x", y, M, N)  # in place: y is x's chunked image
    vec_rows = -(-N // (V * p.VROWS)) * p.VROWS  # a [N] vector prefetched whole groups of rows
    gamma = end
    beta = gamma + vec_rows * V
    tmp = beta + vec_rows * V
    if task in ("layer_norm", "rms_norm"):
        p.prefetch_image("gamma", gamma, 1, N)
    if task == "layer_norm":
        p.prefetch_image("beta", beta, 1, N)
    if task == "softmax":
        p("S_LD_FP f4, gp0, 2                 ; -inf")
    else:
        p("S_LD_FP f4, gp0, 2                 ; 1/N", "S_LD_FP f5, gp0, 3                 ; eps")
    p.li("gp1", y)             # this row's chunk 0
    p.li("gp5", tmp)
    p.li("gp6", step)
    with p.loop("gp3", M):
        if task == "softmax":
            p("S_ADD_FP f1, f4, f0")
            p("S_ADDI_INT gp2, gp1, 0")
            with p.loop("gp4", chunks):
                p("V_RED_MAX f1, gp2, 0", "S_ADD_INT gp2, gp2, gp6")
            p("S_ADD_FP f2, f0, f0", "S_ADDI_INT gp2, gp1, 0")
            with p.loop("gp4", chunks):
                p("V_SUB_VF gp2, gp2, f1", "V_EXP_V gp2, gp2", "V_RED_SUM f2, gp2", "S_ADD_INT gp2, gp2, gp6")
            p("S_RECI_FP f2, f2", "S_ADDI_INT gp2, gp1, 0")
            with p.loop("gp4", chunks):
                p("V_MUL_VF gp2, gp2, f2", "S_ADD_INT gp2, gp2, gp6")
        else:
            if task == "layer_norm":
                p("S_ADD_FP f1, f0, f0", "S_ADDI_INT gp2, gp1, 0")
                with p.loop("gp4", chunks):
                    p("V_RED_SUM f1, gp2", "S_ADD_INT gp2, gp2, gp6")
                p("S_MUL_FP f1, f1, f4              ; mean")
            p("S_ADD_FP f2, f0, f0", "S_ADDI_INT gp2, gp1, 0")
            with p.loop("gp4", chunks):
                if task == "layer_norm":
                    p("V_SUB_VF gp2, gp2, f1")
                p("V_MUL_VV gp5, gp2, gp2", "V_RED_SUM f2, gp5", "S_ADD_INT gp2, gp2, gp6")
            p("S_MUL_FP f2, f2, f4", "S_ADD_FP f2, f2, f5", "S_SQRT_FP f2, f2", "S_RECI_FP f2, f2")
            p("S_ADDI_INT gp2, gp1, 0")
            p.li("gp7", gamma)
            if task == "layer_norm":
                p.li("gp8", beta)
            with p.loop("gp4", chunks):
                p("V_MUL_VF gp2, gp2, f2", "V_MUL_VV gp2, gp2, gp7", "S_ADDI_INT gp7, gp7, 64")
                if task == "layer_norm":
                    p("V_ADD_VV gp2, gp2, gp8", "S_ADDI_INT gp8, gp8, 64")
                p("S_ADD_INT gp2, gp2, gp6")
        p(f"S_ADDI_INT gp1, gp1, {V}")


# ---- matrix tasks ---------------------------------------------------------------------------------------
def gemv(p: Prog, task: str = "gemv") -> None:
    """y = a x with M_TMV: each M_TMV yields BLEN outputs (BLEN rows of a's tile against x), so per
    64-row block of a there are 64 / BLEN output blocks, each one M_TMV per K tile (fp32 accumulation
    over all of K) and one M_MV_WO. The block's K tiles stay in matrix SRAM when they fit (4 tiles),
    else they are prefetched again for every output block."""
    M, K = p.cfg["M"], p.cfg["K"]
    V, T, B = p.VLEN, p.TILE, p.BLEN
    kt = K // V
    slots = p.MTILES
    resident = kt <= slots
    y = p.out("y")
    x = y + -(-M // V) * V     # x's rows after y (its prefetch brings whole groups of 4 rows)
    p.prefetch_image("x", x, 1, K)
    p.scale_stride(p.tensor_elems("a"), K)
    a = p.areg("a")
    p.li("gp1", y)              # output element
    p.li("gp2", 0)              # HBM offset of this row block of a
    with p.loop("gp3", -(-M // V)):
        if resident:            # the row block's K tiles at M[0], M[T], ...
            p("S_ADDI_INT gp4, gp2, 0", "S_ADDI_INT gp7, gp0, 0")
            with p.loop("gp6", kt):
                p(f"H_PREFETCH_M gp7, gp4, {a}, 1, 0")
                p(f"S_ADDI_INT gp4, gp4, {V}", f"S_ADDI_INT gp7, gp7, {T}")
        p("S_ADDI_INT gp8, gp0, 0")   # the output block's first row inside the tile
        with p.loop("gp9", -(-min(M, V) // B)):
            p.li("gp5", x)
            if resident:
                p("S_ADDI_INT gp7, gp8, 0")
                with p.loop("gp6", kt):
                    p("M_TMV 0, gp7, gp5", f"S_ADDI_INT gp7, gp7, {T}", f"S_ADDI_INT gp5, gp5, {V}")
            else:
                p("S_ADDI_INT gp4, gp2, 0")
                with p.loop("gp6", kt):
                    p(f"H_PREFETCH_M gp0, gp4, {a}, 1, 0", "M_TMV 0, gp8, gp5")
                    p(f"S_ADDI_INT gp4, gp4, {V}", f"S_ADDI_INT gp5, gp5, {V}")
            p("M_MV_WO gp1, 0", f"S_ADDI_INT gp1, gp1, {B}", f"S_ADDI_INT gp8, gp8, {B}")
        p.add("gp2", "gp2", V * K)


def matmul(p: Prog, task: str) -> None:
    """gemm / batch_matmul / linear with M_MM (or M_TMM for linear's w[N, K]) per BLEN x BLEN block."""
    cfg = p.cfg
    B = cfg.get("B", 1)
    M, K, N = cfg["M"], cfg["K"], cfg["N"]
    V, T, BL = p.VLEN, p.TILE, p.BLEN
    act, wt = ("x", "w") if task == "linear" else ("a", "b")
    rows = B * M
    c = p.out("c" if task != "linear" else "y")
    p.prefetch_image(act, 0, rows, K)
    kt_n, nt_n = K // V, -(-N // V)
    cols = min(N, V)  # output columns per N tile
    bias = None
    if task == "linear":
        bias = c + rows * nt_n * V
        p.prefetch_image("bias", bias, 1, N)
    w = p.areg(wt)
    op = "M_TMM" if task == "linear" else "M_MM"
    ld = p.ld(wt)                   # w: K; b: N, padded to a whole number of 64-byte HBM chunks
    p.scale_stride(p.tensor_elems(wt), ld)
    p.li("gp1", 0)                  # HBM offset of this batch's weight
    p.li("gp2", 0)                  # vector SRAM row of this batch's first activation row (chunk 0)
    with p.loop("gp3", B):
        p.li("gp4", 0)              # N tile
        with p.loop("gp5", nt_n):
            # prefetch this N tile's K tiles into matrix SRAM tiles 0.. (at most 4 at a time)
            p("S_ADDI_INT gp6, gp0, 0")
            if task == "linear":   # tile (nt, kt) of w[N, K]: rows nt*64.., columns kt*64..
                p.li("gp7", V * ld)
                p("S_MUL_INT gp7, gp7, gp4", "S_ADD_INT gp7, gp7, gp1")
            else:                  # tile (kt, nt) of b[K, N]: rows kt*64.., columns nt*64..
                p(f"S_ADDI_INT gp7, gp0, {V}", "S_MUL_INT gp7, gp7, gp4", "S_ADD_INT gp7, gp7, gp1")
            assert kt_n <= 4, "K / MLEN tiles must fit matrix SRAM"
            with p.loop("gp8", kt_n):
                p(f"H_PREFETCH_M gp6, gp7, {w}, 1, 0")
                p.add("gp6", "gp6", T)
                p.add("gp7", "gp7", V if task == "linear" else V * ld)
            # output rows of this N tile: chunk nt of c, rows gp2..
            p.li("gp9", rows * V)
            p("S_MUL_INT gp9, gp9, gp4", f"S_ADDI_INT gp9, gp9, {c}", "S_ADD_INT gp9, gp9, gp2")
            p("S_ADDI_INT gp10, gp2, 0")              # activation row block
            with p.loop("gp11", M // BL):
                p("S_ADDI_INT gp12, gp0, 0")          # column offset in the tile
                with p.loop("gp13", cols // BL):
                    p("S_ADDI_INT gp14, gp12, 0", "S_ADDI_INT gp15, gp10, 0")
                    with p.loop("gp8", kt_n):
                        p(f"{op} 0, gp14, gp15")
                        p.add("gp14", "gp14", T, tmp="gp6")
                        p.add("gp15", "gp15", rows * V, tmp="gp6")
                    p("S_ADD_INT gp6, gp9, gp12", "M_MM_WO gp6, gp0, 0")
                    p(f"S_ADDI_INT gp12, gp12, {BL}")
                p(f"S_ADDI_INT gp10, gp10, {BL * V}", f"S_ADDI_INT gp9, gp9, {BL * V}")
            p("S_ADDI_INT gp4, gp4, 1")
        p.add("gp1", "gp1", K * ld)
        p(f"S_ADDI_INT gp2, gp2, {M * V}")
    if task == "linear":   # y[m, chunk] += bias[chunk]
        p.li("gp1", c)
        p.li("gp2", bias)
        with p.loop("gp3", nt_n):
            with p.loop("gp4", rows):
                p("V_ADD_VV gp1, gp1, gp2", f"S_ADDI_INT gp1, gp1, {V}")
            p(f"S_ADDI_INT gp2, gp2, {V}")


# ---- Level 2 / 3 building blocks ------------------------------------------------------------------------
# An image is a tensor in vector SRAM in PLENA's chunked layout: Img(addr, rows) holds row r of chunk c
# (columns 64c .. 64c+63) at addr + (c * rows + r) * 64. The helpers below are self-contained: each sets
# the registers it uses (gp1..gp15, f1..f7), so the composite templates chain them freely.
class Img:
    def __init__(self, addr: int, rows: int):
        self.addr, self.rows = addr, rows

    def at(self, r: int, c: int = 0) -> int:
        return self.addr + (c * self.rows + r) * 64


class W:
    """A K x N matrix operand of a product, read from HBM tensor `tensor` as 64 x 64 tiles into matrix SRAM:
    stored row-major with row stride ld from element offset off; trans: stored [N, K] (the product uses
    its transpose, M_TMM)."""

    def __init__(self, p: Prog, tensor: str | None, off: int = 0, ld: int | None = None, trans: bool = False,
                 a: str | None = None, n: int | None = None):
        self.tensor, self.off, self.trans = tensor, off, trans
        self.ld = ld if ld is not None else p.ld(tensor)
        self.n = n if n is not None else p.tensor_elems(tensor)
        self.a = a or p.areg(tensor)

    def tile(self, kt: int, nt: int) -> int:
        return self.off + (nt * 64 * self.ld + kt * 64 if self.trans else kt * 64 * self.ld + nt * 64)


def load_rows(p: Prog, tensor: str, dst: int, nrows: int, off: int, ld: int, a: str | None = None,
              scale: int | None = None) -> None:
    """H_PREFETCH_V nrows (a multiple of 4) rows of 64 elements, ld apart from HBM element offset off, into
    consecutive vector SRAM rows from dst. Sets SCALE_OFFSET and STRIDE."""
    assert nrows % p.VROWS == 0, nrows
    p.scale_stride(p.tensor_elems(tensor) if scale is None else scale, ld)
    p.li("gp11", dst)
    p.li("gp12", off)
    with p.loop("gp13", nrows // p.VROWS):
        p(f"H_PREFETCH_V gp11, gp12, {a or p.areg(tensor)}, 1, 0", f"S_ADDI_INT gp11, gp11, {p.VROWS * 64}")
        p.add("gp12", "gp12", p.VROWS * ld, tmp="gp14")


def copy_with_zero_tail(p: Prog, tensor: str, off: int, buf: int) -> int:
    """Copy an input tensor (a whole number of 64-element rows) to HBM scratch at a5 + off, followed by zeros,
    and return the SCALE_OFFSET that reads it there (its scales are put 4096 elements past its end).

    A prefetch that runs past a tensor's elements reads its scale bytes as elements; the emulator decodes
    those at or above 0x78 (the scales of blocks of magnitude 2^-7 and more) as Inf/NaN, times the zero
    scale beyond: NaN lanes that no later mask removes. The copy's tail is zeros instead. buf: 4 rows of
    vector SRAM to stage through."""
    n = p.tensor_elems(tensor)
    assert n % 64 == 0, n
    rows = n // 64
    scale = off - off // 8 + n + 4096           # scales at a5 + scale + (off + o) / 8 = a5 + off + n + 4096 + o / 8
    for g in range(-(-rows // p.VROWS)):
        p.scale_stride(n)
        p.li("gp11", buf)
        p.li("gp12", g * p.VROWS * 64)
        p(f"H_PREFETCH_V gp11, gp12, {p.areg(tensor)}, 0, 0")
        for j in range(rows - g * p.VROWS, p.VROWS):   # rows past the tensor's end: zero (x - x of row 0)
            p.li("gp1", buf + 64 * j)
            p(f"V_SUB_VV gp1, gp11, gp11")
        p.scale_stride(scale)
        p.li("gp12", off + g * p.VROWS * 64)
        p("H_STORE_V gp11, gp12, a5, 0, 0")
    return scale


def load_image(p: Prog, tensor: str, img: Img, r0: int, nrows: int, row0: int, width: int, ld: int | None = None,
               col0: int = 0, off: int = 0) -> None:
    """Rows row0.. (nrows of them), columns col0..col0+width of a row-major HBM matrix (row stride ld, from
    element offset off) into rows r0.. of image img."""
    ld = ld if ld is not None else p.ld(tensor)
    for c in range(width // 64):
        load_rows(p, tensor, img.at(r0, c), nrows, off + row0 * ld + col0 + 64 * c, ld)


def mm(p: Prog, A: Img, r0: int, nrows: int, K: int, w: W, N: int, C: Img, c_r0: int, tmp: int | None = None,
       accumulate: bool = False, src_col: int = 0, ncols: int = 64, dst_col: int = 0,
       split: W | None = None) -> None:
    """C[c_r0.., :N] (=, or += with accumulate) A[r0..r0+nrows, :K] @ w with M_MM (M_TMM for a transposed w),
    one BLEN x BLEN block per instruction: per N tile, the K tiles go through matrix SRAM four at a time;
    groups after the first (and accumulate) write to the tmp rows and are added. src_col/ncols/dst_col
    compute output columns dst_col.. of each N tile from the tile's columns src_col.. (one N tile). split: a
    second operand of the same shape (K = 64) whose product is added in the accumulator (a value stored
    as a high and a low MXFP8 part)."""
    op = "M_TMM" if w.trans else "M_MM"
    kt_n, nt_n = K // 64, -(-N // 64)
    groups = [list(range(g, min(g + 4, kt_n))) for g in range(0, kt_n, 4)]
    p.scale_stride(w.n, w.ld)
    for nt in range(nt_n):
        for gi, grp in enumerate(groups):
            tiles = [(w, kt) for kt in grp]
            if split is not None:
                assert K == 64 and split.n == w.n and split.ld == w.ld and split.trans == w.trans
                tiles.append((split, 0))
            for s, (ww, kt) in enumerate(tiles):
                p.li("gp1", s * p.TILE)
                p.li("gp2", ww.tile(kt, nt))
                p(f"H_PREFETCH_M gp1, gp2, {ww.a}, 1, 0")
            to_tmp = accumulate or gi > 0
            assert not to_tmp or (tmp is not None and ncols == 64)
            dst = tmp if to_tmp else C.at(c_r0, nt) + dst_col
            p.li("gp3", A.at(r0, grp[0]))
            p.li("gp4", dst)
            with p.loop("gp5", nrows // p.BLEN):
                p(f"S_ADDI_INT gp6, gp0, {src_col}", "S_ADDI_INT gp7, gp4, 0")
                with p.loop("gp8", ncols // p.BLEN):
                    p("S_ADDI_INT gp9, gp6, 0", "S_ADDI_INT gp10, gp3, 0")
                    with p.loop("gp11", len(tiles)):
                        p(f"{op} 0, gp9, gp10")
                        if len(tiles) > 1:
                            p(f"S_ADDI_INT gp9, gp9, {p.TILE}")
                            if split is None:
                                p(f"S_ADDI_INT gp10, gp10, {A.rows * 64}")
                    p("M_MM_WO gp7, gp0, 0", f"S_ADDI_INT gp7, gp7, {p.BLEN}", f"S_ADDI_INT gp6, gp6, {p.BLEN}")
                p(f"S_ADDI_INT gp3, gp3, {p.BLEN * 64}", f"S_ADDI_INT gp4, gp4, {p.BLEN * 64}")
            if to_tmp:
                rows_add(p, C.at(c_r0, nt), tmp, nrows)


def rows_op(p: Prog, op: str, dst: int, src: int, nrows: int, src2: int | None = None) -> None:
    """V_<op> over nrows consecutive rows: dst[i] = src[i] op src2[i] (src2 None: dst[i] = dst[i] op src[i])."""
    a, b = (dst, src) if src2 is None else (src, src2)
    p.li("gp1", dst)
    p.li("gp2", a)
    p.li("gp3", b)
    with p.loop("gp4", nrows):
        p(f"{op} gp1, gp2, gp3", "S_ADDI_INT gp1, gp1, 64", "S_ADDI_INT gp2, gp2, 64", "S_ADDI_INT gp3, gp3, 64")


def rows_copy(p: Prog, dst: int, src: int, nrows: int, masked: bool = False) -> None:
    """dst rows = src rows (masked: only the lanes V_MASK enables)."""
    p.li("gp1", dst)
    p.li("gp2", src)
    with p.loop("gp4", nrows):
        p(f"V_ADD_VF gp1, gp2, f0, {1 if masked else 0}", "S_ADDI_INT gp1, gp1, 64", "S_ADDI_INT gp2, gp2, 64")


def rows_add(p: Prog, dst: int, src: int, nrows: int) -> None:
    rows_op(p, "V_ADD_VV", dst, src, nrows)


def rows_scale(p: Prog, addr: int, nrows: int, freg: str) -> None:
    p.li("gp1", addr)
    with p.loop("gp4", nrows):
        p(f"V_MUL_VF gp1, gp1, {freg}", "S_ADDI_INT gp1, gp1, 64")


def rows_act(p: Prog, act: str, addr: int, nrows: int, tmp: int) -> None:
    """Rows addr.. := act(rows) (silu / relu), scratch row tmp; sets f1 (and f2, f3) as activation_constants."""
    activation_constants(p, act)
    p.li("gp1", addr)
    p.li("gp2", tmp)
    with p.loop("gp4", nrows):
        _activation_body(p, act, "gp1", "gp2")
        p("S_ADDI_INT gp1, gp1, 64")


class Vmem:
    """Bump allocator of vector SRAM rows (64-element aligned)."""

    def __init__(self, start: int, end: int = 1024 * 64):
        self.top, self.end = start, end

    def take(self, n: int) -> int:
        a = self.top
        self.top += -(-n // 64) * 64
        assert self.top <= self.end, f"vector SRAM exhausted ({self.top} > {self.end})"
        return a


# ---- Level 2: feed-forward networks --------------------------------------------------------------------
def ffn(p: Prog, task: str) -> None:
    """x in place at y's image; the hidden layer [M, F] after it; the output product overwrites x."""
    cfg = p.cfg
    M, H, F = cfg["M"], cfg["H"], cfg["F"]
    X = Img(p.out("y"), M)
    mem = p.vmem = Vmem(X.addr + M * H, p.vend)
    load_image(p, "x", X, 0, M, 0, H)
    if task == "ffn":
        G = Img(mem.take(M * F), M)
        tmp = mem.take(M * 64)
        p.matmul(p, X, 0, M, H, W(p, "w1"), F, G, 0, tmp)
        for c in range(F // 64):
            rows_act(p, "silu", G.at(0, c), M, tmp)
        p.matmul(p, G, 0, M, F, W(p, "w2"), H, X, 0, tmp)
    else:  # swiglu
        G, U = Img(mem.take(M * F), M), Img(mem.take(M * F), M)
        tmp = mem.take(M * 64)
        p.matmul(p, X, 0, M, H, W(p, "wg"), F, G, 0, tmp)
        p.matmul(p, X, 0, M, H, W(p, "wu"), F, U, 0, tmp)
        for c in range(F // 64):
            rows_act(p, "silu", G.at(0, c), M, tmp)
        rows_op(p, "V_MUL_VV", G.addr, U.addr, M * F // 64)
        p.matmul(p, G, 0, M, F, W(p, "wd"), H, X, 0, tmp)


# ---- Level 2: rotary position embedding -----------------------------------------------------------------
def shifted_areg(p: Prog, tensor: str, areg: str, shift: int = 32) -> int:
    """Point areg at tensor's base - shift, so that a prefetch at offset o brings element o - shift to lane 0
    (rows shifted right by `shift` lanes; the layout puts zero bytes before every input). Returns the
    SCALE_OFFSET that finds the scales from there: n + shift - shift / 8."""
    base = next(v for reg, v, what in p.layout.args if what == f"address of {tensor} in HBM")
    p.li("gp1", base - shift)
    p(f"C_SET_ADDR_REG {areg}, gp0, gp1")
    return p.tensor_elems(tensor) + shift - shift // 8


def set_mask(p: Prog, mask: int) -> None:
    p(f"S_ADDI_INT gp1, gp0, {mask}", "C_SET_V_MASK_REG gp1")


HI, LO = 0b1100, 0b0011    # V_MASK: lanes 32..63, lanes 0..31


def rope_tables(p: Prog, cs: list, r0: int, nrows: int, C2: int, S2: int, tmp: int) -> None:
    """Rows C2[r] = [cos_r | cos_r] and S2[r] = [-sin_r | sin_r] for rows r0..r0+nrows of the [S, 32] tables:
    cs = [(tensor, off, areg, shifted areg, its SCALE_OFFSET)] for cos, sin (as shifted_areg set them up)."""
    for (t, off, a, ash, so), dst in zip(cs, (C2, S2)):
        load_rows(p, t, dst, nrows, off + r0 * 32, 32)
        load_rows(p, t, tmp, nrows, off + r0 * 32, 32, a=ash, scale=so)
        if dst == S2:
            set_mask(p, LO)
            p.li("gp1", dst)
            with p.loop("gp4", nrows):
                p("V_SUB_VF gp1, gp1, f0, 1, 1", "S_ADDI_INT gp1, gp1, 64")
        set_mask(p, HI)
        rows_copy(p, dst, tmp, nrows, masked=True)


# Every HBM row a prefetch or store moves must start on a 64-byte boundary (the emulator's rule,
# -D HBM_ROW_ALIGN=64), so lanes are not moved by prefetching shifted rows: the matrix machine moves them.
# M_BMV with a tile whose rows 0..15 are [I16 I16 I16 I16] writes segment h (lanes 16h..16h+15) of a vector
# row to every segment of output row h, exactly (one product by 1.0 per lane); masked copies then put any
# segment anywhere.
FP_SPREAD = 400          # FP SRAM entries 400..479: the pattern the spreading tile's rows are cut from


def spreading_tile(p: Prog, tile: int, stage: int, hbm_off: int, areg: str = "a5", half: bool = False) -> None:
    """Matrix SRAM tile `tile` := rows k < 16 with 1.0 at lanes k, 16 + k, 32 + k, 48 + k, zero elsewhere.
    Built from FP SRAM (zeros with 1.0 every 16 entries, so S_MAP_V_FP from FP_SPREAD + 16 - k cuts row k),
    staged in 16 vector SRAM rows at `stage`, stored to HBM scratch at areg + hbm_off (zero beyond, as the
    scratch starts) and prefetched from there. half: rows 16 + k too, with 1.0 at the lanes j where
    (j + 8) % 16 = k: the slice at tile + 1024 spreads a segment with its halves swapped (HALF_SWAP)."""
    p(f"; the spreading tile -> M[{tile}]")
    for i in range(80):
        p(f"S_ST_FP f0, gp0, {FP_SPREAD + i}")
    p("S_LD_FP f1, gp0, 1")
    for i in range(0, 80, 16):
        p(f"S_ST_FP f1, gp0, {FP_SPREAD + i}")
    for k in range(16):
        p.li("gp1", stage + 64 * k)
        p(f"S_MAP_V_FP gp1, gp0, {FP_SPREAD + (16 - k) % 16}")
    for k in range(16 if half else 0):
        p.li("gp1", stage + 64 * (16 + k))
        p(f"S_MAP_V_FP gp1, gp0, {FP_SPREAD + (24 - k) % 16}")
    p.scale_stride(64 * 64)
    for g in range(8 if half else 4):
        p.li("gp1", stage + 256 * g)
        p.li("gp2", hbm_off + 256 * g)
        p(f"H_STORE_V gp1, gp2, {areg}, 0, 0")
    fetch_spreading_tile(p, tile, hbm_off, areg)


def fetch_spreading_tile(p: Prog, tile: int, hbm_off: int, areg: str = "a5") -> None:
    """Prefetch the spreading tile that spreading_tile stored at areg + hbm_off into tile again."""
    p.scale_stride(64 * 64)
    p.li("gp1", tile)
    p.li("gp2", hbm_off)
    p(f"H_PREFETCH_M gp1, gp2, {areg}, 0, 0")


HALF_SWAP = 1024   # the spreading tile's second slice (spreading_tile(half=True)): segment halves swapped


def spread(p: Prog, tile: int, src: int, dst: int, nrows: int, slice_: int = 0) -> None:
    """For rows src[i], i < nrows: dst[4 i + h] = segment h of src[i] in all four segments (M_BMV); with
    slice_ = HALF_SWAP, its lanes 8..15 first, then 0..7."""
    p.li("gp1", src)
    p.li("gp2", dst)
    p.li("gp3", tile)
    if slice_:
        p.li("gp5", slice_)
    with p.loop("gp4", nrows):
        p(f"M_BMV {'gp5' if slice_ else 'gp0'}, gp3, gp1", "M_BMV_WO gp2, 0", "S_ADDI_INT gp1, gp1, 64",
          "S_ADDI_INT gp2, gp2, 256")


def gather(p: Prog, dst: int, src: int, step: int, nrows: int, picks: list[tuple[int, int]]) -> None:
    """For each (mask, row) in picks and i < nrows: the lanes of dst[i] that V_MASK = mask enables := those of
    the row src + row * 64 + i * step."""
    for mask, row in picks:
        set_mask(p, mask)
        p.li("gp1", dst)
        p.li("gp2", src + 64 * row)
        with p.loop("gp4", nrows):
            p("V_ADD_VF gp1, gp2, f0, 1", "S_ADDI_INT gp1, gp1, 64", f"S_ADDI_INT gp2, gp2, {step}")


ROTATE_HALF = [(1 << s, (s + 2) % 4) for s in range(4)]   # segment s of [x2 | x1] is segment s + 2 of x
DOUBLE_HALF = [(0b0101, 0), (0b1010, 1)]                   # [t | t] from the segments 0, 1 of t


def rope_tables_aligned(p: Prog, r0: int, nrows: int, C2: int, S2: int, tile: int, tmp: int, Q: int,
                        tables=(("cos", 0), ("sin", 0))) -> None:
    """Rows C2[r] = [cos_r | cos_r] and S2[r] = [-sin_r | sin_r] for rows r0..r0+nrows (a multiple of 4) of
    the [S, 32] cos and sin tables (tables: (tensor, element offset) of each), read as aligned rows of 64
    (two positions each) and spread on the matrix machine. tmp: nrows / 2 rounded up to 4 rows, Q: 2 nrows
    rows."""
    packed = -(-nrows // 8) * 4
    for (t, off), dst in zip(tables, (C2, S2)):
        load_rows(p, t, tmp, packed, off + r0 * 32, 64)
        spread(p, tile, tmp, Q, nrows // 2)
        gather(p, dst, Q, 128, nrows, DOUBLE_HALF)
    set_mask(p, LO)
    p.li("gp1", S2)
    with p.loop("gp4", nrows):
        p("V_SUB_VF gp1, gp1, f0, 1, 1", "S_ADDI_INT gp1, gp1, 64")


def rope(p: Prog, task: str) -> None:
    """Per group of 4 positions: the cos/sin rows [c | c] and [-s | s], then per head x, its rotation
    [x2 | x1] and y = x * [c | c] + [x2 | x1] * [-s | s]. Lanes move on the matrix machine (spread, gather):
    every prefetch reads 64-byte aligned rows."""
    cfg = p.cfg
    S, NH, D = cfg["S"], cfg["NH"], cfg["D"]
    assert D == 64
    Wd = NH * D
    Y = Img(p.out("y"), S)
    mem = p.vmem = Vmem(Y.addr + S * Wd, p.vend)
    C2, S2, T, XR = (mem.take(4 * 64) for _ in range(4))
    Q = mem.take(16 * 64)
    tile = 3 * p.TILE
    p.li("gp1", SCRATCH)
    p("C_SET_ADDR_REG a5, gp0, gp1")
    spreading_tile(p, tile, Q, 0)
    for g in range(S // 4):
        r0 = 4 * g
        rope_tables_aligned(p, r0, 4, C2, S2, tile, T, Q)
        for h in range(NH):
            y = Y.at(r0, h)
            load_rows(p, "x", y, 4, r0 * Wd + h * 64, Wd)
            spread(p, tile, y, Q, 4)
            gather(p, XR, Q, 256, 4, ROTATE_HALF)
            rows_op(p, "V_MUL_VV", XR, S2, 4)
            rows_op(p, "V_MUL_VV", y, C2, 4)
            rows_op(p, "V_ADD_VV", y, XR, 4)


# ---- Level 2: attention --------------------------------------------------------------------------------
FP_M, FP_L = 64, 192   # FP SRAM: running row maxima and sums of the online softmax


def attention_block(p: Prog, qbuf: int, nq: int, k: W, v: W, Sk: int, Oaddr: int, mem: Vmem, bias=None,
                    mask: int | None = None, fneg: str = "f6") -> None:
    """Rows Oaddr.. (nq of them) = softmax(Q k^T [+ bias]) v for the nq query rows at qbuf (already scaled),
    k and v [Sk, 64] (W: off = first row's element, ld = row stride; a (high, low) pair of W: the sum). The keys go 64 at a time with an online
    softmax (running max m and sum l per row in FP SRAM); the output rows accumulate in place and are
    divided by l at the end. fneg holds -inf. bias(kb, rows): add the bias of key block kb to the score
    rows; mask: a row of 0 (keys < Sk % 64) and -inf added to the scores of the last, partial key block."""
    top = mem.top
    sbuf, tmp = mem.take(nq * 64), mem.take(nq * 64)
    Q, Sc = Img(qbuf, nq), Img(sbuf, nq)
    nkb = -(-Sk // 64)
    def blk(w, kb, trans):
        if w is None:
            return None
        return W(p, w.tensor, w.off + kb * 64 * w.ld, w.ld, trans=trans, a=w.a, n=w.n)

    k, klo = k if isinstance(k, tuple) else (k, None)
    v, vlo = v if isinstance(v, tuple) else (v, None)
    for kb in range(nkb):
        p.matmul(p, Q, 0, nq, 64, blk(k, kb, True), 64, Sc, 0, split=blk(klo, kb, True))
        if bias is not None:
            bias(kb, sbuf, tmp)
        if mask is not None and kb == nkb - 1 and Sk % 64:
            p.li("gp1", sbuf)
            p.li("gp2", mask)
            with p.loop("gp4", nq):
                p("V_ADD_VV gp1, gp1, gp2", "S_ADDI_INT gp1, gp1, 64")
        p.li("gp1", sbuf)
        p.li("gp2", Oaddr)
        p.li("gp3", 0)
        with p.loop("gp4", nq):
            if kb == 0:
                p(f"S_ADD_FP f2, {fneg}, f0", "V_RED_MAX f2, gp1, 0", "V_SUB_VF gp1, gp1, f2", "V_EXP_V gp1, gp1",
                  "S_ADD_FP f4, f0, f0", "V_RED_SUM f4, gp1", f"S_ST_FP f2, gp3, {FP_M}", f"S_ST_FP f4, gp3, {FP_L}")
            else:
                p(f"S_LD_FP f1, gp3, {FP_M}", "S_ADD_FP f2, f1, f0", "V_RED_MAX f2, gp1, 0",
                  "S_SUB_FP f3, f1, f2", "S_EXP_FP f3, f3", "V_SUB_VF gp1, gp1, f2", "V_EXP_V gp1, gp1",
                  "S_ADD_FP f4, f0, f0", "V_RED_SUM f4, gp1", f"S_LD_FP f5, gp3, {FP_L}", "S_MUL_FP f5, f5, f3",
                  "S_ADD_FP f5, f5, f4", f"S_ST_FP f5, gp3, {FP_L}", f"S_ST_FP f2, gp3, {FP_M}",
                  "V_MUL_VF gp2, gp2, f3")
            p("S_ADDI_INT gp1, gp1, 64", "S_ADDI_INT gp2, gp2, 64", "S_ADDI_INT gp3, gp3, 1")
        p.matmul(p, Sc, 0, nq, 64, blk(v, kb, False), 64, Img(Oaddr, nq), 0, tmp=tmp, accumulate=kb > 0,
           split=blk(vlo, kb, False))
    p.li("gp2", Oaddr)
    p.li("gp3", 0)
    with p.loop("gp4", nq):
        p(f"S_LD_FP f5, gp3, {FP_L}", "S_RECI_FP f5, f5", "V_MUL_VF gp2, gp2, f5", "S_ADDI_INT gp2, gp2, 64",
          "S_ADDI_INT gp3, gp3, 1")
    mem.top = top


def attention_head(p: Prog, q: W, k: W, v: W, S: int, O: Img, oc: int, mem: Vmem, scale: str | None) -> None:
    """One head, q from HBM: per block of 64 queries, load and scale them, then attention_block."""
    top = mem.top
    qbuf = mem.take(64 * 64)
    for qb in range(S // 64):
        load_rows(p, q.tensor, qbuf, 64, q.off + qb * 64 * q.ld, q.ld)
        if scale:
            rows_scale(p, qbuf, 64, scale)
        attention_block(p, qbuf, 64, k, v, S, O.at(qb * 64, oc), mem)
    mem.top = top


def attention(p: Prog, task: str) -> None:
    cfg = p.cfg
    S, D = cfg["S"], cfg["D"]
    assert D == 64 and S % 64 == 0, (S, D)
    NH = cfg.get("NH", 1)
    NKV = {"mha": NH, "gqa": cfg.get("NKV", 1)}.get(task, 1)
    O = Img(p.out("o"), S)
    mem = p.vmem = Vmem(O.addr + S * NH * D, p.vend)
    p("S_LD_FP f7, gp0, 2                 ; 1/sqrt(D)", "S_LD_FP f6, gp0, 3                 ; -inf")
    for h in range(NH):
        g = h // (NH // NKV)
        q = W(p, "q", h * D, NH * D)
        k = W(p, "k", g * D, NKV * D)
        v = W(p, "v", g * D, NKV * D)
        attention_head(p, q, k, v, S, O, h, mem, "f7")


# ---- Level 3: decoder blocks ----------------------------------------------------------------------------
SCRATCH = 1 << 23   # HBM element offset of the kernels' scratch (the layout's free HBM starts well below)


def rmsnorm_rows(p: Prog, X: Img, r0: int, nrows: int, Hd: Img, hr0: int, gbuf: int, H: int, tmp: int) -> None:
    """Hd rows hr0.. = X rows r0.. / sqrt(mean(x^2) + eps) * g (g's chunks in consecutive rows at gbuf);
    1/H in FP SRAM 2, eps in 3; tmp: two scratch rows."""
    chunks = H // 64
    p("S_LD_FP f4, gp0, 2", "S_LD_FP f5, gp0, 3")
    p.li("gp1", X.at(r0))
    p.li("gp2", Hd.at(hr0))
    p.li("gp3", tmp)
    with p.loop("gp4", nrows):
        p("S_ADD_FP f2, f0, f0")
        for c in range(chunks):  # the squares summed lane-wise, then reduced once: one bf16 rounding of the sum
            p(f"S_ADDI_INT gp5, gp1, {c * X.rows * 64}")
            p("V_MUL_VV gp3, gp5, gp5" if c == 0 else "S_ADDI_INT gp6, gp3, 64")
            if c:
                p("V_MUL_VV gp6, gp5, gp5", "V_ADD_VV gp3, gp3, gp6")
        p("V_RED_SUM f2, gp3")
        p("S_MUL_FP f2, f2, f4", "S_ADD_FP f2, f2, f5", "S_SQRT_FP f2, f2", "S_RECI_FP f2, f2")
        for c in range(chunks):
            p(f"S_ADDI_INT gp5, gp1, {c * X.rows * 64}", f"S_ADDI_INT gp6, gp2, {c * Hd.rows * 64}",
              f"S_ADDI_INT gp7, gp0, {gbuf + c * 64}", "V_MUL_VF gp6, gp5, f2", "V_MUL_VV gp6, gp6, gp7")
        p("S_ADDI_INT gp1, gp1, 64", "S_ADDI_INT gp2, gp2, 64")


def store_rows(p: Prog, src: int, nrows: int, off: int, a: str, scale: int) -> None:
    """H_STORE_V nrows consecutive vector SRAM rows to HBM a + off.. (rows 64 apart)."""
    p.li("gp15", scale)
    p("C_SET_SCALE_REG gp15")
    p.li("gp11", src)
    p.li("gp12", off)
    with p.loop("gp13", nrows // p.VROWS):
        p(f"H_STORE_V gp11, gp12, {a}, 0, 0", f"S_ADDI_INT gp11, gp11, {p.VROWS * 64}",
          f"S_ADDI_INT gp12, gp12, {p.VROWS * 64}")


def mask_row(p: Prog, dst: int, valid: int, fneg: str, at: int = 256) -> None:
    """Vector SRAM row dst = 0 in lanes < valid, -inf (fneg) in the rest, through FP SRAM at..at+63."""
    for i in range(64):
        p(f"S_ST_FP {'f0' if i < valid else fneg}, gp0, {at + i}")
    p.li("gp1", dst)
    p(f"S_MAP_V_FP gp1, gp0, {at}")


def decoder(p: Prog, task: str) -> None:
    """x in place at y's image. A: per block of rows, h = rmsnorm(x) g0, k (roped) and v = h Wk, h Wv, stored
    per head (64-row padded, zero beyond S) to HBM scratch, where the matrix machine can read them. B: per
    block of queries, h again, q (roped, scaled), per head attention against the stored k, v, and
    x += attn Wo. C: per block of rows, h2 = rmsnorm(x) g1 and x += act(h2 W1 [* h2 Wu]) W2^T, 64 hidden
    columns at a time. RoPE: q_rot = h Wq with each head's column halves swapped (tiles fetched 32
    columns on), then q = q [c | c] + q_rot [-s | s]."""
    llama = task == "decoder_block_llama"
    cfg = p.cfg
    S, NH, D, F = cfg["S"], cfg["NH"], cfg["D"], cfg["F"]
    H = NH * D
    assert D == 64 and S % 4 == 0
    X = Img(p.out("y"), S)
    mem = p.vmem = Vmem(X.addr + S * H, p.vend)
    RB = min(S, 16)
    SP = -(-S // 64) * 64                 # padded key rows per head in scratch
    NKV = NH * SP * 64                    # elements of the k (and v) scratch
    fneg, fscale = ("f6", "f7")
    c_neg = 5 if llama else 4
    wq = lambda i, col=0: W(p, "wqkvo", i * H * H + col, H)  # noqa: E731
    load_image(p, "x", X, 0, S, 0, H)
    grows = -(-(H // 64) // 4) * 4
    g0, g1 = mem.take(grows * 64), mem.take(grows * 64)
    load_rows(p, "g", g0, grows, 0, 64)
    load_rows(p, "g", g1, grows, H, 64)
    assert all(v + p.tensor_elems(what.split()[2]) * 9 // 8 < SCRATCH for _, v, what in p.layout.args)
    p.li("gp1", SCRATCH)
    p("C_SET_ADDR_REG a5, gp0, gp1")
    # scratch regions (elements 4 NKV apart, all with SCALE_OFFSET NKV): k high, k low, v high, v low
    REG = {"k": 0, "klo": 4 * NKV, "v": 8 * NKV, "vlo": 12 * NKV}
    Hb, Kb, Rb = Img(mem.take(RB * H), RB), Img(mem.take(RB * H), RB), Img(mem.take(RB * H), RB)
    tmp = mem.take(RB * 64)
    mask = mem.take(64)
    BIAS = 16 * NKV                        # T5: the bias copied after the k / v scratch, with a zero tail
    bias_scale = None if llama else copy_with_zero_tail(p, "bias", BIAS, Hb.addr)
    SPREAD = 20 * NKV                      # the spreading tile's HBM scratch, after the bias copy's place
    Q = None
    if llama or S in (8, 16, 32):          # lanes to move (rope, bias rows narrower than 64): the spreading tile
        Q = mem.take(4 * RB * 64)
        spreading_tile(p, 0, Q, SPREAD, half=S == 8)
    if llama:
        C2, S2, T = mem.take(RB * 64), mem.take(RB * 64), mem.take(RB * 64)
        tables = [("cs", 0), ("cs", S * 32)]

    def roped_tables(r0):
        fetch_spreading_tile(p, 3 * p.TILE, SPREAD)   # the products use every tile: fetched again
        rope_tables_aligned(p, r0, RB, C2, S2, 3 * p.TILE, T, Q, tables)

    def project(i, r0, out, rot=None):
        """out = h Wi for the RB rows in Hb (rows r0.. of the sequence); roped when rot is a scratch image."""
        p.matmul(p, Hb, 0, RB, H, wq(i), H, out, 0, tmp)
        if rot is None:
            return
        if p.rope_rot is None:
            fetch_spreading_tile(p, 3 * p.TILE, SPREAD)
        for h in range(NH):
            R = Img(rot.at(0, h), RB)
            if p.rope_rot is not None:   # the reference kernels' own way
                p.rope_rot(p, Hb, RB, H, i, h, R)
            else:                        # [x2 | x1] of the head's rows, lanes moved on the matrix machine
                spread(p, 3 * p.TILE, out.at(0, h), Q, RB)
                gather(p, R.addr, Q, 256, RB, ROTATE_HALF)
            rows_op(p, "V_MUL_VV", out.at(0, h), C2, RB)
            rows_op(p, "V_MUL_VV", R.addr, S2, RB)
            rows_op(p, "V_ADD_VV", out.at(0, h), R.addr, RB)

    # A: k and v to HBM scratch
    for r0 in range(0, S, RB):
        rmsnorm_rows(p, X, r0, RB, Hb, 0, g0, H, tmp)
        if llama:
            roped_tables(r0)
        for name in ("k", "v"):
            project(1 if name == "k" else 2, r0, Kb, Rb if llama and name == "k" else None)
            for h in range(NH):   # high part = MXFP8(value), low part = MXFP8(value - high part)
                off = (h * SP + r0) * 64
                store_rows(p, Kb.at(0, h), RB, REG[name] + off, "a5", NKV)
                load_rows(p, None, tmp, RB, REG[name] + off, 64, a="a5", scale=NKV)
                rows_op(p, "V_SUB_VV", tmp, Kb.at(0, h), RB, src2=tmp)
                store_rows(p, tmp, RB, REG[name + "lo"] + off, "a5", NKV)
    # B: attention, x += attn Wo
    p(f"S_LD_FP {fneg}, gp0, {c_neg}")
    if S % 64:
        mask_row(p, mask, S % 64, fneg)
    for r0 in range(0, S, RB):
        rmsnorm_rows(p, X, r0, RB, Hb, 0, g0, H, tmp)
        if llama:
            roped_tables(r0)
        project(0, r0, Kb, Rb if llama else None)
        if llama:
            p(f"S_LD_FP {fscale}, gp0, 4")
            rows_scale(p, Kb.addr, RB * NH, fscale)
        for h in range(NH):
            kw, vw = ((W(p, None, REG[nm] + h * SP * 64, 64, a="a5", n=NKV),
                       W(p, None, REG[nm + "lo"] + h * SP * 64, 64, a="a5", n=NKV)) for nm in ("k", "v"))
            def t5_bias(kb, sbuf, btmp, h=h, r0=r0):
                row0 = BIAS + h * S * S + r0 * S + kb * 64
                rows = btmp
                if S == 8:          # the head's 8 rows of 8 in one aligned row: row 2 j + t is half t of segment j
                    load_rows(p, None, btmp, 4, row0, 64, a="a5", scale=bias_scale)
                    fetch_spreading_tile(p, 3 * p.TILE, SPREAD)
                    spread(p, 3 * p.TILE, btmp, Q, 1)                          # Q[j]: row 2 j in lanes 0..7
                    spread(p, 3 * p.TILE, btmp, Q + 256, 1, slice_=HALF_SWAP)  # Q[4 + j]: row 2 j + 1 there
                    for i in range(S):
                        p.li("gp1", sbuf + 64 * i)
                        p.li("gp2", Q + 64 * (i // 2 + 4 * (i % 2)))
                        p("V_ADD_VV gp1, gp1, gp2")
                    return
                if S in (16, 32):   # bias rows S < 64 apart: aligned rows of 64 hold 64 / S of them, spread
                    packed = RB * S // 64
                    load_rows(p, None, btmp, -(-packed // 4) * 4, row0, 64, a="a5", scale=bias_scale)
                    fetch_spreading_tile(p, 3 * p.TILE, SPREAD)
                    spread(p, 3 * p.TILE, btmp, Q, packed)
                    if S == 16:     # segment h of packed row j is row 4 j + h: spread puts it at Q row 4 j + h
                        rows = Q
                    else:           # segments 2 t, 2 t + 1 of packed row j are row 2 j + t
                        gather(p, btmp, Q, 128, RB, DOUBLE_HALF)
                else:
                    load_rows(p, "bias", btmp, RB, row0, S, a="a5", scale=bias_scale)
                rows_add(p, sbuf, rows, RB)
            p(f"S_LD_FP {fneg}, gp0, {c_neg}")
            attention_block(p, Kb.at(0, h), RB, kw, vw, S, Hb.at(0, h), mem, bias=None if llama else t5_bias,
                            mask=mask, fneg=fneg)
        p.matmul(p, Hb, 0, RB, H, wq(3), H, X, r0, tmp, accumulate=True)
    # C: feed-forward
    p("; C: feed-forward")
    wt = "wffn" if llama else "wff"
    G, U = mem.take(RB * 64), mem.take(RB * 64)
    for r0 in range(0, S, RB):
        rmsnorm_rows(p, X, r0, RB, Hb, 0, g1, H, tmp)
        for fb in range(F // 64):
            p.matmul(p, Hb, 0, RB, H, W(p, wt, fb * 64, F), 64, Img(G, RB), 0)
            if llama:
                p.matmul(p, Hb, 0, RB, H, W(p, wt, H * F + fb * 64, F), 64, Img(U, RB), 0)
                rows_act(p, "silu", G, RB, tmp)
                rows_op(p, "V_MUL_VV", G, U, RB)
            else:
                rows_act(p, "relu", G, RB, tmp)
            w2 = W(p, wt, (2 if llama else 1) * H * F + fb * 64, F, trans=True)
            p.matmul(p, Img(G, RB), 0, RB, 64, w2, H, X, r0, tmp, accumulate=True)


TEMPLATES = {"silu": elementwise, "relu": elementwise, "gelu": elementwise, "softmax": rowwise,
             "layer_norm": rowwise, "rms_norm": rowwise, "gemv": gemv, "gemm": matmul, "batch_matmul": matmul,
             "linear": matmul, "ffn": ffn, "swiglu": ffn, "rope": rope, "scaled_dot_product": attention,
             "flash_attention": attention, "mha": attention, "gqa": attention, "mqa": attention,
             "decoder_block_llama": decoder, "decoder_block_t5": decoder}


def run_template(templates, title, task, cfg, layout, spec):
    """The kernel templates[task.name] writes into a Prog, or None for a task without a template."""
    fn = templates.get(task.name)
    if fn is None:
        return None
    p = Prog(spec, layout, cfg)
    p(f"; {title} for {task.name} {cfg}")
    fn(p, task.name)
    return p.text()


def generate(task, cfg, layout, spec):
    return run_template(TEMPLATES, "PLENA baseline (template)", task, cfg, layout, spec)
