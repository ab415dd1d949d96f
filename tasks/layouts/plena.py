"""PLENA's data layout: MXFP8 input tensors in HBM, bf16 outputs in vector SRAM, FP SRAM constants.

Built on PLENA's kernel ABI (targets/plena.isa `abi`) and the conventions of its published
testbench (research/plena.md §2, §3.2, §10):

- every input tensor lives in HBM as MXFP8: its element bytes (E4M3, row-major) first, then one
  E8M0 scale byte per block of 8 consecutive elements, SCALE_OFFSET = element count bytes after
  the first element; the k-th input's base address is in a[k]. Level 1: every row starts on the
  emulator's 64-byte HBM grid (a row narrower than 64 elements is padded with zeros to its row
  stride, a multiple of 64, and the padding is counted in SCALE_OFFSET), since the emulator moves
  HBM only in whole 64-byte chunks and a level-1 kernel has no HBM scratch to rearrange rows in; The encoder follows the ISA's
  `mx mxfp8` declaration: the Feb-2026 emulator's quantiser (scale 2^floor(log2 amax), elements
  rounded half away from zero in float32), or OCP MX if the ISA declares OCP formats; `write`
  returns what H_PREFETCH_V / H_PREFETCH_M land in on-chip SRAM (bf16 of the MX value), so the
  golden carries the MX quantisation;
- outputs are read back from vector SRAM as bf16 in PLENA's chunked activation layout: a tensor
  [..., h] with R = prod(leading dims) rows is stored as [ceil(h/VLEN), R, VLEN] (element (r, c) at
  base + ((c // VLEN) * R + r) * VLEN + c % VLEN). The element-wise, normalisation and softmax
  outputs sit at vector SRAM address 0 (in place, as the testbench reads RMSNorm); the matmul
  outputs sit right after the [ceil(K/VLEN), R, VLEN] image of the activation operand at address 0
  (where the testbench reads Linear);
- FP SRAM holds 0.0 at 0, 1.0 at 1, then the task's constants (1/sqrt(D) and -inf for attention; 1/H and
  eps for the decoder blocks' RMSNorm);
- Level-2 and Level-3 tasks: the inputs start after a guard of HBM_GUARD zero bytes (so an a register
  pointed a few elements before a tensor prefetches its rows shifted right by that many lanes, which the
  emulator's 64-byte HBM row rule forbids: -D HBM_ROW_ALIGN=64 checks it), and the HBM after the inputs is scratch, zero at the start, where a kernel
  may store intermediates with H_STORE_V (the matrix machine reads only what H_PREFETCH_M brings from HBM:
  a product of two computed tensors needs one of them there).

PLENA kernels have no branches, so nothing about the sizes arrives in registers: the prompt states
the configuration.
"""
from __future__ import annotations

import functools
import math

import ml_dtypes
import numpy as np

from kcgen import numeric
from kcgen.evaluation import DTYPES, Layout, LayoutError, Placement, Preload
from kcgen.integrity import Span

BF16 = np.dtype(ml_dtypes.bfloat16)
TILE_SLACK = 4608  # zero bytes left after every tensor's scales (one MXFP8 MLEN x MLEN tile)
HBM_ALIGN = 4096
HBM_ROW_BYTES = 64  # the emulator's HBM chunk: level-1 rows are padded to a multiple of it

# The operand a matmul task's output follows in vector SRAM (PLENA's Linear testbench reads the
# output from the rows after the activations).
ACTIVATION = {"gemm": "a", "batch_matmul": "a", "linear": "x", "gemv": "x"}

