# layer_norm on boom (RV64IMFD, out of order): y[m, :] = (x[m, :] - mean) / sqrt(var + 1e-5) * gamma + beta
# (biased variance), f32.
#
# Entry: a0 = x, a1 = gamma, a2 = beta, a3 = y, a4 = M, a5 = N. M must be a multiple of 4 and N even
# (every configuration's are).
#
# Algorithm: four rows at a time, two columns per step (8 independent chains, as FP operations
# take 4 cycles).
#  1. sum and sum of squares in double precision (fcvt.d.s, fadd.d, fmadd.d; 16 accumulators), so
#     var = E[x^2] - mean^2 keeps full f32 accuracy even when |mean| >> std (one pass, no cancellation
#     trouble at 2^-53).
#  2. rstd = 1/sqrt(var + eps) for the 4 rows at once on the FP pipe: the 0x5f3759df bit-trick seed
#     and three Newton steps (error below 1e-7), instead of fsqrt + fdiv on the iterative divider.
#  3. y = fma(fma(x, rstd, -mean*rstd), gamma, beta): two FMAs an element; gamma and beta are loaded
#     once per column for the 4 rows (2.5 memory operations an element, the bound), and the next
#     step's loads issue before this step's stores.

        .text
        .globl layer_norm
layer_norm:
        addi    sp, sp, -128
        fsd     fs0, 0(sp)
        fsd     fs1, 8(sp)
        fsd     fs2, 16(sp)
        fsd     fs3, 24(sp)
        fsd     fs4, 32(sp)
        fsd     fs5, 40(sp)
        fsd     fs6, 48(sp)
        fsd     fs7, 56(sp)
        fsd     fs8, 64(sp)
        fsd     fs9, 72(sp)
        fsd     fs10, 80(sp)
        fsd     fs11, 88(sp)
        sd      s0, 96(sp)
        sd      s1, 104(sp)
        mv      t5, a3                  # t5 = y (a3 holds a scratch register below)
        slli    a3, a5, 2               # a3 = N*4: one row
        fcvt.d.w fs8, a5
        li      t4, 1
        fcvt.d.w fs9, t4
        fdiv.d  fs8, fs9, fs8           # fs8 = 1/N (double)
        li      t4, 0x3727c5ac
        fmv.w.x fs9, t4                 # fs9 = eps
        li      t4, 0x3fc00000
        fmv.w.x fs10, t4                # fs10 = 1.5
        li      t4, 0x3f000000
        fmv.w.x fs11, t4                # fs11 = 0.5
        li      t6, 0x5f3759df
        sd      a4, 120(sp)             # rows left
ln_rows:
        mv      t0, a0
        add     t1, t0, a3
        add     t2, t1, a3
        add     t3, t2, a3
        mv      a6, t5
        add     a7, a6, a3
        add     s0, a7, a3
        add     s1, s0, a3
        add     t4, a0, a3              # t4 = end of row 0
        fmv.d.x fs0, zero
        fmv.d.x fs1, zero
        fmv.d.x fs2, zero
        fmv.d.x fs3, zero
        fmv.d.x fs4, zero
        fmv.d.x fs5, zero
        fmv.d.x fs6, zero
        fmv.d.x fs7, zero
        fmv.d.x ft8, zero
        fmv.d.x ft9, zero
        fmv.d.x ft10, zero
        fmv.d.x ft11, zero
        fmv.d.x fa0, zero
        fmv.d.x fa1, zero
        fmv.d.x fa2, zero
        fmv.d.x fa3, zero
