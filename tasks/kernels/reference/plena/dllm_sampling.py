"""PLENA reference kernel for dllm_sampling (tasks/level2/dllm_sampling.yaml), base ISA.

PLENA has no compare, select, branch or float-to-integer instruction, and its registers and SRAMs
are bf16 (integers exact below 256), so everything is arithmetic on exact values, and a token id
t < V <= 32768 is carried as its group g = t // 256 (a prefetch unit of 4 chunks) and its index
lo = t % 256 in the group:

- per position l (row of logits), pass 1: V_RED_MAX over every chunk gives m. Pass 2, per group
  of 4 chunks: d = x - m (V_SUB_VF, in place), the token score d * 2^72 * 2^72 + (256 - i) (two
  V_MUL_VF and a V_ADD_VV with a row of 256 - i, i the index in the group): 256 - i where x = m,
  below -2^11 + 256 < 0 (or -inf) elsewhere, because distinct bf16 values differ by at least
  2^-133; V_RED_MAX of the group's scores is s = 256 - lo_g if the group holds m, negative if not.
  The first group holding m wins: a = -1 + (256 - lo) once found, z = [not found yet] = max(-a, 0),
  per group a += max(s, 0) * z, then z = max(-a, 0) and g += z (g counts the groups before the
  hit). Then e = exp(d) in place and V_RED_SUM, chunk by chunk, as the task defines S; c = 1 / S
  (S_RECI_FP). c, lo = 255 - a and g go to FP SRAM and, every 64 positions, into vector rows with
  S_MAP_V_FP.
- masked = [mask > 0] exactly, per row of 64 positions: exp(-mask * 2^144) is 0, 1 or inf for
  mask > 0, = 0, < 0; 1 / (1 + that) is 1, 0.5 or 0; exp((that - 1) * 2^72) is 1, 0, 0.
- top-K by K rounds of extract-max over the confidence rows (c where masked, -1 elsewhere): cm =
  V_RED_MAX; the position score (c - cm) * 2^72 + (L - l) picks the lowest position with c = cm;
  the one-hot exp(-(L - l - s)^2 * 2^72) adds the pick to `sel` and lowers its c by 16. Picks of
  unmasked positions (when fewer than K are masked) are removed at the end by sel * masked.
- tokens_hi = sel * (g + 1) - 1, tokens_lo = sel * (lo + 1) - 1, mask_out = masked - sel.

The logits stream through RB row buffers in vector SRAM (RB = 4 for V <= 1024, else 1; a row of
V = 32768 is half the vector SRAM): pass 2 prefetches row l + RB's unit (H_PREFETCH_V: 256
consecutive elements) into the unit of row l it has just consumed, so every row is in place long
before its pass 1. The rows and the groups are hardware loops.

generate(..., ext=True) emits the kernel for the extension in tasks/codesign/plena/dllm_sampling:
pass 1 is one V_RED_ARGMAX per chunk (chunk = the chunk's number in its group), run across the
whole row: it leaves m, and lo of the first maximum (an equal maximum never replaces it); the
group of the last strict increase is tracked per group as g_w = max(g_w, g if m rose else 0)
(m rose iff (m - m_before) * 2^144 >= 2^11). Pass 2 drops the token score; the extract-max rounds
take one V_RED_ARGMAX per row of 64 positions instead of V_RED_MAX and the position-score pass.
generate(..., overlap=False) is the baseline's schedule: each row prefetched whole just before it
is computed.
"""
from __future__ import annotations

from kcgen.paths import TASKS, load_module

_base = load_module(TASKS / "kernels" / "baseline" / "plena.py")
Prog = _base.Prog

GROUP = 256                      # elements per group = per H_PREFETCH_V unit (ids below 256 in it)
PST, AST, QST, GST = 2, 66, 130, 194   # FP SRAM staging: confidences, lo, the row 64 - i, groups
NINF, C255, M1 = 260, 261, 262         # FP SRAM constants: -inf, 255, -1


def fconst(p: Prog, reg: str, value: int, one: str) -> None:
    """reg = the integer value (|value| <= 256, exact in bf16), from the register `one` = 1.0."""
    v = abs(int(value))
    if v == 0:
        p(f"S_ADD_FP {reg}, f0, f0")
        return
    bits = bin(v)[2:]
    p(f"S_ADD_FP {reg}, {one}, f0")
    for b in bits[1:]:
        p(f"S_ADD_FP {reg}, {reg}, {reg}")
        if b == "1":
            p(f"S_ADD_FP {reg}, {reg}, {one}")
    if value < 0:
        p(f"S_SUB_FP {reg}, f0, {reg}")


