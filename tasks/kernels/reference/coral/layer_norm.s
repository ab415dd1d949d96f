# layer_norm on coral (RV32IMF + Zbb, in-order, scalar F unit): y[m, :] = (x[m, :] - mean) / sqrt(var + 1e-5)
# * gamma + beta (biased variance), f32.
#
# Entry: a0 = x, a1 = gamma, a2 = beta, a3 = y, a4 = M, a5 = N. M must be a multiple of 4 and N of 4
# (every configuration's are).
#
# Algorithm: four rows at a time. The core issues in order, so each column loop is
# software-pipelined by modulo scheduling (computed offline from the latencies: load 2, FP 3): a
# column of the 4 rows enters every P cycles, each unit's operations on distinct slots of the
# period, 4 columns per loop step, no instruction waiting for an operand.
#  1. mean = sum(x) / N (one fadd.s chain per row, P = 4), then var = sum((x - mean)^2) / N
#     (fsub.s + fmadd.s, P = 8): two passes, no E[x^2] - mean^2 cancellation. rstd =
#     1 / sqrt(var + eps) (fsqrt.s, fdiv.s).
#  2. y = fma(fma(x, rstd, -mean * rstd), gamma, beta): two FMAs an element; gamma and beta are
#     loaded once per column for the 4 rows: 6 loads and 4 stores a column (P = 10, the load/store
#     port's bound).

        .text
        .globl layer_norm
layer_norm:
        addi    sp, sp, -68
        fsw     f8, 0(sp)
        fsw     f9, 4(sp)
        fsw     f18, 8(sp)
        fsw     f19, 12(sp)
        fsw     f20, 16(sp)
        fsw     f21, 20(sp)
        fsw     f22, 24(sp)
        fsw     f23, 28(sp)
        fsw     f24, 32(sp)
        fsw     f25, 36(sp)
        fsw     f26, 40(sp)
        fsw     f27, 44(sp)
        sw      s0, 48(sp)
        sw      s1, 52(sp)
        sw      s2, 56(sp)
        sw      s3, 60(sp)
        sw      s4, 64(sp)
        fcvt.s.w f28, a5
        li      a6, 0x3f800000
        fmv.w.x f29, a6
        fdiv.s  f28, f29, f28
        fmv.x.w s4, f28                 # s4 = the bits of 1/N
        srli    s3, a5, 2               # s3 = N/4 column steps
        slli    a5, a5, 2               # a5 = N*4: one row
ln_rows:
        mv      t0, a0
        add     t1, t0, a5
        add     t2, t1, a5
        add     t3, t2, a5
        fmv.w.x f16, zero
        fmv.w.x f17, zero
        fmv.w.x f18, zero
        fmv.w.x f19, zero
        fmv.w.x f20, zero
        fmv.w.x f21, zero
        fmv.w.x f22, zero
        fmv.w.x f23, zero
        fmv.w.x f28, s4                 # f28 = 1/N
        mv      s0, s3
        # prologue step 0
        flw     f0, 0(t0)
        flw     f1, 0(t1)
        fadd.s  f16, f16, f0
        flw     f2, 0(t2)
        fadd.s  f17, f17, f1
        flw     f3, 0(t3)
        fadd.s  f18, f18, f2
        flw     f4, 4(t0)
        fadd.s  f19, f19, f3
        flw     f5, 4(t1)
        fadd.s  f16, f16, f4
        flw     f6, 4(t2)
        fadd.s  f17, f17, f5
        flw     f7, 4(t3)
        fadd.s  f18, f18, f6
        flw     f8, 8(t0)
        fadd.s  f19, f19, f7
        flw     f9, 8(t1)
        fadd.s  f16, f16, f8
        flw     f10, 8(t2)
        fadd.s  f17, f17, f9
        flw     f11, 8(t3)
        fadd.s  f18, f18, f10
        flw     f12, 12(t0)
        fadd.s  f19, f19, f11
        flw     f13, 12(t1)
        fadd.s  f16, f16, f12
        flw     f14, 12(t2)
        fadd.s  f17, f17, f13
        flw     f15, 12(t3)
        addi    t0, t0, 16
        addi    t1, t1, 16
        addi    t2, t2, 16
        addi    t3, t3, 16
        addi    s0, s0, -1
        beqz    s0, ln_sum_epi
