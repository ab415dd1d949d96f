# gemv on boom (RV64IMFD, out of order): y[M] = a[M, K] @ x[K], f32, row-major.
#
# Entry: a0 = a, a1 = x, a2 = y, a3 = M, a4 = K. M must be a multiple of 16 and K of 4 (every
# configuration's are).
#
# Algorithm: every element of a is used once, so the kernel is bound by the one memory port (one
# load per cycle), not by the FP pipe. 16 rows are reduced together: one step loads x[k..k+3]
# once and a[m..m+15, k..k+3] (16 row pointers, immediate offsets), 68 loads for 64 fmadd.s
# into 16 independent accumulators (each FMA chain is touched every 16th FP operation, well above
# the 4-cycle latency): 1.062 loads per multiply-add. Sums are f32 in k order.

        .text
        .globl gemv
gemv:
        addi    sp, sp, -152
        sd      s1, 0(sp)
        sd      s2, 8(sp)
        sd      s3, 16(sp)
        sd      s4, 24(sp)
        sd      s5, 32(sp)
        sd      s6, 40(sp)
        sd      s7, 48(sp)
        fsd     fs0, 56(sp)
        fsd     fs1, 64(sp)
        fsd     fs2, 72(sp)
        fsd     fs3, 80(sp)
        fsd     fs4, 88(sp)
        fsd     fs5, 96(sp)
        fsd     fs6, 104(sp)
        fsd     fs7, 112(sp)
        fsd     fs8, 120(sp)
        fsd     fs9, 128(sp)
        fsd     fs10, 136(sp)
        fsd     fs11, 144(sp)
        slli    s1, a4, 2               # s1 = K*4: row stride
gv_m:
        mv      t0, a0
        add     t1, t0, s1
        add     t2, t1, s1
        add     t3, t2, s1
        add     t4, t3, s1
        add     t5, t4, s1
        add     t6, t5, s1
        add     a5, t6, s1
        add     a6, a5, s1
        add     a7, a6, s1
        add     s2, a7, s1
        add     s3, s2, s1
        add     s4, s3, s1
        add     s5, s4, s1
        add     s6, s5, s1
        add     s7, s6, s1
        mv      a4, a1                  # a4 = x[k]
        fmv.w.x fs0, zero
        fmv.w.x fs1, zero
        fmv.w.x fs2, zero
        fmv.w.x fs3, zero
        fmv.w.x fs4, zero
        fmv.w.x fs5, zero
        fmv.w.x fs6, zero
        fmv.w.x fs7, zero
        fmv.w.x fs8, zero
        fmv.w.x fs9, zero
        fmv.w.x fs10, zero
        fmv.w.x fs11, zero
        fmv.w.x ft8, zero
        fmv.w.x ft9, zero
        fmv.w.x ft10, zero
        fmv.w.x ft11, zero
        add     a0, s7, s1         # the next block of rows (for the next pass)
        addi    a3, a3, -16
        add     s1, a1, s1              # s1 = end of x (the row stride is K*4 = its size)
