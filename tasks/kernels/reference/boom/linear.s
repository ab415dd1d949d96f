# linear on boom (RV64IMFD, out of order): y[M, N] = x[M, K] @ w[N, K]^T + bias[N], f32.
#
# Entry: a0 = x, a1 = w, a2 = bias, a3 = y, a4 = M, a5 = K, a6 = N. M and N must be multiples of 4
# (every configuration's are), K a multiple of 4 (likewise).
#
# Algorithm: register blocking. A 4x4 tile of y (rows m..m+3, columns n..n+3) lives in 16 FP
# registers; both operands are contiguous along k, so the k loop is unrolled by 4 with immediate
# offsets into 8 row pointers (4 of x, 4 of w). Every k step loads 4 + 4 values and issues 16
# independent fmadd.s: the one FP pipe is never starved by an FMA chain (4 cycles of latency, each
# accumulator touched every 16th FP operation), about one FMA per cycle. The tile starts from
# the bias (y = bias + sum over k, summed in k order in f32).

        .text
        .globl linear
linear:
        addi    sp, sp, -192
        sd      s0, 0(sp)
        sd      s1, 8(sp)
        sd      s2, 16(sp)
        sd      s3, 24(sp)
        sd      s4, 32(sp)
        sd      s5, 40(sp)
        sd      s6, 48(sp)
        sd      s7, 56(sp)
        sd      s8, 64(sp)
        sd      s9, 72(sp)
        sd      s10, 80(sp)
        sd      s11, 88(sp)
        fsd     fs0, 96(sp)
        fsd     fs1, 104(sp)
        fsd     fs2, 112(sp)
        fsd     fs3, 120(sp)
        fsd     fs4, 128(sp)
        fsd     fs5, 136(sp)
        fsd     fs6, 144(sp)
        fsd     fs7, 152(sp)
        fsd     fs8, 160(sp)
        fsd     fs9, 168(sp)
        fsd     fs10, 176(sp)
        fsd     fs11, 184(sp)
        slli    s7, a5, 2               # s7 = K*4: row stride of x and w
        slli    s6, a6, 2               # s6 = N*4: row stride of y
        slli    s8, s7, 2               # s8 = 4 rows of x / w
        slli    s9, s6, 2               # s9 = 4 rows of y
        mv      s0, a0                  # s0 = x row m
        mv      s2, a3                  # s2 = y row m
        mv      s3, a4                  # s3 = rows left
li_m:
        mv      s1, a1                  # s1 = w row n
        mv      s4, zero                # s4 = n*4
li_n:
        add     s10, a2, s4             # bias[n]
        flw     ft4, 0(s10)
        flw     ft5, 4(s10)
        flw     ft6, 8(s10)
        flw     ft7, 12(s10)
        fmv.s   fs0, ft4
        fmv.s   fs1, ft5
        fmv.s   fs2, ft6
        fmv.s   fs3, ft7
        fmv.s   fs4, ft4
        fmv.s   fs5, ft5
        fmv.s   fs6, ft6
        fmv.s   fs7, ft7
        fmv.s   fs8, ft4
        fmv.s   fs9, ft5
        fmv.s   fs10, ft6
        fmv.s   fs11, ft7
        fmv.s   ft8, ft4
        fmv.s   ft9, ft5
        fmv.s   ft10, ft6
        fmv.s   ft11, ft7
        mv      t0, s0
        add     t1, t0, s7
        add     t2, t1, s7
        add     t3, t2, s7
        mv      t4, s1
        add     t5, t4, s7
        add     t6, t5, s7
        add     a7, t6, s7
        srli    s11, a5, 2              # s11 = K / 4 steps