ln_sum:
        flw     f0, 0(t0)
        fadd.s  f18, f18, f14
        flw     f1, 0(t1)
        fadd.s  f19, f19, f15
        fadd.s  f16, f16, f0
        flw     f2, 0(t2)
        fadd.s  f17, f17, f1
        flw     f3, 0(t3)
        fadd.s  f18, f18, f2
        flw     f4, 4(t0)
        fadd.s  f19, f19, f3
        flw     f5, 4(t1)
        fadd.s  f16, f16, f4
        flw     f6, 4(t2)
        fadd.s  f17, f17, f5
        flw     f7, 4(t3)
        fadd.s  f18, f18, f6
        flw     f8, 8(t0)
        fadd.s  f19, f19, f7
        flw     f9, 8(t1)
        fadd.s  f16, f16, f8
        flw     f10, 8(t2)
        fadd.s  f17, f17, f9
        flw     f11, 8(t3)
        fadd.s  f18, f18, f10
        flw     f12, 12(t0)
        fadd.s  f19, f19, f11
        flw     f13, 12(t1)
        fadd.s  f16, f16, f12
        flw     f14, 12(t2)
        fadd.s  f17, f17, f13
        flw     f15, 12(t3)
        addi    t0, t0, 16
        addi    t1, t1, 16
        addi    t2, t2, 16
        addi    t3, t3, 16
        addi    s0, s0, -1
        bnez    s0, ln_sum
ln_sum_epi:
        # epilogue step 1
        fadd.s  f18, f18, f14
        fadd.s  f19, f19, f15
        addi    t0, t0, 16
        addi    t1, t1, 16
        addi    t2, t2, 16
        addi    t3, t3, 16
        addi    t0, t0, -16
        addi    t1, t1, -16
        addi    t2, t2, -16
        addi    t3, t3, -16
        fmul.s  f24, f16, f28
        fmul.s  f25, f17, f28
        fmul.s  f26, f18, f28
        fmul.s  f27, f19, f28
        mv      t0, a0
        add     t1, t0, a5
        add     t2, t1, a5
        add     t3, t2, a5
        mv      s0, s3
        # prologue step 0
        flw     f0, 0(t0)
        flw     f1, 0(t1)
        fsub.s  f0, f0, f24
        flw     f2, 0(t2)
        fsub.s  f1, f1, f25
        flw     f3, 0(t3)
        fsub.s  f2, f2, f26
        fmadd.s f20, f0, f0, f20
        fsub.s  f3, f3, f27
        fmadd.s f21, f1, f1, f21
        fmadd.s f22, f2, f2, f22
        flw     f4, 4(t0)
        fmadd.s f23, f3, f3, f23
        flw     f5, 4(t1)
        fsub.s  f4, f4, f24
        flw     f6, 4(t2)
        fsub.s  f5, f5, f25
        flw     f7, 4(t3)
        fsub.s  f6, f6, f26
        fmadd.s f20, f4, f4, f20
        fsub.s  f7, f7, f27
        fmadd.s f21, f5, f5, f21
        fmadd.s f22, f6, f6, f22
        flw     f8, 8(t0)
        fmadd.s f23, f7, f7, f23
        flw     f9, 8(t1)
        fsub.s  f8, f8, f24
        flw     f10, 8(t2)
        fsub.s  f9, f9, f25
        flw     f11, 8(t3)
        fsub.s  f10, f10, f26
        fmadd.s f20, f8, f8, f20
        fsub.s  f11, f11, f27
        fmadd.s f21, f9, f9, f21
        fmadd.s f22, f10, f10, f22
        flw     f12, 12(t0)
        fmadd.s f23, f11, f11, f23
        flw     f13, 12(t1)
        fsub.s  f12, f12, f24
        flw     f14, 12(t2)
        fsub.s  f13, f13, f25
        flw     f15, 12(t3)
        fsub.s  f14, f14, f26
        fmadd.s f20, f12, f12, f20
        fsub.s  f15, f15, f27
        fmadd.s f21, f13, f13, f21
        addi    t0, t0, 16
        addi    t1, t1, 16
        addi    t2, t2, 16
        addi    t3, t3, 16
        addi    s0, s0, -1
        beqz    s0, ln_var_epi