1:
        flw     ft0, 0(t0)
        flw     ft1, 4(t0)
        flw     ft2, 0(t1)
        flw     ft3, 4(t1)
        flw     ft4, 0(t2)
        flw     ft5, 4(t2)
        flw     ft6, 0(t3)
        flw     ft7, 4(t3)
        fcvt.d.s ft0, ft0
        fcvt.d.s ft1, ft1
        fcvt.d.s ft2, ft2
        fcvt.d.s ft3, ft3
        fcvt.d.s ft4, ft4
        fcvt.d.s ft5, ft5
        fcvt.d.s ft6, ft6
        fcvt.d.s ft7, ft7
        fadd.d  fs0, fs0, ft0
        fadd.d  fs1, fs1, ft1
        fadd.d  fs2, fs2, ft2
        fadd.d  fs3, fs3, ft3
        fadd.d  fs4, fs4, ft4
        fadd.d  fs5, fs5, ft5
        fadd.d  fs6, fs6, ft6
        fadd.d  fs7, fs7, ft7
        fmadd.d ft8, ft0, ft0, ft8
        fmadd.d ft9, ft1, ft1, ft9
        fmadd.d ft10, ft2, ft2, ft10
        fmadd.d ft11, ft3, ft3, ft11
        fmadd.d fa0, ft4, ft4, fa0
        fmadd.d fa1, ft5, ft5, fa1
        fmadd.d fa2, ft6, ft6, fa2
        fmadd.d fa3, ft7, ft7, fa3
        addi    t0, t0, 8
        addi    t1, t1, 8
        addi    t2, t2, 8
        addi    t3, t3, 8
        bltu    t0, t4, 1b
        fadd.d  ft0, fs0, fs1
        fadd.d  ft1, fs2, fs3
        fadd.d  ft2, fs4, fs5
        fadd.d  ft3, fs6, fs7
        fadd.d  ft4, ft8, ft9
        fadd.d  ft5, ft10, ft11
        fadd.d  ft6, fa0, fa1
        fadd.d  ft7, fa2, fa3
        fmul.d  ft0, ft0, fs8
        fmul.d  ft1, ft1, fs8
        fmul.d  ft2, ft2, fs8
        fmul.d  ft3, ft3, fs8
        fmul.d  ft4, ft4, fs8
        fmul.d  ft5, ft5, fs8
        fmul.d  ft6, ft6, fs8
        fmul.d  ft7, ft7, fs8
        fnmsub.d ft4, ft0, ft0, ft4
        fnmsub.d ft5, ft1, ft1, ft5
        fnmsub.d ft6, ft2, ft2, ft6
        fnmsub.d ft7, ft3, ft3, ft7
        fcvt.s.d ft4, ft4
        fcvt.s.d ft5, ft5
        fcvt.s.d ft6, ft6
        fcvt.s.d ft7, ft7
        fcvt.s.d ft0, ft0
        fcvt.s.d ft1, ft1
        fcvt.s.d ft2, ft2
        fcvt.s.d ft3, ft3
        fadd.s  ft4, ft4, fs9
        fadd.s  ft5, ft5, fs9
        fadd.s  ft6, ft6, fs9
        fadd.s  ft7, ft7, fs9
        fmv.x.w a4, ft4
        fmv.x.w t4, ft5
        fmv.x.w a5, ft6
        fmv.x.w a7, ft7
        srli    a4, a4, 1
        sub     a4, t6, a4
        srli    t4, t4, 1
        sub     t4, t6, t4
        srli    a5, a5, 1
        sub     a5, t6, a5
        srli    a7, a7, 1
        sub     a7, t6, a7
        fmv.w.x fs0, a4
        fmv.w.x fs1, t4
        fmv.w.x fs2, a5
        fmv.w.x fs3, a7
        fmul.s  fa0, ft4, fs11
        fmul.s  fa1, ft5, fs11
        fmul.s  fa2, ft6, fs11
        fmul.s  fa3, ft7, fs11
        fmul.s  ft8, fs0, fs0
        fmul.s  ft9, fs1, fs1
        fmul.s  ft10, fs2, fs2
        fmul.s  ft11, fs3, fs3
        fnmsub.s ft8, fa0, ft8, fs10
        fnmsub.s ft9, fa1, ft9, fs10
        fnmsub.s ft10, fa2, ft10, fs10
        fnmsub.s ft11, fa3, ft11, fs10
        fmul.s  fs0, fs0, ft8
        fmul.s  fs1, fs1, ft9
        fmul.s  fs2, fs2, ft10
        fmul.s  fs3, fs3, ft11
        fmul.s  ft8, fs0, fs0
        fmul.s  ft9, fs1, fs1
        fmul.s  ft10, fs2, fs2
        fmul.s  ft11, fs3, fs3
        fnmsub.s ft8, fa0, ft8, fs10
        fnmsub.s ft9, fa1, ft9, fs10
        fnmsub.s ft10, fa2, ft10, fs10
        fnmsub.s ft11, fa3, ft11, fs10
        fmul.s  fs0, fs0, ft8
        fmul.s  fs1, fs1, ft9
        fmul.s  fs2, fs2, ft10
        fmul.s  fs3, fs3, ft11
        fmul.s  ft8, fs0, fs0
        fmul.s  ft9, fs1, fs1
        fmul.s  ft10, fs2, fs2
        fmul.s  ft11, fs3, fs3
        fnmsub.s ft8, fa0, ft8, fs10
        fnmsub.s ft9, fa1, ft9, fs10
        fnmsub.s ft10, fa2, ft10, fs10
        fnmsub.s ft11, fa3, ft11, fs10
        fmul.s  fs0, fs0, ft8
        fmul.s  fs1, fs1, ft9
        fmul.s  fs2, fs2, ft10
        fmul.s  fs3, fs3, ft11
        fmul.s  fs4, ft0, fs0
        fmul.s  fs5, ft1, fs1
        fmul.s  fs6, ft2, fs2
        fmul.s  fs7, ft3, fs3
        srli    a5, a3, 2
        mv      t0, a0
        add     t1, t0, a3
        add     t2, t1, a3
        add     t3, t2, a3
        mv      a6, t5
        add     a7, a6, a3
        add     s0, a7, a3
        add     s1, s0, a3
        mv      t4, a1                  # gamma[n]
        mv      a4, a2                  # beta[n]
        add     t6, a1, a3              # end of gamma
        flw     fa4, 0(t4)
        flw     fa5, 4(t4)
        flw     fa6, 0(a4)
        flw     fa7, 4(a4)
        flw     ft0, 0(t0)
        flw     ft1, 4(t0)
        flw     ft2, 0(t1)
        flw     ft3, 4(t1)
        flw     ft4, 0(t2)
        flw     ft5, 4(t2)
        flw     ft6, 0(t3)
        flw     ft7, 4(t3)