# FP SRAM constants after fpsram[0] = 0.0 and fpsram[1] = 1.0: (value, description).
CONSTANTS = {
    "softmax": lambda cfg: [(-math.inf, "-inf (to start V_RED_MAX)")],
    "layer_norm": lambda cfg: [(1.0 / cfg["N"], f"1/N = 1/{cfg['N']}"), (1e-5, "eps = 1e-5")],
    "rms_norm": lambda cfg: [(1.0 / cfg["N"], f"1/N = 1/{cfg['N']}"), (1e-6, "eps = 1e-6")],
    "gelu": lambda cfg: [(math.sqrt(2.0 / math.pi), "sqrt(2/pi)"), (0.044715, "0.044715"), (0.5, "0.5"),
                         (1.0 / math.sqrt(2.0), "1/sqrt(2)")],
}
_ATTN = lambda cfg: [(1.0 / math.sqrt(cfg["D"]), f"1/sqrt(D) = 1/sqrt({cfg['D']})"),  # noqa: E731
                     (-math.inf, "-inf (to start V_RED_MAX)")]
CONSTANTS.update({
    "scaled_dot_product": _ATTN, "flash_attention": _ATTN, "mha": _ATTN, "gqa": _ATTN, "mqa": _ATTN,
    "decoder_block_llama": lambda cfg: [(1.0 / (cfg["NH"] * cfg["D"]), f"1/H = 1/{cfg['NH'] * cfg['D']}"),
                                        (1e-6, "eps = 1e-6")] + _ATTN(cfg),
    "decoder_block_t5": lambda cfg: [(1.0 / (cfg["NH"] * cfg["D"]), f"1/H = 1/{cfg['NH'] * cfg['D']}"),
                                     (1e-6, "eps = 1e-6"), (-math.inf, "-inf (to start V_RED_MAX)")],
})

# Level-2 and Level-3 tasks: the first input starts after HBM_GUARD zero bytes (so a prefetch may start up
# to that many elements before any input: rows shifted right by a few lanes), and the HBM after the inputs is
# scratch the kernel may store intermediates to (H_STORE_V), zero at the start.
HBM_GUARD = 4096


# ---- MXFP8 ---------------------------------------------------------------------------------------------
def mx_format(spec=None) -> tuple[numeric.Format, str]:
    """(element format, rule) of the ISA's `mx mxfp8` declaration (targets/plena.isa by default): the
    emulator's rule there; the OCP formats without a rule select OCP MX here too."""
    from kcgen.sim.layout import float_formats, mx_formats, numeric_format
    if spec is None:
        return _default_mx_format()
    elem, _, block, rule = mx_formats(spec)["mxfp8"]
    if block != 8:
        raise LayoutError(f"PLENA's layout writes MX blocks of 8, the ISA declares {block}")
    return numeric_format(float_formats(spec)[elem]), rule


@functools.lru_cache(maxsize=None)
def _default_mx_format() -> tuple[numeric.Format, str]:
    import isadl
    from kcgen.paths import TARGETS
    return mx_format(isadl.load(TARGETS / "plena.isa"))


def mx_encode(x: np.ndarray, spec=None) -> tuple[np.ndarray, np.ndarray]:
    """(element bytes, scale bytes) of a tensor in row-major order, blocks of 8 consecutive elements,
    as H_STORE_V encodes them (the ISA's rule).

    The emulator's rule (kcgen.numeric.mx_plena_encode_tensor): the float32 values' block scale is
    2^floor(log2(amax + 1e-9)) (E8M0 byte, 0 for an all-zero block), each element is quantised in
    float32 with round half away from zero and a mantissa clamp without carry. OCP: scale
    2^(floor(log2 amax) - 8), elements rounded once to E4M3FN, to nearest even, saturating at 448."""
    flat = np.asarray(x).astype(np.float64).ravel()
    if flat.size % 8:
        raise LayoutError(f"an MXFP8 tensor needs a multiple of 8 elements, not {flat.size}")
    if not np.isfinite(flat).all():
        raise LayoutError("MXFP8 inputs must be finite")
    elem, rule = mx_format(spec)
    if rule == "plena":  # the emulator quantises float32 tensors
        return numeric.mx_plena_encode_tensor(elem, flat.astype(np.float32))
    blocks = flat.reshape(-1, 8)
    amax = np.abs(blocks).max(axis=1)
    lg = np.frexp(amax)[1].astype(np.int64) - 1  # floor(log2 amax) for amax > 0
    scale = np.where(amax == 0, 0, np.clip(lg - numeric.E4M3.emax, -127, 127) + 127).astype(np.int64)
    scaled = np.ldexp(blocks, (127 - scale)[:, None].astype(np.int32))  # exact: a power of two
    return e4m3_bytes(scaled).ravel(), scale.astype(np.uint8)


