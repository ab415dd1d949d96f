"""PLENA reference kernel for dllm_sampling (tasks/level2/dllm_sampling.yaml), base ISA.

PLENA has no compare, select, branch or float-to-integer instruction, so everything is arithmetic
on exact values:

- per position l (row of logits), one pass of V_RED_MAX gives m; then per 64-column chunk
  d = x - m (V_SUB_VF, in place), the token score d * 2^72 * 2^72 + (V - v) (two V_MUL_VF and a
  V_ADD_VV with a row of V - v): 0 * 2^144 + (V - v) = V - v where x = m, and below -2^11 + V < 0
  (or -inf) elsewhere, because distinct bf16 values differ by at least 2^-133; V_RED_MAX of the
  scores is V - t, the lowest index winning. Then e = exp(d) in place and V_RED_SUM, chunk by
  chunk, as the task defines S; c = 1 / S (S_RECI_FP). c and t go to FP SRAM and, every 64
  positions, into vector rows with S_MAP_V_FP.
- masked = [mask > 0] exactly, per row of 64 positions: exp(-mask * 2^144) is 0, 1 or inf for
  mask > 0, = 0, < 0; 1 / (1 + that) is 1, 0.5 or 0; exp((that - 1) * 2^72) is 1, 0, 0.
- top-K by K rounds of extract-max over the confidence rows (c where masked, -1 elsewhere): cm =
  V_RED_MAX; the position score (c - cm) * 2^72 + (L - l) picks the lowest position with c = cm;
  the one-hot exp(-(L - l - s)^2 * 2^72) adds the pick to `sel` and lowers its c by 16. Picks of
  unmasked positions (when fewer than K are masked) are removed at the end by sel * masked.
- tokens = sel * (t + 1) - 1, mask_out = masked - sel.

The logits stream through a ring of 4 prefetch units (H_PREFETCH_V: 256 consecutive elements,
256 / V rows) two units ahead of the compute; a unit's rows have fixed addresses in the ring, so
the loop body is one turn of the ring and every row's chunk addresses are immediates. The mask and
the first logits are prefetched before the constants are built.

generate(..., ext=True) emits the kernel for the extension in tasks/codesign/plena/dllm_sampling
(V_RED_ARGMAX replaces the max pass and the token score pass, and the extract-max rounds).
"""
from __future__ import annotations

from kcgen.paths import TASKS, load_module

_base = load_module(TASKS / "kernels" / "baseline" / "plena.py")
Prog = _base.Prog

RING = 4      # prefetch units in the ring
AHEAD = 2     # units prefetched ahead of the one computed
PST, AST, QST = 2, 66, 130   # FP SRAM staging: confidences, tokens, the row 64 - i


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
    """f4 = -inf, f5 = 2^72 (f7 = 1.0, f6 = 256 on the way)."""
    p("S_LD_FP f7, gp0, 1                  ; 1.0",
      "S_RECI_FP f4, f0                    ; 1/0 = inf",
      "S_SUB_FP f4, f0, f4                 ; f4 = -inf",
      "S_ADD_FP f6, f7, f7", "S_MUL_FP f6, f6, f6", "S_MUL_FP f6, f6, f6", "S_MUL_FP f6, f6, f6   ; 256",
      "S_MUL_FP f5, f6, f6", "S_MUL_FP f5, f5, f5", "S_MUL_FP f5, f5, f5", "S_MUL_FP f5, f5, f6   ; f5 = 2^72")


def q_row(p: Prog, dst: int) -> None:
    """V[dst .. dst+63] = 64, 63, ..., 1 (built in FP SRAM, then S_MAP_V_FP); f7 = 1.0 on entry."""
    fconst(p, "f6", 64, "f7")
    p.li("gp15", 0)
    with p.loop("gp14", 16):
        for _ in range(4):
            p(f"S_ST_FP f6, gp15, {QST}", "S_SUB_FP f6, f6, f7", "S_ADDI_INT gp15, gp15, 1")
    p.li("gp15", dst)
    p(f"S_MAP_V_FP gp15, gp0, {QST}")


def scratch(p: Prog, L: int, V: int, logit_rows: int) -> dict[str, int]:
    """Vector SRAM after the outputs: the mask's prefetch (4 rows); per row of 64 positions the
    confidences P, tokens A, ranking values C, masked flags IND, picks SEL and position scores
    CPOS; the token-score rows CI (V - v, one per chunk); the row Q = 64 .. 1; a scratch row T;
    then `logit_rows` rows for the logits."""
    VL = p.VLEN
    R, n = L // VL, V // VL
    top = max(p.out("tokens"), p.out("mask_out")) + L
    out = {}
    for name, count in (("mask", p.VROWS), ("P", R), ("A", R), ("C", R), ("IND", R), ("SEL", R), ("CPOS", R),
                        ("CI", n), ("Q", 1), ("T", 1), ("logits", logit_rows)):
        out[name] = top
        top += count * VL
    assert top <= 1024 * VL, "vector SRAM overflows"
    return out


