# gemv on boom (RV64IMFD, out of order): y[M] = a[M, K] @ x[K], f32, row-major.
#
# Entry: a0 = a, a1 = x, a2 = y, a3 = M, a4 = K. M must be a multiple of 8 and K of 4 (every
# configuration's are).
#
# Algorithm: every element of a is used once, so the kernel is bound by the one memory port (one
# load per cycle), not by the FP pipe. Eight rows are reduced together: one step loads x[k..k+3]
# once and a[m..m+7, k..k+3] (8 row pointers, immediate offsets), 36 loads for 32 fmadd.s into 8
# independent accumulators (each FMA chain is touched every 8th FP operation, above the 4-cycle
# latency): about 1.1 loads per multiply-add. Sums are f32 in k order.

        .text
        .globl gemv
gemv:
        addi    sp, sp, -80
        sd      s1, 64(sp)
        fsd     fs0, 0(sp)
        fsd     fs1, 8(sp)
        fsd     fs2, 16(sp)
        fsd     fs3, 24(sp)
        fsd     fs4, 32(sp)
        fsd     fs5, 40(sp)
        fsd     fs6, 48(sp)
        fsd     fs7, 56(sp)
        slli    a5, a4, 2               # a5 = K*4: row stride
        slli    a6, a5, 3               # a6 = 8 rows
gv_m:
        mv      t0, a0
        add     t1, t0, a5
        add     t2, t1, a5
        add     t3, t2, a5
        add     t4, t3, a5
        add     t5, t4, a5
        add     t6, t5, a5
        add     a7, t6, a5
        mv      a4, a1                  # a4 = x[k]
        addi    a3, a3, -8
        fmv.w.x fs0, zero
        fmv.w.x fs1, zero
        fmv.w.x fs2, zero
        fmv.w.x fs3, zero
        fmv.w.x fs4, zero
        fmv.w.x fs5, zero
        fmv.w.x fs6, zero
        fmv.w.x fs7, zero
        add     a0, a0, a6              # next block of rows (for the next pass)
        add     s1, a1, a5              # s1 = end of x
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
        flw     fa7, 0(a7)
        fmadd.s fs7, fa7, ft0, fs7
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
        flw     fa7, 4(a7)
        fmadd.s fs7, fa7, ft1, fs7
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
        flw     fa7, 8(a7)
        fmadd.s fs7, fa7, ft2, fs7
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
        flw     fa7, 12(a7)
        fmadd.s fs7, fa7, ft3, fs7
        addi    t0, t0, 16
        addi    t1, t1, 16
        addi    t2, t2, 16
        addi    t3, t3, 16
        addi    t4, t4, 16
        addi    t5, t5, 16
        addi    t6, t6, 16
        addi    a7, a7, 16
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
        addi    a2, a2, 32
        bnez    a3, gv_m
        fld     fs0, 0(sp)
        fld     fs1, 8(sp)
        fld     fs2, 16(sp)
        fld     fs3, 24(sp)
        fld     fs4, 32(sp)
        fld     fs5, 40(sp)
        fld     fs6, 48(sp)
        fld     fs7, 56(sp)
        ld      s1, 64(sp)
        addi    sp, sp, 80
        ret