ln_var:
        flw     f0, 0(t0)
        fmadd.s f22, f14, f14, f22
        flw     f1, 0(t1)
        fmadd.s f23, f15, f15, f23
        fsub.s  f0, f0, f24
        flw     f2, 0(t2)
        fsub.s  f1, f1, f25
        flw     f3, 0(t3)
        fsub.s  f2, f2, f26
        fmadd.s f20, f0, f0, f20
        fsub.s  f3, f3, f27
        fmadd.s f21, f1, f1, f21
        fmadd.s f22, f2, f2, f22
        flw     f4, 4(t0)
        fmadd.s f23, f3, f3, f23
        flw     f5, 4(t1)
        fsub.s  f4, f4, f24
        flw     f6, 4(t2)
        fsub.s  f5, f5, f25
        flw     f7, 4(t3)
        fsub.s  f6, f6, f26
        fmadd.s f20, f4, f4, f20
        fsub.s  f7, f7, f27
        fmadd.s f21, f5, f5, f21
        fmadd.s f22, f6, f6, f22
        flw     f8, 8(t0)
        fmadd.s f23, f7, f7, f23
        flw     f9, 8(t1)
        fsub.s  f8, f8, f24
        flw     f10, 8(t2)
        fsub.s  f9, f9, f25
        flw     f11, 8(t3)
        fsub.s  f10, f10, f26
        fmadd.s f20, f8, f8, f20
        fsub.s  f11, f11, f27
        fmadd.s f21, f9, f9, f21
        fmadd.s f22, f10, f10, f22
        flw     f12, 12(t0)
        fmadd.s f23, f11, f11, f23
        flw     f13, 12(t1)
        fsub.s  f12, f12, f24
        flw     f14, 12(t2)
        fsub.s  f13, f13, f25
        flw     f15, 12(t3)
        fsub.s  f14, f14, f26
        fmadd.s f20, f12, f12, f20
        fsub.s  f15, f15, f27
        fmadd.s f21, f13, f13, f21
        addi    t0, t0, 16
        addi    t1, t1, 16
        addi    t2, t2, 16
        addi    t3, t3, 16
        addi    s0, s0, -1
        bnez    s0, ln_var
