# rms_norm on boom (RV64IMFD, out of order): y[m, :] = x[m, :] / sqrt(mean(x[m, :]^2) + 1e-6) * gamma, f32.
#
# Entry: a0 = x, a1 = gamma, a2 = y, a3 = M, a4 = N. M must be a multiple of 4 and N even (every
# configuration's are).
#
# Algorithm: four rows at a time, two columns per step (8 independent chains, as an FMA chain
# needs 4 cycles a step).
#  1. sum of squares: 8 f32 fmadd.s accumulators (two per row), one load and one FMA an element.
#  2. rstd = 1/sqrt(ss/N + eps) for the 4 rows at once on the FP pipe: the 0x5f3759df bit-trick
#     seed (3.5% error) and three Newton steps y *= 1.5 - v/2 * y^2 (error below 1e-7), instead of
#     fsqrt.s + fdiv.s on the iterative divider (54 cycles a row).
#  3. y = (x * gamma) * rstd: gamma is loaded once per column for the 4 rows (2.25 memory operations
#     an element, the bound), the next step's loads issue before this step's stores.

        .text
        .globl rms_norm
rms_norm:
        addi    sp, sp, -112
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
        slli    a5, a4, 2               # a5 = N*4: one row
        fcvt.s.w fs8, a4
        li      t4, 0x3f800000
        fmv.w.x fs9, t4
        fdiv.s  fs8, fs9, fs8           # fs8 = 1/N
        li      t4, 0x358637bd
        fmv.w.x fs9, t4                 # fs9 = eps
        li      t4, 0x3fc00000
        fmv.w.x fs10, t4                # fs10 = 1.5
        li      t4, 0x3f000000
        fmv.w.x fs11, t4                # fs11 = 0.5
        li      t6, 0x5f3759df
rn_rows:
        mv      t0, a0
        add     t1, t0, a5
        add     t2, t1, a5
        add     t3, t2, a5
        mv      a6, a2
        add     a7, a6, a5
        add     s0, a7, a5
        add     s1, s0, a5
        add     t4, a0, a5              # t4 = end of row 0
        fmv.w.x fs0, zero
        fmv.w.x fs1, zero
        fmv.w.x fs2, zero
        fmv.w.x fs3, zero
        fmv.w.x fs4, zero
        fmv.w.x fs5, zero
        fmv.w.x fs6, zero
        fmv.w.x fs7, zero