def e4m3_bytes(x: np.ndarray) -> np.ndarray:
    """E4M3FN encodings of x, rounded once to nearest even, saturating at +-448. Values exact in
    float32 (all the harness writes: bf16 times powers of two) take ml_dtypes' cast, a single
    rounding and ten times faster; others the exact rule of kcgen.numeric."""
    f32 = x.astype(np.float32)
    if np.array_equal(f32, x):
        top = numeric.E4M3.max_value  # 448
        return np.clip(f32, -top, top).astype(ml_dtypes.float8_e4m3fn).view(np.uint8)
    return numeric.encode_array(numeric.E4M3, x, saturate=True).astype(np.uint8)


def mx_decode(elems: np.ndarray, scales: np.ndarray, spec=None) -> np.ndarray:
    """What H_PREFETCH_V / H_PREFETCH_M store on chip: bf16(element value * scale)."""
    elem, rule = mx_format(spec)
    if rule == "plena":
        return numeric.mx_plena_decode_tensor(elem, np.asarray(elems, np.uint8), scales).astype(BF16)
    vals = numeric.decode_array(numeric.E4M3, np.asarray(elems, np.uint8))
    s = np.repeat(np.asarray(scales, np.int64), 8)
    with np.errstate(invalid="ignore"):
        v = np.ldexp(vals, (s - 127).astype(np.int32))
    v = np.where(s == 0xFF, np.nan, v)
    return v.astype(np.float32).astype(BF16)  # exact in float32 (4 significant bits), one rounding


# ---- vector SRAM images --------------------------------------------------------------------------------
def rows_and_width(shape) -> tuple[int, int]:
    """(R, h): a tensor [..., h] as R rows of h (a 1-D tensor is one row)."""
    h = int(shape[-1])
    return int(np.prod(shape[:-1], dtype=np.int64)) if len(shape) > 1 else 1, h


