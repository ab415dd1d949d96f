"""int8 GEMM on coral extended with VOPACC4_VX (extension.isa): the shipped reference kernel
(tasks/kernels/reference/coral/gemm.s) with its k loop rewritten. The reference spends, per k and
per pair of rows of c, two widening multiplies (vwmul.vx, 4 cycles each on the vector multiplier)
and two widening adds; here four k steps of a pair of rows are two vopacc4.vx (8 cycles each): the
four int8 rows of b are loaded by four vle8 into one register quad (double-buffered, v16-v23 and
v24-v31, so the loads of the next quad overlap the multiplier), and a[m, k..k+3] is one lw. The
int32 accumulators are cleared with vmv.v.i instead of the reference's first widening step; the
n/m loops, the requantisation (vnclip) and the stores are the reference's. K must be a multiple of
4 (every configuration's is; the reference also needs M even)."""
from __future__ import annotations

from kcgen.paths import TASKS

MNEMONIC = "VOPACC4_VX"

_KLOOP = """g_m:
        add     t3, t0, a4             # t3 = a[m+1, 0]
        add     t4, a1, s3            # t4 = b[0, n0]
        vsetvli zero, t6, e32, m8, ta, ma
        vmv.v.i v0, 0                   # int32 accumulators of rows m and m+1
        vmv.v.i v8, 0
        vsetvli zero, zero, e8, m2, ta, ma   # same SEW/LMUL ratio: vl = min(32, N - n0) carries over
        srli    t5, a4, 2               # quads of k left (K % 4 == 0)
        andi    s0, t5, 1
        beqz    s0, 3f                  # an odd count: one single quad first
        vle8.v  v16, (t4)
        add     t4, t4, a5
        vle8.v  v18, (t4)
        add     t4, t4, a5
        vle8.v  v20, (t4)
        add     t4, t4, a5
        vle8.v  v22, (t4)
        add     t4, t4, a5
        lw      s0, 0(t0)               # a[m, k..k+3]: four int8 in one word
        lw      s1, 0(t3)
        vopacc4.vx v0, s0, v16
        vopacc4.vx v8, s1, v16
        addi    t0, t0, 4
        addi    t3, t3, 4
        addi    t5, t5, -1
3:      beqz    t5, 2f
1:      vle8.v  v16, (t4)               # rows b[k..k+3, n0:n0+vl]
        add     t4, t4, a5
        vle8.v  v18, (t4)
        add     t4, t4, a5
        vle8.v  v20, (t4)
        add     t4, t4, a5
        vle8.v  v22, (t4)
        add     t4, t4, a5
        lw      s0, 0(t0)
        lw      s1, 0(t3)
        vopacc4.vx v0, s0, v16          # c[m] += a[m, k..k+3] . b[k..k+3]
        vle8.v  v24, (t4)               # rows b[k+4..k+7] while the multiplier works
        add     t4, t4, a5
        vle8.v  v26, (t4)
        add     t4, t4, a5
        vle8.v  v28, (t4)
        add     t4, t4, a5
        vle8.v  v30, (t4)
        add     t4, t4, a5
        lw      s4, 4(t0)
        lw      s5, 4(t3)
        vopacc4.vx v8, s1, v16          # c[m+1]
        vopacc4.vx v0, s4, v24
        vopacc4.vx v8, s5, v24
        addi    t0, t0, 8
        addi    t3, t3, 8
        addi    t5, t5, -2
        bnez    t5, 1b
2:      vsetvli zero, zero, e16, m4, ta, ma
"""


def generate(task, cfg, layout, spec):
    if MNEMONIC not in spec.instructions:
        raise ValueError(f"this kernel needs {MNEMONIC}: evaluate it on the overlay of extension.isa")
    if int(cfg["K"]) % 4:
        raise ValueError(f"K = {cfg['K']}: the {MNEMONIC} kernel needs K to be a multiple of 4")
    base = (TASKS / "kernels" / "reference" / "coral" / "gemm.s").read_text()
    start = base.find("g_m:\n")
    end = base.find("2:      vsetvli zero, zero, e16, m4, ta, ma\n")
    nxt = "        addi    t0, t3, 1               # a[m+2, 0]\n"
    if start < 0 or end < start or base.count(nxt) != 1:
        raise ValueError("the reference coral gemm kernel no longer has the k loop this rewrites")
    end += len("2:      vsetvli zero, zero, e16, m4, ta, ma\n")
    text = base[:start] + _KLOOP + base[end:]
    text = text.replace(nxt, "        mv      t0, t3                  # a[m+2, 0]: t3 walked row m+1 to its end\n")
    head = ("# Co-design case (tasks/codesign/coral/gemm): the reference kernel below with its k loop\n"
            "# rewritten for vopacc4.vx (four k steps of a row pair in two instructions).\n")
    return head + text