li_k:
        flw     ft0, 0(t0)
        flw     ft1, 0(t1)
        flw     ft2, 0(t2)
        flw     ft3, 0(t3)
        flw     ft4, 0(t4)
        flw     ft5, 0(t5)
        flw     ft6, 0(t6)
        flw     ft7, 0(a7)
        fmadd.s fs0, ft0, ft4, fs0
        fmadd.s fs1, ft0, ft5, fs1
        fmadd.s fs2, ft0, ft6, fs2
        fmadd.s fs3, ft0, ft7, fs3
        fmadd.s fs4, ft1, ft4, fs4
        fmadd.s fs5, ft1, ft5, fs5
        fmadd.s fs6, ft1, ft6, fs6
        fmadd.s fs7, ft1, ft7, fs7
        fmadd.s fs8, ft2, ft4, fs8
        fmadd.s fs9, ft2, ft5, fs9
        fmadd.s fs10, ft2, ft6, fs10
        fmadd.s fs11, ft2, ft7, fs11
        fmadd.s ft8, ft3, ft4, ft8
        fmadd.s ft9, ft3, ft5, ft9
        fmadd.s ft10, ft3, ft6, ft10
        fmadd.s ft11, ft3, ft7, ft11
        flw     ft0, 4(t0)
        flw     ft1, 4(t1)
        flw     ft2, 4(t2)
        flw     ft3, 4(t3)
        flw     ft4, 4(t4)
        flw     ft5, 4(t5)
        flw     ft6, 4(t6)
        flw     ft7, 4(a7)
        fmadd.s fs0, ft0, ft4, fs0
        fmadd.s fs1, ft0, ft5, fs1
        fmadd.s fs2, ft0, ft6, fs2
        fmadd.s fs3, ft0, ft7, fs3
        fmadd.s fs4, ft1, ft4, fs4
        fmadd.s fs5, ft1, ft5, fs5
        fmadd.s fs6, ft1, ft6, fs6
        fmadd.s fs7, ft1, ft7, fs7
        fmadd.s fs8, ft2, ft4, fs8
        fmadd.s fs9, ft2, ft5, fs9
        fmadd.s fs10, ft2, ft6, fs10
        fmadd.s fs11, ft2, ft7, fs11
        fmadd.s ft8, ft3, ft4, ft8
        fmadd.s ft9, ft3, ft5, ft9
        fmadd.s ft10, ft3, ft6, ft10
        fmadd.s ft11, ft3, ft7, ft11
        flw     ft0, 8(t0)
        flw     ft1, 8(t1)
        flw     ft2, 8(t2)
        flw     ft3, 8(t3)
        flw     ft4, 8(t4)
        flw     ft5, 8(t5)
        flw     ft6, 8(t6)
        flw     ft7, 8(a7)
        fmadd.s fs0, ft0, ft4, fs0
        fmadd.s fs1, ft0, ft5, fs1
        fmadd.s fs2, ft0, ft6, fs2
        fmadd.s fs3, ft0, ft7, fs3
        fmadd.s fs4, ft1, ft4, fs4
        fmadd.s fs5, ft1, ft5, fs5
        fmadd.s fs6, ft1, ft6, fs6
        fmadd.s fs7, ft1, ft7, fs7
        fmadd.s fs8, ft2, ft4, fs8
        fmadd.s fs9, ft2, ft5, fs9
        fmadd.s fs10, ft2, ft6, fs10
        fmadd.s fs11, ft2, ft7, fs11
        fmadd.s ft8, ft3, ft4, ft8
        fmadd.s ft9, ft3, ft5, ft9
        fmadd.s ft10, ft3, ft6, ft10
        fmadd.s ft11, ft3, ft7, ft11
        flw     ft0, 12(t0)
        flw     ft1, 12(t1)
        flw     ft2, 12(t2)
        flw     ft3, 12(t3)
        flw     ft4, 12(t4)
        flw     ft5, 12(t5)
        flw     ft6, 12(t6)
        flw     ft7, 12(a7)
        fmadd.s fs0, ft0, ft4, fs0
        fmadd.s fs1, ft0, ft5, fs1
        fmadd.s fs2, ft0, ft6, fs2
        fmadd.s fs3, ft0, ft7, fs3
        fmadd.s fs4, ft1, ft4, fs4
        fmadd.s fs5, ft1, ft5, fs5
        fmadd.s fs6, ft1, ft6, fs6
        fmadd.s fs7, ft1, ft7, fs7
        fmadd.s fs8, ft2, ft4, fs8
        fmadd.s fs9, ft2, ft5, fs9
        fmadd.s fs10, ft2, ft6, fs10
        fmadd.s fs11, ft2, ft7, fs11
        fmadd.s ft8, ft3, ft4, ft8
        fmadd.s ft9, ft3, ft5, ft9
        fmadd.s ft10, ft3, ft6, ft10
        fmadd.s ft11, ft3, ft7, ft11
        addi    t0, t0, 16
        addi    t1, t1, 16
        addi    t2, t2, 16
        addi    t3, t3, 16
        addi    t4, t4, 16
        addi    t5, t5, 16
        addi    t6, t6, 16
        addi    a7, a7, 16
        addi    s11, s11, -1
        bnez    s11, li_k
        add     s10, s2, s4             # y[m, n]
        fsw     fs0, 0(s10)
        fsw     fs1, 4(s10)
        fsw     fs2, 8(s10)
        fsw     fs3, 12(s10)
        add     s10, s10, s6
        fsw     fs4, 0(s10)
        fsw     fs5, 4(s10)
        fsw     fs6, 8(s10)
        fsw     fs7, 12(s10)
        add     s10, s10, s6
        fsw     fs8, 0(s10)
        fsw     fs9, 4(s10)
        fsw     fs10, 8(s10)
        fsw     fs11, 12(s10)
        add     s10, s10, s6
        fsw     ft8, 0(s10)
        fsw     ft9, 4(s10)
        fsw     ft10, 8(s10)
        fsw     ft11, 12(s10)
        add     s1, s1, s8
        addi    s4, s4, 16
        bltu    s4, s6, li_n
        add     s0, s0, s8
        add     s2, s2, s9
        addi    s3, s3, -4
        bnez    s3, li_m
        ld      s0, 0(sp)
        ld      s1, 8(sp)
        ld      s2, 16(sp)
        ld      s3, 24(sp)
        ld      s4, 32(sp)
        ld      s5, 40(sp)
        ld      s6, 48(sp)
        ld      s7, 56(sp)
        ld      s8, 64(sp)
        ld      s9, 72(sp)
        ld      s10, 80(sp)
        ld      s11, 88(sp)
        fld     fs0, 96(sp)
        fld     fs1, 104(sp)
        fld     fs2, 112(sp)
        fld     fs3, 120(sp)
        fld     fs4, 128(sp)
        fld     fs5, 136(sp)
        fld     fs6, 144(sp)
        fld     fs7, 152(sp)
        fld     fs8, 160(sp)
        fld     fs9, 168(sp)
        fld     fs10, 176(sp)
        fld     fs11, 184(sp)
        addi    sp, sp, 192
        ret