def generate(task, cfg, layout, spec, ext: bool = False):
    if task.name != "dllm_sampling":
        return None
    p = Prog(spec, layout, cfg)
    L, V, K = cfg["L"], cfg["V"], cfg["K"]
    VL = p.VLEN
    assert VL == 64 and L % VL == 0 and V % VL == 0 and V <= 256 and L <= 256
    n, R = V // VL, L // VL
    unit = p.VROWS * VL                 # elements per H_PREFETCH_V
    assert unit % V == 0
    rows_per_unit = unit // V
    tok, mo = p.out("tokens"), p.out("mask_out")
    rows = scratch(p, L, V, RING * p.VROWS)
    maskbuf, P, A, C, IND, SEL, CPOS, CI, Q, T, ring = (rows[k] for k in (
        "mask", "P", "A", "C", "IND", "SEL", "CPOS", "CI", "Q", "T", "logits"))
    a_x, a_m = p.areg("logits"), p.areg("mask")
    title = "V_RED_ARGMAX extension" if ext else "base ISA"
    p(f"; dllm_sampling ({title}) L={L} V={V} K={K}")

    # ---- prefetch the mask and the first logits, then the constants ----
    p.scale_stride(L)
    p.li("gp12", maskbuf)
    p(f"H_PREFETCH_V gp12, gp0, {a_m}, 0, 0")
    p.scale_stride(L * V)
    p.li("gp11", 0)                       # HBM offset of the next unit
    for k in range(AHEAD):
        p.li("gp12", ring + k * unit)
        p(f"H_PREFETCH_V gp12, gp11, {a_x}, 0, 0", f"S_ADDI_INT gp11, gp11, {unit}")
    big_constants(p)
    q_row(p, Q)
    if not ext:
        for c in range(n):               # CI_c = V - 64c - i
            fconst(p, "f6", V - VL - VL * c, "f7")
            p.li("gp15", Q)
            p.li("gp14", CI + c * VL)
            p("V_ADD_VF gp14, gp15, f6")
            p.li(f"gp{5 + c}", CI + c * VL)
        fconst(p, "f6", V, "f7")          # f6 = V (t = V - score)
    p.li("gp9", T)
    p.li("gp10", 0)

    # ---- per position: m, t, c ----
    def row(addr):
        X = [f"gp{1 + c}" for c in range(n)]
        for c in range(n):
            p.li(X[c], addr + c * VL)
        p("S_ADD_FP f1, f4, f0")
        if ext:
            for c in range(n):
                p(f"V_RED_ARGMAX f1, f3, {X[c]}, {c}")
        else:
            for c in range(n):
                p(f"V_RED_MAX f1, {X[c]}")
            p("S_ADD_FP f3, f0, f0")
        p("S_ADD_FP f2, f0, f0")
        for c in range(n):
            p(f"V_SUB_VF {X[c]}, {X[c]}, f1")
            if not ext:
                p(f"V_MUL_VF gp9, {X[c]}, f5", "V_MUL_VF gp9, gp9, f5", f"V_ADD_VV gp9, gp9, gp{5 + c}",
                  "V_RED_MAX f3, gp9")
            p(f"V_EXP_V {X[c]}, {X[c]}", f"V_RED_SUM f2, {X[c]}")
        p("S_RECI_FP f7, f2", f"S_ST_FP f7, gp10, {PST}")
        if ext:
            p(f"S_ST_FP f3, gp10, {AST}")
        else:
            p("S_SUB_FP f7, f6, f3", f"S_ST_FP f7, gp10, {AST}")
        p("S_ADDI_INT gp10, gp10, 1")

    def turn(prefetch_all: bool):
        """One turn of the ring: unit k computes from slot k and prefetches unit k + AHEAD."""
        for k in range(RING):
            if prefetch_all or k + AHEAD < RING:
                p.li("gp12", ring + ((k + AHEAD) % RING) * unit)
                p(f"H_PREFETCH_V gp12, gp11, {a_x}, 0, 0", f"S_ADDI_INT gp11, gp11, {unit}")
            for i in range(rows_per_unit):
                row(ring + k * unit + i * V)

    turns = VL // (rows_per_unit * RING)   # ring turns per 64 positions
    assert turns >= 1 and VL % (rows_per_unit * RING) == 0
    for b in range(R):
        last = b == R - 1
        count = turns - 1 if last else turns
        if count:
            with p.loop("gp13", count):
                turn(True)
        if last:
            turn(False)
        p.li("gp15", P + b * VL)
        p(f"S_MAP_V_FP gp15, gp0, {PST}")
        p.li("gp15", A + b * VL)
        p(f"S_MAP_V_FP gp15, gp0, {AST}")
        p.li("gp10", 0)

    # ---- masked, confidences, position scores ----
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
        p("S_ADD_FP f2, f4, f0")
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
        p.li("gp15", A + r * VL)
        p(f"V_MUL_VV {Sr[r]}, {Sr[r]}, gp14", "V_ADD_VF gp9, gp15, f1", f"V_MUL_VV gp9, gp9, {Sr[r]}")
        p.li("gp15", tok + r * VL)
        p("V_SUB_VF gp15, gp9, f1")
        p.li("gp15", mo + r * VL)
        p(f"V_SUB_VV gp15, gp14, {Sr[r]}")
    return p.text()