2:
        fmsub.s ft8, ft0, fs0, fs4
        fmsub.s ft9, ft1, fs0, fs4
        fmsub.s ft10, ft2, fs1, fs5
        fmsub.s ft11, ft3, fs1, fs5
        fmsub.s fa0, ft4, fs2, fs6
        fmsub.s fa1, ft5, fs2, fs6
        fmsub.s fa2, ft6, fs3, fs7
        fmsub.s fa3, ft7, fs3, fs7
        fmadd.s ft8, ft8, fa4, fa6
        fmadd.s ft9, ft9, fa5, fa7
        fmadd.s ft10, ft10, fa4, fa6
        fmadd.s ft11, ft11, fa5, fa7
        fmadd.s fa0, fa0, fa4, fa6
        fmadd.s fa1, fa1, fa5, fa7
        fmadd.s fa2, fa2, fa4, fa6
        fmadd.s fa3, fa3, fa5, fa7
        addi    t4, t4, 8
        addi    a4, a4, 8
        addi    t0, t0, 8
        addi    t1, t1, 8
        addi    t2, t2, 8
        addi    t3, t3, 8
        flw     fa4, 0(t4)
        flw     fa5, 4(t4)
        flw     fa6, 0(a4)
        flw     fa7, 4(a4)
        flw     ft0, 0(t0)
        flw     ft1, 4(t0)
        flw     ft2, 0(t1)
        flw     ft3, 4(t1)
        flw     ft4, 0(t2)
        flw     ft5, 4(t2)
        flw     ft6, 0(t3)
        flw     ft7, 4(t3)
        fsw     ft8, 0(a6)
        fsw     ft9, 4(a6)
        fsw     ft10, 0(a7)
        fsw     ft11, 4(a7)
        fsw     fa0, 0(s0)
        fsw     fa1, 4(s0)
        fsw     fa2, 0(s1)
        fsw     fa3, 4(s1)
        addi    a6, a6, 8
        addi    a7, a7, 8
        addi    s0, s0, 8
        addi    s1, s1, 8
        bltu    t4, t6, 2b
        li      t6, 0x5f3759df
        slli    t4, a3, 2
        add     a0, a0, t4
        add     t5, t5, t4
        ld      t4, 120(sp)
        addi    t4, t4, -4
        sd      t4, 120(sp)
        bnez    t4, ln_rows
        fld     fs0, 0(sp)
        fld     fs1, 8(sp)
        fld     fs2, 16(sp)
        fld     fs3, 24(sp)
        fld     fs4, 32(sp)
        fld     fs5, 40(sp)
        fld     fs6, 48(sp)
        fld     fs7, 56(sp)
        fld     fs8, 64(sp)
        fld     fs9, 72(sp)
        fld     fs10, 80(sp)
        fld     fs11, 88(sp)
        ld      s0, 96(sp)
        ld      s1, 104(sp)
        addi    sp, sp, 128
        ret
