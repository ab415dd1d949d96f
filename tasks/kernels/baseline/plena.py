"""PLENA baselines: template kernels in the style of PLENA's own compiler (PLENA_Compiler
asm_templates): one straightforward loop nest per task, every tensor prefetched before the compute
that uses it, no double buffering, the matrix machine used the way the ISA doc's "Writing
kernels" describes it (M_MM per BLEN x BLEN output block and K tile, then M_MM_WO; M_TMV per
K tile for a GEMV).

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
        self.layout, self.cfg = layout, cfg
        self.lines: list[str] = []

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
        shape = self.layout.placements[tensor].shape
        n = 1
        for s in shape:
            n *= s
        return n


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
    M, K = p.cfg["M"], p.cfg["K"]
    V, T = p.VLEN, p.TILE
    y = p.out("y")
    x = y + -(-M // V) * V     # x's rows after y (its prefetch brings whole groups of 4 rows)
    p.prefetch_image("x", x, 1, K)
    p.scale_stride(p.tensor_elems("a"), K)
    a = p.areg("a")
    p.li("gp1", y)              # output row
    p.li("gp2", 0)              # HBM offset of this row block of a
    with p.loop("gp3", -(-M // V)):
        p("S_ADDI_INT gp4, gp2, 0")
        p.li("gp5", x)
        with p.loop("gp6", K // V):
            p(f"H_PREFETCH_M gp0, gp4, {a}, 1, 0", "M_TMV 0, gp0, gp5")
            p(f"S_ADDI_INT gp4, gp4, {V}", f"S_ADDI_INT gp5, gp5, {V}")
        p("M_MV_WO gp1, 0", f"S_ADDI_INT gp1, gp1, {V}")
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
    p.scale_stride(p.tensor_elems(wt), K if task == "linear" else N)
    p.li("gp1", 0)                  # HBM offset of this batch's weight
    p.li("gp2", 0)                  # vector SRAM row of this batch's first activation row (chunk 0)
    with p.loop("gp3", B):
        p.li("gp4", 0)              # N tile
        with p.loop("gp5", nt_n):
            # prefetch this N tile's K tiles into matrix SRAM tiles 0.. (at most 4 at a time)
            p("S_ADDI_INT gp6, gp0, 0")
            if task == "linear":   # tile (nt, kt) of w[N, K]: rows nt*64.., columns kt*64..
                p.li("gp7", V * K)
                p("S_MUL_INT gp7, gp7, gp4", "S_ADD_INT gp7, gp7, gp1")
            else:                  # tile (kt, nt) of b[K, N]: rows kt*64.., columns nt*64..
                p(f"S_ADDI_INT gp7, gp0, {V}", "S_MUL_INT gp7, gp7, gp4", "S_ADD_INT gp7, gp7, gp1")
            assert kt_n <= 4, "K / MLEN tiles must fit matrix SRAM"
            with p.loop("gp8", kt_n):
                p(f"H_PREFETCH_M gp6, gp7, {w}, 1, 0")
                p.add("gp6", "gp6", T)
                p.add("gp7", "gp7", V if task == "linear" else V * N)
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
        p.add("gp1", "gp1", K * N)
        p(f"S_ADDI_INT gp2, gp2, {M * V}")
    if task == "linear":   # y[m, chunk] += bias[chunk]
        p.li("gp1", c)
        p.li("gp2", bias)
        with p.loop("gp3", nt_n):
            with p.loop("gp4", rows):
                p("V_ADD_VV gp1, gp1, gp2", f"S_ADDI_INT gp1, gp1, {V}")
            p(f"S_ADDI_INT gp2, gp2, {V}")


TEMPLATES = {"silu": elementwise, "relu": elementwise, "gelu": elementwise, "softmax": rowwise,
             "layer_norm": rowwise, "rms_norm": rowwise, "gemv": gemv, "gemm": matmul, "batch_matmul": matmul,
             "linear": matmul}


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