def big_constants(p: Prog) -> None:
    """f4 = -inf, f5 = 2^72 (f7 = 1.0, f6 = 256 on the way); FP SRAM NINF = -inf, C255 = 255, M1 = -1."""
    p("S_LD_FP f7, gp0, 1                  ; 1.0",
      "S_RECI_FP f4, f0                    ; 1/0 = inf",
      "S_SUB_FP f4, f0, f4                 ; f4 = -inf",
      "S_ADD_FP f6, f7, f7", "S_MUL_FP f6, f6, f6", "S_MUL_FP f6, f6, f6", "S_MUL_FP f6, f6, f6   ; 256",
      "S_MUL_FP f5, f6, f6", "S_MUL_FP f5, f5, f5", "S_MUL_FP f5, f5, f5", "S_MUL_FP f5, f5, f6   ; f5 = 2^72",
      f"S_ST_FP f4, gp0, {NINF}", "S_SUB_FP f6, f6, f7", f"S_ST_FP f6, gp0, {C255}",
      "S_SUB_FP f6, f0, f7", f"S_ST_FP f6, gp0, {M1}")


def q_row(p: Prog, dst: int) -> None:
    """V[dst .. dst+63] = 64, 63, ..., 1 (built in FP SRAM, then S_MAP_V_FP); f7 = 1.0 on entry."""
    fconst(p, "f6", 64, "f7")
    p.li("gp15", 0)
    with p.loop("gp14", 16):
        for _ in range(4):
            p(f"S_ST_FP f6, gp15, {QST}", "S_SUB_FP f6, f6, f7", "S_ADDI_INT gp15, gp15, 1")
    p.li("gp15", dst)
    p(f"S_MAP_V_FP gp15, gp0, {QST}")


def buffers(V: int) -> int:
    """Row buffers in the ring: 4 while they hold at most 4096 logits, else 1."""
    return 4 if V <= 1024 else 1


