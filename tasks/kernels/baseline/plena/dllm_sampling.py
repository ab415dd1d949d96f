"""PLENA baseline for dllm_sampling (tasks/level2/dllm_sampling.yaml): a template kernel in the style
of tasks/kernels/baseline/plena.py. Straightforward loops: each block of 64 positions' logits is
prefetched whole before it is computed (no overlap), every loop walks one pointer register, the
chunk loops are hardware loops.

The arithmetic is the reference kernel's (tasks/kernels/reference/plena/dllm_sampling.py explains
it): per position V_RED_MAX, then per chunk d = x - m, the token score d * 2^72 * 2^72 + (V - v)
reduced with V_RED_MAX, e = exp(d) summed with V_RED_SUM; c = 1 / S; masked = [mask > 0] through
exp / reciprocal steps; K extract-max rounds over the confidences.
"""
from __future__ import annotations

from kcgen.paths import TASKS, load_module

_base = load_module(TASKS / "kernels" / "baseline" / "plena.py")
_ref = load_module(TASKS / "kernels" / "reference" / "plena" / "dllm_sampling.py")
Prog = _base.Prog
PST, AST = _ref.PST, _ref.AST


def generate(task, cfg, layout, spec):
    if task.name != "dllm_sampling":
        return None
    p = Prog(spec, layout, cfg)
    L, V, K = cfg["L"], cfg["V"], cfg["K"]
    VL = p.VLEN
    n, R = V // VL, L // VL
    unit = p.VROWS * VL
    tok, mo = p.out("tokens"), p.out("mask_out")
    rows = _ref.scratch(p, L, V, V)    # the logits of 64 positions: V rows
    maskbuf, P, A, C, IND, SEL, CPOS, CI, Q, T, block = (rows[k] for k in (
        "mask", "P", "A", "C", "IND", "SEL", "CPOS", "CI", "Q", "T", "logits"))
    a_x, a_m = p.areg("logits"), p.areg("mask")
    p(f"; dllm_sampling baseline (template) L={L} V={V} K={K}")
    _ref.big_constants(p)              # f4 = -inf, f5 = 2^72, f7 = 1.0
    _ref.q_row(p, Q)                   # V[Q] = 64 .. 1
    p.li("gp1", Q)
    p.li("gp2", CI)
    for c in range(n):                 # CI row c = V - 64c - i
        _ref.fconst(p, "f6", V - VL - VL * c, "f7")
        p("V_ADD_VF gp2, gp1, f6", f"S_ADDI_INT gp2, gp2, {VL}")
    _ref.fconst(p, "f6", V, "f7")

    # ---- per position ----
    p.li("gp8", 0)                     # HBM offset of the block
    p.li("gp9", T)
    p.li("gp10", P)                    # P row of the block
    p.li("gp11", A)
    with p.loop("gp12", R):
        p.scale_stride(L * V)
        p.li("gp1", block)
        p("S_ADDI_INT gp2, gp8, 0")
        with p.loop("gp3", VL * V // unit):
            p(f"H_PREFETCH_V gp1, gp2, {a_x}, 0, 0", f"S_ADDI_INT gp1, gp1, {unit}", f"S_ADDI_INT gp2, gp2, {unit}")
        p("S_ADDI_INT gp8, gp2, 0")
        p.li("gp1", block)             # this position's row
        p.li("gp7", 0)                 # its FP SRAM slot
        with p.loop("gp3", VL):
            p("S_ADD_FP f1, f4, f0", "S_ADDI_INT gp2, gp1, 0")
            with p.loop("gp4", n):
                p("V_RED_MAX f1, gp2", f"S_ADDI_INT gp2, gp2, {VL}")
            p("S_ADD_FP f2, f0, f0", "S_ADD_FP f3, f0, f0", "S_ADDI_INT gp2, gp1, 0")
            p.li("gp5", CI)
            with p.loop("gp4", n):
                p("V_SUB_VF gp2, gp2, f1", "V_MUL_VF gp9, gp2, f5", "V_MUL_VF gp9, gp9, f5", "V_ADD_VV gp9, gp9, gp5",
                  "V_RED_MAX f3, gp9", "V_EXP_V gp2, gp2", "V_RED_SUM f2, gp2", f"S_ADDI_INT gp2, gp2, {VL}",
                  f"S_ADDI_INT gp5, gp5, {VL}")
            p("S_RECI_FP f7, f2", f"S_ST_FP f7, gp7, {PST}", "S_SUB_FP f7, f6, f3", f"S_ST_FP f7, gp7, {AST}",
              "S_ADDI_INT gp7, gp7, 1", f"S_ADDI_INT gp1, gp1, {V}")
        p(f"S_MAP_V_FP gp10, gp0, {PST}", f"S_MAP_V_FP gp11, gp0, {AST}",
          f"S_ADDI_INT gp10, gp10, {VL}", f"S_ADDI_INT gp11, gp11, {VL}")

    # ---- masked, confidences, position scores ----
    p.scale_stride(L)
    p.li("gp1", maskbuf)
    p(f"H_PREFETCH_V gp1, gp0, {a_m}, 0, 0")
    p("S_LD_FP f1, gp0, 1")
    p.li("gp2", IND)
    p.li("gp3", P)
    p.li("gp4", C)
    p.li("gp5", SEL)
    p.li("gp6", CPOS)
    p.li("gp7", Q)
    _ref.fconst(p, "f6", L - VL, "f1")  # CPOS row r = L - 64r - i
    p.li("gp8", VL)
    p("S_ADD_FP f7, f1, f0")
    for _ in range(6):
        p("S_ADD_FP f7, f7, f7")        # f7 = 64
    with p.loop("gp10", R):
        p("V_MUL_VF gp9, gp1, f5", "V_MUL_VF gp9, gp9, f5", "V_SUB_VF gp9, gp9, f0, 0, 1", "V_EXP_V gp9, gp9",
          "V_ADD_VF gp9, gp9, f1", "V_RECI_V gp9, gp9", "V_SUB_VF gp9, gp9, f1", "V_MUL_VF gp9, gp9, f5",
          "V_EXP_V gp2, gp9", "V_SUB_VF gp9, gp2, f1", "V_MUL_VV gp4, gp3, gp2", "V_ADD_VV gp4, gp4, gp9",
          "V_MUL_VF gp5, gp2, f0", "V_ADD_VF gp6, gp7, f6", "S_SUB_FP f6, f6, f7")
        for r in ("gp1", "gp2", "gp3", "gp4", "gp5", "gp6"):
            p(f"S_ADD_INT {r}, {r}, gp8")
    p("S_SUB_FP f6, f0, f5")            # -2^72
    _ref.fconst(p, "f7", -16, "f1")
    with p.loop("gp10", K):
        p("S_ADD_FP f2, f4, f0")
        p.li("gp4", C)
        with p.loop("gp11", R):
            p("V_RED_MAX f2, gp4", "S_ADD_INT gp4, gp4, gp8")
        p("S_ADD_FP f3, f0, f0")
        p.li("gp4", C)
        p.li("gp6", CPOS)
        with p.loop("gp11", R):
            p("V_SUB_VF gp9, gp4, f2", "V_MUL_VF gp9, gp9, f5", "V_ADD_VV gp9, gp9, gp6", "V_RED_MAX f3, gp9",
              "S_ADD_INT gp4, gp4, gp8", "S_ADD_INT gp6, gp6, gp8")
        p.li("gp4", C)
        p.li("gp5", SEL)
        p.li("gp6", CPOS)
        with p.loop("gp11", R):
            p("V_SUB_VF gp9, gp6, f3", "V_MUL_VV gp9, gp9, gp9", "V_MUL_VF gp9, gp9, f6", "V_EXP_V gp9, gp9",
              "V_ADD_VV gp5, gp5, gp9", "V_MUL_VF gp9, gp9, f7", "V_ADD_VV gp4, gp4, gp9",
              "S_ADD_INT gp4, gp4, gp8", "S_ADD_INT gp5, gp5, gp8", "S_ADD_INT gp6, gp6, gp8")
    # ---- outputs: tokens = sel * (t + 1) - 1, mask_out = masked - sel ----
    p.li("gp2", IND)
    p.li("gp3", A)
    p.li("gp5", SEL)
    p.li("gp6", tok)
    p.li("gp7", mo)
    with p.loop("gp10", R):
        p("V_MUL_VV gp5, gp5, gp2", "V_ADD_VF gp9, gp3, f1", "V_MUL_VV gp9, gp9, gp5", "V_SUB_VF gp6, gp9, f1",
          "V_SUB_VV gp7, gp2, gp5")
        for r in ("gp2", "gp3", "gp5", "gp6", "gp7"):
            p(f"S_ADD_INT {r}, {r}, gp8")
    return p.text()