ln_var_epi:
        # epilogue step 1
        fmadd.s f22, f14, f14, f22
        fmadd.s f23, f15, f15, f23
        addi    t0, t0, 16
        addi    t1, t1, 16
        addi    t2, t2, 16
        addi    t3, t3, 16
        addi    t0, t0, -16
        addi    t1, t1, -16
        addi    t2, t2, -16
        addi    t3, t3, -16
        fmul.s  f0, f20, f28
        fmul.s  f1, f21, f28
        fmul.s  f2, f22, f28
        fmul.s  f3, f23, f28
        li      a6, 0x3727c5ac
        fmv.w.x f4, a6
        li      a6, 0x3f800000
        fmv.w.x f5, a6
        fadd.s  f0, f0, f4
        fadd.s  f1, f1, f4
        fadd.s  f2, f2, f4
        fadd.s  f3, f3, f4
        fsqrt.s f0, f0
        fsqrt.s f1, f1
        fsqrt.s f2, f2
        fsqrt.s f3, f3
        fdiv.s  f28, f5, f0
        fdiv.s  f29, f5, f1
        fdiv.s  f30, f5, f2
        fdiv.s  f31, f5, f3
        fmul.s  f24, f24, f28
        fmul.s  f25, f25, f29
        fmul.s  f26, f26, f30
        fmul.s  f27, f27, f31
        mv      t0, a0
        add     t1, t0, a5
        add     t2, t1, a5
        add     t3, t2, a5
        mv      t4, a3
        add     t5, t4, a5
        add     t6, t5, a5
        add     a7, t6, a5
        mv      s1, a1
        mv      s2, a2
        mv      s0, s3
        # prologue step 0
        flw     f16, 0(s1)
        flw     f20, 0(s2)
        flw     f0, 0(t0)
        flw     f1, 0(t1)
        flw     f2, 0(t2)
        fmsub.s f0, f0, f28, f24
        flw     f3, 0(t3)
        fmsub.s f1, f1, f29, f25
        fmsub.s f2, f2, f30, f26
        fmsub.s f3, f3, f31, f27
        fmadd.s f0, f0, f16, f20
        fmadd.s f1, f1, f16, f20
        fmadd.s f2, f2, f16, f20
        flw     f17, 4(s1)
        fmadd.s f3, f3, f16, f20
        flw     f21, 4(s2)
        flw     f4, 4(t0)
        flw     f5, 4(t1)
        flw     f6, 4(t2)
        fmsub.s f4, f4, f28, f24
        flw     f7, 4(t3)
        fmsub.s f5, f5, f29, f25
        fsw     f0, 0(t4)
        fmsub.s f6, f6, f30, f26
        fsw     f1, 0(t5)
        fmsub.s f7, f7, f31, f27
        fsw     f2, 0(t6)
        fmadd.s f4, f4, f17, f21
        fsw     f3, 0(a7)
        fmadd.s f5, f5, f17, f21
        fmadd.s f6, f6, f17, f21
        flw     f18, 8(s1)
        fmadd.s f7, f7, f17, f21
        flw     f22, 8(s2)
        flw     f8, 8(t0)
        flw     f9, 8(t1)
        flw     f10, 8(t2)
        fmsub.s f8, f8, f28, f24
        flw     f11, 8(t3)
        fmsub.s f9, f9, f29, f25
        fsw     f4, 4(t4)
        fmsub.s f10, f10, f30, f26
        fsw     f5, 4(t5)
        fmsub.s f11, f11, f31, f27
        fsw     f6, 4(t6)
        fmadd.s f8, f8, f18, f22
        fsw     f7, 4(a7)
        fmadd.s f9, f9, f18, f22
        fmadd.s f10, f10, f18, f22
        flw     f19, 12(s1)
        fmadd.s f11, f11, f18, f22
        flw     f23, 12(s2)
        flw     f12, 12(t0)
        flw     f13, 12(t1)
        flw     f14, 12(t2)
        fmsub.s f12, f12, f28, f24
        flw     f15, 12(t3)
        fmsub.s f13, f13, f29, f25
        fsw     f8, 8(t4)
        fmsub.s f14, f14, f30, f26
        fsw     f9, 8(t5)
        fmsub.s f15, f15, f31, f27
        fsw     f10, 8(t6)
        fmadd.s f12, f12, f19, f23
        fsw     f11, 8(a7)
        fmadd.s f13, f13, f19, f23
        addi    t0, t0, 16
        addi    t1, t1, 16
        addi    t2, t2, 16
        addi    t3, t3, 16
        addi    t4, t4, 16
        addi    t5, t5, 16
        addi    t6, t6, 16
        addi    a7, a7, 16
        addi    s1, s1, 16
        addi    s2, s2, 16
        addi    s0, s0, -1
        beqz    s0, ln_y_epi