def scratch(p: Prog, L: int, V: int, logit_elems: int) -> dict[str, int]:
    """Vector SRAM after the outputs: the mask's prefetch (4 rows); per row of 64 positions the
    confidences P, indices in the group AL, groups AH, ranking values C, masked flags IND, picks SEL
    and position scores CPOS; the 4 token-score rows CI (256 - i over a group); the row Q = 64 .. 1;
    a scratch row T; then `logit_elems` elements for the logits."""
    VL = p.VLEN
    R = L // VL
    top = max(p.out("tokens_hi"), p.out("tokens_lo"), p.out("mask_out")) + L
    out = {}
    for name, count in (("mask", p.VROWS), ("P", R), ("AL", R), ("AH", R), ("C", R), ("IND", R), ("SEL", R),
                        ("CPOS", R), ("CI", GROUP // VL), ("Q", 1), ("T", 1)):
        out[name] = top
        top += count * VL
    out["logits"] = top
    top += logit_elems
    assert top <= 1024 * VL, "vector SRAM overflows"
    return out


def generate(task, cfg, layout, spec, ext: bool = False, overlap: bool = True):
    if task.name != "dllm_sampling":
        return None
    p = Prog(spec, layout, cfg)
    L, V, K = cfg["L"], cfg["V"], cfg["K"]
    VL = p.VLEN
    unit = p.VROWS * VL
    assert VL == 64 and unit == GROUP and L % VL == 0 and V % GROUP == 0 and V <= 128 * GROUP and L <= 256
    G, R = V // GROUP, L // VL
    RB = buffers(V) if overlap else 1
    assert VL % RB == 0
    th, tl, mo = p.out("tokens_hi"), p.out("tokens_lo"), p.out("mask_out")
    rows = scratch(p, L, V, RB * V)
    maskbuf, P, AL, AH, C, IND, SEL, CPOS, CI, Q, T, ring = (rows[k] for k in (
        "mask", "P", "AL", "AH", "C", "IND", "SEL", "CPOS", "CI", "Q", "T", "logits"))
    a_x, a_m = p.areg("logits"), p.areg("mask")
    title = "V_RED_ARGMAX extension" if ext else "base ISA"
    p(f"; dllm_sampling ({title}{'' if overlap else ', no overlap'}) L={L} V={V} K={K}")

    # ---- prefetch the mask and the first RB rows, then the constants ----
    p.scale_stride(L)
    p.li("gp12", maskbuf)
    p(f"H_PREFETCH_V gp12, gp0, {a_m}, 0, 0")
    p.scale_stride(L * V)
    p.li("gp2", 0)                        # HBM offset of the next unit
    if overlap:
        p.li("gp12", ring)
        with p.loop("gp13", RB * G):
            p(f"H_PREFETCH_V gp12, gp2, {a_x}, 0, 0", f"S_ADDI_INT gp12, gp12, {unit}",
              f"S_ADDI_INT gp2, gp2, {unit}")
    big_constants(p)
    q_row(p, Q)
    if not ext:
        for c in range(GROUP // VL):      # CI_c = 256 - 64c - i
            fconst(p, "f6", GROUP - VL - VL * c, "f7")
            p.li("gp15", Q)
            p.li(f"gp{3 + c}", CI + c * VL)
            p(f"V_ADD_VF gp{3 + c}, gp15, f6")
    p.li("gp8", T)
    p.li("gp7", 0)                        # FP SRAM slot of the position in its block of 64

    # ---- per position: m, (g, lo), c ----
    def row(buf: int, prefetch: bool):
        if not overlap:                   # the baseline: the whole row, then the compute
            p.li("gp12", buf)
            with p.loop("gp9", G):
                p(f"H_PREFETCH_V gp12, gp2, {a_x}, 0, 0", f"S_ADDI_INT gp12, gp12, {unit}",
                  f"S_ADDI_INT gp2, gp2, {unit}")
        p.li("gp1", buf)
        p(f"S_LD_FP f1, gp0, {NINF}")
        if ext:                           # f1 = m, f3 = lo, f7 = g of the last rise, f6 = g
            p("S_ADD_FP f7, f0, f0", "S_ADD_FP f6, f0, f0")
            with p.loop("gp9", G):
                p("S_ADD_FP f2, f1, f0")
                for c in range(GROUP // VL):
                    p(f"V_RED_ARGMAX f1, f3, gp1, {c}", f"S_ADDI_INT gp1, gp1, {VL}")
                p("S_SUB_FP f4, f1, f2", "S_MUL_FP f4, f4, f5", "S_MUL_FP f4, f4, f5",   # h: 0 or >= 2^11
                  "S_SUB_FP f4, f6, f4", "S_MAX_FP f4, f4, f0", "S_SUB_FP f4, f6, f4",   # g if m rose, else 0
                  "S_MAX_FP f7, f7, f4", "S_LD_FP f4, gp0, 1", "S_ADD_FP f6, f6, f4")
        else:
            with p.loop("gp9", G):
                for c in range(GROUP // VL):
                    p("V_RED_MAX f1, gp1", f"S_ADDI_INT gp1, gp1, {VL}")
            p(f"S_LD_FP f4, gp0, {M1}", "S_LD_FP f6, gp0, 1", "S_ADD_FP f7, f0, f0")  # a = -1, z = 1, g = 0
        p.li("gp1", buf)
        p("S_ADD_FP f2, f0, f0")
        with p.loop("gp10", G):
            if prefetch:
                p("S_ADDI_INT gp14, gp1, 0")
            if not ext:
                p(f"S_LD_FP f3, gp0, {NINF}")
            for c in range(GROUP // VL):
                p("V_SUB_VF gp1, gp1, f1")
                if not ext:
                    p("V_MUL_VF gp8, gp1, f5", "V_MUL_VF gp8, gp8, f5", f"V_ADD_VV gp8, gp8, gp{3 + c}",
                      "V_RED_MAX f3, gp8")
                p("V_EXP_V gp1, gp1", "V_RED_SUM f2, gp1", f"S_ADDI_INT gp1, gp1, {VL}")
            if not ext:
                p("S_MAX_FP f3, f3, f0", "S_MUL_FP f3, f3, f6", "S_ADD_FP f4, f4, f3",
                  "S_SUB_FP f6, f0, f4", "S_MAX_FP f6, f6, f0", "S_ADD_FP f7, f7, f6")
            if prefetch:
                p(f"H_PREFETCH_V gp14, gp2, {a_x}, 0, 0", f"S_ADDI_INT gp2, gp2, {unit}")
        p("S_RECI_FP f2, f2", f"S_ST_FP f2, gp7, {PST}", f"S_ST_FP f7, gp7, {GST}")
        if ext:
            p(f"S_ST_FP f3, gp7, {AST}")
        else:
            p(f"S_LD_FP f3, gp0, {C255}", "S_SUB_FP f3, f3, f4", f"S_ST_FP f3, gp7, {AST}")
        p("S_ADDI_INT gp7, gp7, 1")

    def turn(prefetch: bool):
        for k in range(RB):
            row(ring + k * V, prefetch)

    for b in range(R):
        last = b == R - 1
        count = VL // RB - (1 if last and overlap else 0)
        if count:
            with p.loop("gp11", count):
                turn(overlap)
        if last and overlap:
            turn(False)
        for dst, src in ((P, PST), (AL, AST), (AH, GST)):
            p.li("gp15", dst + b * VL)
            p(f"S_MAP_V_FP gp15, gp0, {src}")
        p.li("gp7", 0)

    # ---- masked, confidences, position scores ----
    p.li("gp9", T)
    p("S_LD_FP f1, gp0, 1                  ; 1.0")
    Cr, Pr, Sr = [f"gp{1 + r}" for r in range(R)], [f"gp{5 + r}" for r in range(R)], [f"gp{10 + r}" for r in range(R)]
    for r in range(R):
        p.li("gp14", maskbuf + r * VL)
        p("V_MUL_VF gp9, gp14, f5", "V_MUL_VF gp9, gp9, f5", "V_SUB_VF gp9, gp9, f0, 0, 1", "V_EXP_V gp9, gp9",
          "V_ADD_VF gp9, gp9, f1", "V_RECI_V gp9, gp9", "V_SUB_VF gp9, gp9, f1", "V_MUL_VF gp9, gp9, f5")
        p.li("gp14", IND + r * VL)
        p.li("gp15", P + r * VL)
        p.li(Cr[r], C + r * VL)
        p.li(Sr[r], SEL + r * VL)
        p.li(Pr[r], CPOS + r * VL)
        p("V_EXP_V gp14, gp9                   ; masked: 1.0 / 0.0",
          "V_SUB_VF gp9, gp14, f1", f"V_MUL_VV {Cr[r]}, gp15, gp14", f"V_ADD_VV {Cr[r]}, {Cr[r]}, gp9",
          f"V_MUL_VF {Sr[r]}, gp14, f0")
        fconst(p, "f6", L - VL - VL * r, "f1")
        p.li("gp15", Q)
        p(f"V_ADD_VF {Pr[r]}, gp15, f6          ; L - l")
    p("S_SUB_FP f6, f0, f5                 ; -2^72")
    fconst(p, "f7", -16, "f1")
    if ext:
        fconst(p, "f5", L, "f1")
    with p.loop("gp14", K):
        p(f"S_LD_FP f2, gp0, {NINF}")
        if ext:
            for r in range(R):
                p(f"V_RED_ARGMAX f2, f3, {Cr[r]}, {r}")
            p("S_SUB_FP f3, f5, f3              ; L - pick")
        else:
            for r in range(R):
                p(f"V_RED_MAX f2, {Cr[r]}")
            p("S_ADD_FP f3, f0, f0")
            for r in range(R):
                p(f"V_SUB_VF gp9, {Cr[r]}, f2", "V_MUL_VF gp9, gp9, f5", f"V_ADD_VV gp9, gp9, {Pr[r]}",
                  "V_RED_MAX f3, gp9")
        for r in range(R):
            p(f"V_SUB_VF gp9, {Pr[r]}, f3", "V_MUL_VV gp9, gp9, gp9", "V_MUL_VF gp9, gp9, f6", "V_EXP_V gp9, gp9",
              f"V_ADD_VV {Sr[r]}, {Sr[r]}, gp9", "V_MUL_VF gp9, gp9, f7", f"V_ADD_VV {Cr[r]}, {Cr[r]}, gp9")
    # ---- outputs ----
    for r in range(R):
        p.li("gp14", IND + r * VL)
        p(f"V_MUL_VV {Sr[r]}, {Sr[r]}, gp14")
        for out, src in ((th, AH), (tl, AL)):
            p.li("gp15", src + r * VL)
            p("V_ADD_VF gp9, gp15, f1", f"V_MUL_VV gp9, gp9, {Sr[r]}")
            p.li("gp15", out + r * VL)
            p("V_SUB_VF gp15, gp9, f1")
        p.li("gp15", mo + r * VL)
        p(f"V_SUB_VV gp15, gp14, {Sr[r]}")
    return p.text()