1:
        flw     ft0, 0(t0)
        flw     ft1, 4(t0)
        flw     ft2, 0(t1)
        flw     ft3, 4(t1)
        flw     ft4, 0(t2)
        flw     ft5, 4(t2)
        flw     ft6, 0(t3)
        flw     ft7, 4(t3)
        fmadd.s fs0, ft0, ft0, fs0
        fmadd.s fs1, ft1, ft1, fs1
        fmadd.s fs2, ft2, ft2, fs2
        fmadd.s fs3, ft3, ft3, fs3
        fmadd.s fs4, ft4, ft4, fs4
        fmadd.s fs5, ft5, ft5, fs5
        fmadd.s fs6, ft6, ft6, fs6
        fmadd.s fs7, ft7, ft7, fs7
        addi    t0, t0, 8
        addi    t1, t1, 8
        addi    t2, t2, 8
        addi    t3, t3, 8
        bltu    t0, t4, 1b
        fadd.s  ft0, fs0, fs1
        fadd.s  ft1, fs2, fs3
        fadd.s  ft2, fs4, fs5
        fadd.s  ft3, fs6, fs7
        fmadd.s ft0, ft0, fs8, fs9
        fmadd.s ft1, ft1, fs8, fs9
        fmadd.s ft2, ft2, fs8, fs9
        fmadd.s ft3, ft3, fs8, fs9
        fmv.x.w t4, ft0
        fmv.x.w t5, ft1
        fmv.x.w a4, ft2
        fmv.x.w a6, ft3
        srli    t4, t4, 1
        sub     t4, t6, t4
        srli    t5, t5, 1
        sub     t5, t6, t5
        srli    a4, a4, 1
        sub     a4, t6, a4
        srli    a6, a6, 1
        sub     a6, t6, a6
        fmv.w.x fs0, t4
        fmv.w.x fs1, t5
        fmv.w.x fs2, a4
        fmv.w.x fs3, a6
        fmul.s  ft8, ft0, fs11
        fmul.s  ft9, ft1, fs11
        fmul.s  ft10, ft2, fs11
        fmul.s  ft11, ft3, fs11
        fmul.s  ft4, fs0, fs0
        fmul.s  ft5, fs1, fs1
        fmul.s  ft6, fs2, fs2
        fmul.s  ft7, fs3, fs3
        fnmsub.s ft4, ft8, ft4, fs10
        fnmsub.s ft5, ft9, ft5, fs10
        fnmsub.s ft6, ft10, ft6, fs10
        fnmsub.s ft7, ft11, ft7, fs10
        fmul.s  fs0, fs0, ft4
        fmul.s  fs1, fs1, ft5
        fmul.s  fs2, fs2, ft6
        fmul.s  fs3, fs3, ft7
        fmul.s  ft4, fs0, fs0
        fmul.s  ft5, fs1, fs1
        fmul.s  ft6, fs2, fs2
        fmul.s  ft7, fs3, fs3
        fnmsub.s ft4, ft8, ft4, fs10
        fnmsub.s ft5, ft9, ft5, fs10
        fnmsub.s ft6, ft10, ft6, fs10
        fnmsub.s ft7, ft11, ft7, fs10
        fmul.s  fs0, fs0, ft4
        fmul.s  fs1, fs1, ft5
        fmul.s  fs2, fs2, ft6
        fmul.s  fs3, fs3, ft7
        fmul.s  ft4, fs0, fs0
        fmul.s  ft5, fs1, fs1
        fmul.s  ft6, fs2, fs2
        fmul.s  ft7, fs3, fs3
        fnmsub.s ft4, ft8, ft4, fs10
        fnmsub.s ft5, ft9, ft5, fs10
        fnmsub.s ft6, ft10, ft6, fs10
        fnmsub.s ft7, ft11, ft7, fs10
        fmul.s  fs0, fs0, ft4
        fmul.s  fs1, fs1, ft5
        fmul.s  fs2, fs2, ft6
        fmul.s  fs3, fs3, ft7
        mv      t0, a0
        add     t1, t0, a5
        add     t2, t1, a5
        add     t3, t2, a5
        mv      a6, a2
        add     a7, a6, a5
        add     s0, a7, a5
        add     s1, s0, a5
        mv      t4, a1                  # gamma[n]
        add     t5, a1, a5              # end of gamma
        flw     fs4, 0(t4)
        flw     fs5, 4(t4)
        flw     ft0, 0(t0)
        flw     ft1, 4(t0)
        flw     ft2, 0(t1)
        flw     ft3, 4(t1)
        flw     ft4, 0(t2)
        flw     ft5, 4(t2)
        flw     ft6, 0(t3)
        flw     ft7, 4(t3)
2:
        fmul.s  ft8, ft0, fs4
        fmul.s  ft9, ft1, fs5
        fmul.s  ft10, ft2, fs4
        fmul.s  ft11, ft3, fs5
        fmul.s  fa0, ft4, fs4
        fmul.s  fa1, ft5, fs5
        fmul.s  fa2, ft6, fs4
        fmul.s  fa3, ft7, fs5
        fmul.s  ft8, ft8, fs0
        fmul.s  ft9, ft9, fs0
        fmul.s  ft10, ft10, fs1
        fmul.s  ft11, ft11, fs1
        fmul.s  fa0, fa0, fs2
        fmul.s  fa1, fa1, fs2
        fmul.s  fa2, fa2, fs3
        fmul.s  fa3, fa3, fs3
        addi    t4, t4, 8
        addi    t0, t0, 8
        addi    t1, t1, 8
        addi    t2, t2, 8
        addi    t3, t3, 8
        flw     fs4, 0(t4)
        flw     fs5, 4(t4)
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
        bltu    t4, t5, 2b
        slli    t4, a5, 2
        add     a0, a0, t4
        add     a2, a2, t4
        addi    a3, a3, -4
        bnez    a3, rn_rows
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
        addi    sp, sp, 112
        ret