gv_k:
        flw     ft0, 0(a4)
        flw     ft1, 4(a4)
        flw     ft2, 8(a4)
        flw     ft3, 12(a4)
        flw     fa0, 0(t0)
        fmadd.s fs0, fa0, ft0, fs0
        flw     fa1, 0(t1)
        fmadd.s fs1, fa1, ft0, fs1
        flw     fa2, 0(t2)
        fmadd.s fs2, fa2, ft0, fs2
        flw     fa3, 0(t3)
        fmadd.s fs3, fa3, ft0, fs3
        flw     fa4, 0(t4)
        fmadd.s fs4, fa4, ft0, fs4
        flw     fa5, 0(t5)
        fmadd.s fs5, fa5, ft0, fs5
        flw     fa6, 0(t6)
        fmadd.s fs6, fa6, ft0, fs6
        flw     fa7, 0(a5)
        fmadd.s fs7, fa7, ft0, fs7
        flw     fa0, 0(a6)
        fmadd.s fs8, fa0, ft0, fs8
        flw     fa1, 0(a7)
        fmadd.s fs9, fa1, ft0, fs9
        flw     fa2, 0(s2)
        fmadd.s fs10, fa2, ft0, fs10
        flw     fa3, 0(s3)
        fmadd.s fs11, fa3, ft0, fs11
        flw     fa4, 0(s4)
        fmadd.s ft8, fa4, ft0, ft8
        flw     fa5, 0(s5)
        fmadd.s ft9, fa5, ft0, ft9
        flw     fa6, 0(s6)
        fmadd.s ft10, fa6, ft0, ft10
        flw     fa7, 0(s7)
        fmadd.s ft11, fa7, ft0, ft11
        flw     fa0, 4(t0)
        fmadd.s fs0, fa0, ft1, fs0
        flw     fa1, 4(t1)
        fmadd.s fs1, fa1, ft1, fs1
        flw     fa2, 4(t2)
        fmadd.s fs2, fa2, ft1, fs2
        flw     fa3, 4(t3)
        fmadd.s fs3, fa3, ft1, fs3
        flw     fa4, 4(t4)
        fmadd.s fs4, fa4, ft1, fs4
        flw     fa5, 4(t5)
        fmadd.s fs5, fa5, ft1, fs5
        flw     fa6, 4(t6)
        fmadd.s fs6, fa6, ft1, fs6
        flw     fa7, 4(a5)
        fmadd.s fs7, fa7, ft1, fs7
        flw     fa0, 4(a6)
        fmadd.s fs8, fa0, ft1, fs8
        flw     fa1, 4(a7)
        fmadd.s fs9, fa1, ft1, fs9
        flw     fa2, 4(s2)
        fmadd.s fs10, fa2, ft1, fs10
        flw     fa3, 4(s3)
        fmadd.s fs11, fa3, ft1, fs11
        flw     fa4, 4(s4)
        fmadd.s ft8, fa4, ft1, ft8
        flw     fa5, 4(s5)
        fmadd.s ft9, fa5, ft1, ft9
        flw     fa6, 4(s6)
        fmadd.s ft10, fa6, ft1, ft10
        flw     fa7, 4(s7)
        fmadd.s ft11, fa7, ft1, ft11
        flw     fa0, 8(t0)
        fmadd.s fs0, fa0, ft2, fs0
        flw     fa1, 8(t1)
        fmadd.s fs1, fa1, ft2, fs1
        flw     fa2, 8(t2)
        fmadd.s fs2, fa2, ft2, fs2
        flw     fa3, 8(t3)
        fmadd.s fs3, fa3, ft2, fs3
        flw     fa4, 8(t4)
        fmadd.s fs4, fa4, ft2, fs4
        flw     fa5, 8(t5)
        fmadd.s fs5, fa5, ft2, fs5
        flw     fa6, 8(t6)
        fmadd.s fs6, fa6, ft2, fs6
        flw     fa7, 8(a5)
        fmadd.s fs7, fa7, ft2, fs7
        flw     fa0, 8(a6)
        fmadd.s fs8, fa0, ft2, fs8
        flw     fa1, 8(a7)
        fmadd.s fs9, fa1, ft2, fs9
        flw     fa2, 8(s2)
        fmadd.s fs10, fa2, ft2, fs10
        flw     fa3, 8(s3)
        fmadd.s fs11, fa3, ft2, fs11
        flw     fa4, 8(s4)
        fmadd.s ft8, fa4, ft2, ft8
        flw     fa5, 8(s5)
        fmadd.s ft9, fa5, ft2, ft9
        flw     fa6, 8(s6)
        fmadd.s ft10, fa6, ft2, ft10
        flw     fa7, 8(s7)
        fmadd.s ft11, fa7, ft2, ft11
        flw     fa0, 12(t0)
        fmadd.s fs0, fa0, ft3, fs0
        flw     fa1, 12(t1)
        fmadd.s fs1, fa1, ft3, fs1
        flw     fa2, 12(t2)
        fmadd.s fs2, fa2, ft3, fs2
        flw     fa3, 12(t3)
        fmadd.s fs3, fa3, ft3, fs3
        flw     fa4, 12(t4)
        fmadd.s fs4, fa4, ft3, fs4
        flw     fa5, 12(t5)
        fmadd.s fs5, fa5, ft3, fs5
        flw     fa6, 12(t6)
        fmadd.s fs6, fa6, ft3, fs6
        flw     fa7, 12(a5)
        fmadd.s fs7, fa7, ft3, fs7
        flw     fa0, 12(a6)
        fmadd.s fs8, fa0, ft3, fs8
        flw     fa1, 12(a7)
        fmadd.s fs9, fa1, ft3, fs9
        flw     fa2, 12(s2)
        fmadd.s fs10, fa2, ft3, fs10
        flw     fa3, 12(s3)
        fmadd.s fs11, fa3, ft3, fs11
        flw     fa4, 12(s4)
        fmadd.s ft8, fa4, ft3, ft8
        flw     fa5, 12(s5)
        fmadd.s ft9, fa5, ft3, ft9
        flw     fa6, 12(s6)
        fmadd.s ft10, fa6, ft3, ft10
        flw     fa7, 12(s7)
        fmadd.s ft11, fa7, ft3, ft11
        addi    t0, t0, 16
        addi    t1, t1, 16
        addi    t2, t2, 16
        addi    t3, t3, 16
        addi    t4, t4, 16
        addi    t5, t5, 16
        addi    t6, t6, 16
        addi    a5, a5, 16
        addi    a6, a6, 16
        addi    a7, a7, 16
        addi    s2, s2, 16
        addi    s3, s3, 16
        addi    s4, s4, 16
        addi    s5, s5, 16
        addi    s6, s6, 16
        addi    s7, s7, 16
        addi    a4, a4, 16
        bltu    a4, s1, gv_k
        fsw     fs0, 0(a2)
        fsw     fs1, 4(a2)
        fsw     fs2, 8(a2)
        fsw     fs3, 12(a2)
        fsw     fs4, 16(a2)
        fsw     fs5, 20(a2)
        fsw     fs6, 24(a2)
        fsw     fs7, 28(a2)
        fsw     fs8, 32(a2)
        fsw     fs9, 36(a2)
        fsw     fs10, 40(a2)
        fsw     fs11, 44(a2)
        fsw     ft8, 48(a2)
        fsw     ft9, 52(a2)
        fsw     ft10, 56(a2)
        fsw     ft11, 60(a2)
        addi    a2, a2, 64
        sub     s1, s1, a1              # s1 = K*4 again
        bnez    a3, gv_m
        ld      s1, 0(sp)
        ld      s2, 8(sp)
        ld      s3, 16(sp)
        ld      s4, 24(sp)
        ld      s5, 32(sp)
        ld      s6, 40(sp)
        ld      s7, 48(sp)
        fld     fs0, 56(sp)
        fld     fs1, 64(sp)
        fld     fs2, 72(sp)
        fld     fs3, 80(sp)
        fld     fs4, 88(sp)
        fld     fs5, 96(sp)
        fld     fs6, 104(sp)
        fld     fs7, 112(sp)
        fld     fs8, 120(sp)
        fld     fs9, 128(sp)
        fld     fs10, 136(sp)
        fld     fs11, 144(sp)
        addi    sp, sp, 152
        ret