ln_y:
        flw     f16, 0(s1)
        fmadd.s f14, f14, f19, f23
        flw     f20, 0(s2)
        fmadd.s f15, f15, f19, f23
        flw     f0, 0(t0)
        flw     f1, 0(t1)
        flw     f2, 0(t2)
        fmsub.s f0, f0, f28, f24
        flw     f3, 0(t3)
        fmsub.s f1, f1, f29, f25
        fmsub.s f2, f2, f30, f26
        fsw     f12, -4(t4)
        fmsub.s f3, f3, f31, f27
        fsw     f13, -4(t5)
        fmadd.s f0, f0, f16, f20
        fsw     f14, -4(t6)
        fmadd.s f1, f1, f16, f20
        fsw     f15, -4(a7)
        fmadd.s f2, f2, f16, f20
        flw     f17, 4(s1)
        fmadd.s f3, f3, f16, f20
        flw     f21, 4(s2)
        flw     f4, 4(t0)
        flw     f5, 4(t1)
        flw     f6, 4(t2)
        fmsub.s f4, f4, f28, f24
        flw     f7, 4(t3)
        fmsub.s f5, f5, f29, f25
        fsw     f0, 0(t4)
        fmsub.s f6, f6, f30, f26
        fsw     f1, 0(t5)
        fmsub.s f7, f7, f31, f27
        fsw     f2, 0(t6)
        fmadd.s f4, f4, f17, f21
        fsw     f3, 0(a7)
        fmadd.s f5, f5, f17, f21
        fmadd.s f6, f6, f17, f21
        flw     f18, 8(s1)
        fmadd.s f7, f7, f17, f21
        flw     f22, 8(s2)
        flw     f8, 8(t0)
        flw     f9, 8(t1)
        flw     f10, 8(t2)
        fmsub.s f8, f8, f28, f24
        flw     f11, 8(t3)
        fmsub.s f9, f9, f29, f25
        fsw     f4, 4(t4)
        fmsub.s f10, f10, f30, f26
        fsw     f5, 4(t5)
        fmsub.s f11, f11, f31, f27
        fsw     f6, 4(t6)
        fmadd.s f8, f8, f18, f22
        fsw     f7, 4(a7)
        fmadd.s f9, f9, f18, f22
        fmadd.s f10, f10, f18, f22
        flw     f19, 12(s1)
        fmadd.s f11, f11, f18, f22
        flw     f23, 12(s2)
        flw     f12, 12(t0)
        flw     f13, 12(t1)
        flw     f14, 12(t2)
        fmsub.s f12, f12, f28, f24
        flw     f15, 12(t3)
        fmsub.s f13, f13, f29, f25
        fsw     f8, 8(t4)
        fmsub.s f14, f14, f30, f26
        fsw     f9, 8(t5)
        fmsub.s f15, f15, f31, f27
        fsw     f10, 8(t6)
        fmadd.s f12, f12, f19, f23
        fsw     f11, 8(a7)
        fmadd.s f13, f13, f19, f23
        addi    t0, t0, 16
        addi    t1, t1, 16
        addi    t2, t2, 16
        addi    t3, t3, 16
        addi    t4, t4, 16
        addi    t5, t5, 16
        addi    t6, t6, 16
        addi    a7, a7, 16
        addi    s1, s1, 16
        addi    s2, s2, 16
        addi    s0, s0, -1
        bnez    s0, ln_y
ln_y_epi:
        # epilogue step 1
        fmadd.s f14, f14, f19, f23
        fmadd.s f15, f15, f19, f23
        fsw     f12, -4(t4)
        fsw     f13, -4(t5)
        fsw     f14, -4(t6)
        fsw     f15, -4(a7)
        addi    t0, t0, 16
        addi    t1, t1, 16
        addi    t2, t2, 16
        addi    t3, t3, 16
        addi    t4, t4, 16
        addi    t5, t5, 16
        addi    t6, t6, 16
        addi    a7, a7, 16
        addi    s1, s1, 16
        addi    s2, s2, 16
        addi    t0, t0, -16
        addi    t1, t1, -16
        addi    t2, t2, -16
        addi    t3, t3, -16
        addi    t4, t4, -16
        addi    t5, t5, -16
        addi    t6, t6, -16
        addi    a7, a7, -16
        addi    s1, s1, -16
        addi    s2, s2, -16
        slli    a6, a5, 2
        add     a0, a0, a6
        add     a3, a3, a6
        addi    a4, a4, -4
        bnez    a4, ln_rows
        flw     f8, 0(sp)
        flw     f9, 4(sp)
        flw     f18, 8(sp)
        flw     f19, 12(sp)
        flw     f20, 16(sp)
        flw     f21, 20(sp)
        flw     f22, 24(sp)
        flw     f23, 28(sp)
        flw     f24, 32(sp)
        flw     f25, 36(sp)
        flw     f26, 40(sp)
        flw     f27, 44(sp)
        lw      s0, 48(sp)
        lw      s1, 52(sp)
        lw      s2, 56(sp)
        lw      s3, 60(sp)
        lw      s4, 64(sp)
        addi    sp, sp, 68
        ret