def vsram_size(shape, vlen: int) -> int:
    rows, h = rows_and_width(shape)
    return -(-h // vlen) * rows * vlen


def vsram_index(shape, vlen: int) -> np.ndarray:
    """Offsets (from the tensor's base) of every element, in row-major order of `shape`."""
    rows, h = rows_and_width(shape)
    r, c = np.meshgrid(np.arange(rows), np.arange(h), indexing="ij")
    return (((c // vlen) * rows + r) * vlen + c % vlen).ravel()


def hbm_row_stride(shape, level: int) -> int:
    """Elements from one HBM row of an input to the next: the row width, rounded up to the emulator's
    64-byte chunk at level 1 (a 1-D tensor is one row, never padded)."""
    h = int(shape[-1])
    return h + (-h % HBM_ROW_BYTES) if level == 1 and len(shape) > 1 else h


class PlenaLayout(Layout):
    """Inputs as MXFP8 images in HBM, outputs in chunked bf16 vector SRAM (see the module doc)."""

    vlen: int = 64
    strides: dict | None = None  # HBM input -> row stride in elements (the row width unless padded)

    def row_stride(self, tensor: str) -> int:
        return (self.strides or {}).get(tensor, int(self.placements[tensor].shape[-1]))

    def hbm_elems(self, tensor: str) -> int:
        """Element bytes of an HBM input's image, padding included: its SCALE_OFFSET."""
        p = self.placements[tensor]
        rows, h = rows_and_width(p.shape)
        return rows * self.row_stride(tensor) if len(p.shape) > 1 else h

    def padded(self, tensor: str, values: np.ndarray) -> np.ndarray:
        """values as the HBM image's rows: zero columns up to the row stride."""
        p = self.placements[tensor]
        rows, h = rows_and_width(p.shape)
        image = np.zeros((rows, self.row_stride(tensor)) if len(p.shape) > 1 else (h,))
        image[..., :h] = np.asarray(values, np.float64).reshape(image.shape[:-1] + (h,))
        return image

    def preload(self, sim):
        # The ABI's start state: state items with an initial value (BMM_SCALE = 1.0) hold it. The
        # evaluator zeroes every array for a clean machine, so restore them here.
        for name, store in sim.layout.stores.items():
            if store.kind == "state" and store.init is not None:
                sim.arrays[name][...] = store.allocate()
        super().preload(sim)

    def write(self, sim, tensor, values):
        p = self.placements[tensor]
        if p.memory != "hbm":
            raise LayoutError(f"{tensor}: PLENA inputs live in HBM")
        spec = getattr(sim, "spec", None)
        image = self.padded(tensor, values)
        elems, scales = mx_encode(image, spec)
        hbm = sim.arrays["hbm"]
        hbm[p.index:p.index + elems.size] = elems
        hbm[p.index + elems.size:p.index + elems.size + scales.size] = scales
        seen = mx_decode(elems, scales, spec).reshape(image.shape)[..., :int(p.shape[-1])]
        return seen.reshape(p.shape).astype(DTYPES[p.dtype])

    def read(self, sim, tensor):
        p = self.placements[tensor]
        v = sim.view("vsram")
        return v[p.index + vsram_index(p.shape, self.vlen)].astype(DTYPES[p.dtype]).reshape(p.shape)

    def extent(self, spec, tensor):
        """HBM inputs: element bytes then scale bytes; vector SRAM outputs: their chunked image."""
        p = self.placements[tensor]
        n = self.hbm_elems(tensor) if p.memory == "hbm" else 0
        size = n + n // 8 if p.memory == "hbm" else vsram_size(p.shape, self.vlen)
        return Span(p.memory, p.index, p.index + size, f"tensor {tensor}")

    def poison(self, sim, tensor):
        p = self.placements[tensor]
        v = sim.view("vsram")
        n = vsram_size(p.shape, self.vlen)
        v[p.index:p.index + n] = np.full(n, np.nan, dtype=v.dtype)


def layout(spec, task, target, config) -> Layout:
    P = spec.params
    vlen, mlen = P["VLEN"], P["MLEN"]
    cfg = task.config(target, config)
    placements: dict[str, Placement] = {}
    args = []
    notes = []
    size_text = ", ".join(f"{k} = {v}" for k, v in cfg.items())
    notes.append(f"Configuration {config}: {size_text}. PLENA kernels have no branches: the sizes are "
                 "not passed in registers, write them into the program (loop counts, offsets).")

    # inputs: MXFP8 images in HBM, bases in a0, a1, ... in the task's order
    abi_args = list(spec.isa.abi.args)
    composite = (task.level or 1) >= 2
    base = HBM_GUARD if composite else 0
    hbm_lines = []
    strides = {}
    for t in task.inputs:
        shape = task.shape(t, cfg)
        n = int(np.prod(shape))
        cols = int(shape[-1])
        ld = strides[t.name] = hbm_row_stride(shape, task.level or 1)
        rows = n // cols
        image = rows * ld if len(shape) > 1 else n   # element bytes, padding included
        if n % P["MX_BLOCK"]:
            raise LayoutError(f"{task.name} {config}: {t.name} has {n} elements, not a multiple of the MX block")
        if len(args) >= len(abi_args):
            raise LayoutError(f"{task.name}: more inputs than HBM address registers")
        reg = abi_args[len(args)]
        padding = f" ({ld - cols} zero elements padding each row)" if ld != cols else ""
        placements[t.name] = Placement(t.name, "hbm", base, shape, task.dtype(target, t.name), base,
                                       form=f"MXFP8 ({image} E4M3 element bytes{padding}, then {image // 8} E8M0 "
                                            "scale bytes)")
        args.append((reg, base, f"address of {t.name} in HBM"))
        if len(shape) > 1:
            pad_text = (f" (row stride {ld}: each row of {cols} elements is followed by {ld - cols} zero bytes, "
                        "so that every row starts on the emulator's 64-byte HBM grid)" if ld != cols else "")
            hbm_lines.append(f"- {t.name}{list(shape)}: {reg} = {base:#x}, SCALE_OFFSET = {image}; row-major: element "
                             f"(row r, column c) at byte offset r * {ld} + c{pad_text}, r counting the "
                             f"{rows} rows over the leading dimensions (STRIDE = {ld} to prefetch rows of a "
                             f"column block); its scale at offset {image} + (r * {ld} + c) // 8")
        else:
            hbm_lines.append(f"- {t.name}[{n}]: {reg} = {base:#x}, SCALE_OFFSET = {n}; element i at byte offset i, "
                             f"its scale at offset {n} + i // 8")
        base += image + image // 8 + TILE_SLACK
        base += -base % HBM_ALIGN
    if base > P["HBM_BYTES"]:
        raise LayoutError(f"{task.name} {config}: the inputs need {base} bytes of HBM")

    # outputs: chunked bf16 in vector SRAM
    vtotal = P["VSRAM_ROWS"] * vlen
    act = ACTIVATION.get(task.name)
    start = vsram_size(task.shape(next(t for t in task.inputs if t.name == act), cfg), vlen) if act else 0
    out_lines = []
    for t in task.outputs:
        shape = task.shape(t, cfg)
        rows, h = rows_and_width(shape)
        size = vsram_size(shape, vlen)
        if start + size > vtotal:
            raise LayoutError(f"{task.name} {config}: output {t.name} ({size} elements from {start}) does not fit "
                              f"vector SRAM ({vtotal} elements)")
        chunks = -(-h // vlen)
        form = (f"bf16 in PLENA's chunked layout [{chunks}, {rows}, {vlen}]" if len(shape) > 1
                else f"bf16, {chunks} row(s) of {vlen}" if h >= vlen else f"bf16, one row (lanes 0..{h - 1})")
        placements[t.name] = Placement(t.name, "vsram", start, shape, task.dtype(target, t.name), start, form=form)
        if len(shape) > 1:
            lead = "*".join(map(str, shape[:-1]))
            out_lines.append(
                f"- {t.name}{list(shape)}: vector SRAM rows from address {start}; the {rows} rows "
                f"({lead}, row-major over the leading dimensions) of hidden width {h} are cut into {chunks} "
                f"chunk(s) of {vlen} columns and all rows of chunk 0 come first: element (row r, column c) is at "
                f"{start} + ((c // {vlen}) * {rows} + r) * {vlen} + c % {vlen}"
                + (f" (lanes {h}..{vlen - 1} of each row are not read)" if h % vlen else "") + ".")
        else:
            out_lines.append(f"- {t.name}[{h}]: vector SRAM elements {start}..{start + h - 1} (element i at {start} + i"
                             + (f"; lanes {h}..{vlen - 1} of the row are not read" if h % vlen else "") + ").")
        start += size
    end = start

    # FP SRAM constants
    consts = [(0.0, "0.0"), (1.0, "1.0")] + (CONSTANTS[task.name](cfg) if task.name in CONSTANTS else [])
    preloads = [Preload("fpsram", i, np.array([v], dtype=BF16), f"{what} (bf16 {float(BF16.type(v)):.8g})")
                for i, (v, what) in enumerate(consts)]

    notes.append("Inputs (HBM, MXFP8, read with H_PREFETCH_V into vector SRAM or H_PREFETCH_M into matrix SRAM):")
    notes += hbm_lines
    notes.append("  The prefetches decode to bf16: the kernel sees, and the reference is computed from, the MX-"
                 "quantised values. Set C_SET_SCALE_REG to the tensor's SCALE_OFFSET (and C_SET_STRIDE_REG for "
                 "rstride = 1) before moving a different tensor. A prefetch that runs past a tensor's end reads its "
                 "scale bytes and the zero padding after them (at least 4608 bytes): those rows are garbage to ignore "
                 "(scale bytes read as elements decode to Inf/NaN from 0x78 up, and NaN survives any arithmetic, "
                 "masking by multiplication included).")
    if composite:
        notes.append(f"  Every input is preceded by at least {HBM_GUARD} zero bytes and followed (after its scales) by "
                     f"at least {TILE_SLACK} zero bytes: an a register set (C_SET_ADDR_REG) k bytes before a tensor's "
                     "base prefetches its rows shifted right by k lanes, with zeros before its first element (the "
                     "scales are then at SCALE_OFFSET + k - k/8 for k a multiple of 8; the Feb-2026 emulator "
                     "stops on any HBM row address a[rs2] + gp[rs1] + r * stride that is not a multiple of 64 "
                     "bytes, a rule this model checks only with -D HBM_ROW_ALIGN=64: kernels that keep it run "
                     "there too). HBM from "
                     f"{base:#x} to the end ({P['HBM_BYTES']:#x}) is free "
                     "scratch, all zero at the start: set a free a register to it with C_SET_ADDR_REG and store "
                     "intermediates there with H_STORE_V (it encodes to MXFP8: bf16 values that came from an MXFP8 "
                     "input, stored in the same blocks of 8, come back unchanged; others are rounded to E4M3).")
    if act:
        arows, awidth = rows_and_width(task.shape(next(t for t in task.inputs if t.name == act), cfg))
        where = (f"after the [{-(-awidth // vlen)}, {arows}, {vlen}] image {act} would have at address 0, where "
                 f"PLENA's testbench reads a Linear's output")
    else:
        first_in = task.inputs[0].name
        where = (f"at address 0, where {first_in}'s image would be (PLENA's testbench reads RMSNorm, FFN and "
                 "attention in place)")
    notes.append(f"Outputs (read back from vector SRAM as bf16 after the kernel ends; they start out as NaN; "
                 f"placed {where}):")
    notes += out_lines
    first = placements[task.outputs[0].name].index
    spans = [f"{lo}..{hi - 1}" for lo, hi in ((0, first), (end, vtotal)) if hi > lo]
    tiles = ", ".join(str(k * mlen * mlen) for k in range(P["MSRAM_ROWS"] // mlen))
    notes.append(f"Free for the kernel: vector SRAM {' and '.join(spans) if spans else '(none)'} and the output "
                 f"rows themselves until the results are written there; all of matrix SRAM (tiles at {tiles}); FP "
                 f"SRAM from {len(consts)} on; INT SRAM" + ("; HBM after the inputs" if composite else "; HBM is not scratch "
                 "(level 1)") + ". Any other write fails the evaluation (memory integrity).")
    notes.append("Start state: gp, f, SCALE_OFFSET, STRIDE, V_MASK and the accumulators are 0, BMM_SCALE is 1.0; "
                 "the contents of SRAM other than the preloaded constants are unspecified.")
    if mx_format(spec)[1] == "plena":
        notes.append("MX encoding of the inputs (as H_STORE_V encodes, the PLENA emulator's quantiser): per block "
                     "of 8 consecutive elements, scale 2^floor(log2 amax) (E8M0, bias 127; 0 for an all-zero block), "
                     "elements x / scale rounded to E4M3 (exponent 15 is Inf/NaN, largest 240; below 2^-6 steps of "
                     "2^-10), mantissa rounded half away from zero and clamped at 1.875 without carry.")
    else:
        notes.append("MX encoding of the inputs (as H_STORE_V encodes): per block of 8 consecutive elements, scale "
                     "2^(floor(log2 amax) - 8) (E8M0, bias 127; 0 for an all-zero block), elements rounded to "
                     "E4M3FN, nearest even, saturating at 448.")
    scratch = [Span("vsram", lo, hi, "vector SRAM rows no output occupies") for lo, hi in ((0, first), (end, vtotal))
               if hi > lo]
    scratch.append(Span("fpsram", len(consts), P["FP_SRAM_DEPTH"], "FP SRAM after the preloaded constants"))
    if composite:
        scratch.append(Span("hbm", base, P["HBM_BYTES"], "HBM after the inputs"))
    lay = PlenaLayout(placements, args, notes, preloads, scratch)
    lay.vlen = vlen
    lay.strides = strides
    return lay
