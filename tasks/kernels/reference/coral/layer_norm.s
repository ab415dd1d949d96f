# layer_norm on coral (RV32IMF + Zbb, in-order, scalar F unit): y[m, :] = (x[m, :] - mean) / sqrt(var + 1e-5)
# * gamma + beta (biased variance), f32.
#
# Entry: a0 = x, a1 = gamma, a2 = beta, a3 = y, a4 = M, a5 = N. M must be a multiple of 4 and N even
# (every configuration's are).
#
# Algorithm: four rows at a time, two columns per step; the core issues in order, so each step is a
# list schedule computed offline from the latencies (load 2, FP 3) in which no instruction waits
# (10 + 18 and 23 issue cycles per 8 elements for the passes).
#  1. mean = sum(x) / N, then var = sum((x - mean)^2) / N: two passes (no E[x^2] - mean^2
#     cancellation), f32 sums with 8 accumulators (two per row), rstd = 1 / sqrt(var + eps)
#     (fsqrt.s, fdiv.s).
#  2. y = fma(fma(x, rstd, -mean * rstd), gamma, beta): two FMAs an element; gamma and beta are
#     loaded once per column for the 4 rows (2.5 loads/stores an element, the bound).

        .text
        .globl layer_norm
layer_norm:
        addi    sp, sp, -48
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
        addi    sp, sp, -16
        sw      s0, 0(sp)
        sw      s1, 4(sp)
        sw      s2, 8(sp)
        fcvt.s.w f30, a5
        li      a6, 0x3f800000
        fmv.w.x f31, a6                 # f31 = 1.0
        fdiv.s  f30, f31, f30           # f30 = 1/N
        slli    a5, a5, 2               # a5 = N*4: one row
ln_rows:
        mv      t0, a0
        add     t1, t0, a5
        add     t2, t1, a5
        add     t3, t2, a5
        add     a6, a0, a5              # end of row 0
        fmv.w.x f8, zero
        fmv.w.x f9, zero
        fmv.w.x f10, zero
        fmv.w.x f11, zero
        fmv.w.x f12, zero
        fmv.w.x f13, zero
        fmv.w.x f14, zero
        fmv.w.x f15, zero
        fmv.w.x f16, zero
        fmv.w.x f17, zero
        fmv.w.x f18, zero
        fmv.w.x f19, zero
        fmv.w.x f20, zero
        fmv.w.x f21, zero
        fmv.w.x f22, zero
        fmv.w.x f23, zero
ln_sum:
        flw     f0, 0(t0)
        flw     f1, 4(t0)
        addi    t0, t0, 8
        flw     f2, 0(t1)
        fadd.s  f8, f8, f0
        flw     f3, 4(t1)
        fadd.s  f9, f9, f1
        addi    t1, t1, 8
        flw     f4, 0(t2)
        fadd.s  f10, f10, f2
        flw     f5, 4(t2)
        fadd.s  f11, f11, f3
        addi    t2, t2, 8
        flw     f6, 0(t3)
        fadd.s  f12, f12, f4
        flw     f7, 4(t3)
        fadd.s  f13, f13, f5
        addi    t3, t3, 8
        fadd.s  f14, f14, f6
        fadd.s  f15, f15, f7
        bltu    t0, a6, ln_sum
        fadd.s  f24, f8, f9
        fadd.s  f25, f10, f11
        fadd.s  f26, f12, f13
        fadd.s  f27, f14, f15
        fmul.s  f24, f24, f30          # mean
        fmul.s  f25, f25, f30
        fmul.s  f26, f26, f30
        fmul.s  f27, f27, f30
        mv      t0, a0
        add     t1, t0, a5
        add     t2, t1, a5
        add     t3, t2, a5
ln_var:
        flw     f0, 0(t0)
        flw     f1, 4(t0)
        addi    t0, t0, 8
        flw     f2, 0(t1)
        fsub.s  f0, f0, f24
        flw     f3, 4(t1)
        fsub.s  f1, f1, f24
        addi    t1, t1, 8
        flw     f4, 0(t2)
        fsub.s  f2, f2, f25
        flw     f5, 4(t2)
        fsub.s  f3, f3, f25
        addi    t2, t2, 8
        flw     f6, 0(t3)
        fsub.s  f4, f4, f26
        flw     f7, 4(t3)
        fsub.s  f5, f5, f26
        addi    t3, t3, 8
        fsub.s  f6, f6, f27
        fsub.s  f7, f7, f27
        fmadd.s f16, f0, f0, f16
        fmadd.s f17, f1, f1, f17
        fmadd.s f18, f2, f2, f18
        fmadd.s f19, f3, f3, f19
        fmadd.s f20, f4, f4, f20
        fmadd.s f21, f5, f5, f21
        fmadd.s f22, f6, f6, f22
        fmadd.s f23, f7, f7, f23
        bltu    t0, a6, ln_var
        fmv.s   f0, f24
        fmv.s   f1, f25
        fmv.s   f2, f26
        fmv.s   f3, f27
        fadd.s  f4, f16, f17
        fadd.s  f5, f18, f19
        fadd.s  f6, f20, f21
        fadd.s  f7, f22, f23
        fmul.s  f4, f4, f30          # var
        fmul.s  f5, f5, f30
        fmul.s  f6, f6, f30
        fmul.s  f7, f7, f30
        li      a6, 0x3727c5ac
        fmv.w.x f28, a6
        fadd.s  f4, f4, f28
        fadd.s  f5, f5, f28
        fadd.s  f6, f6, f28
        fadd.s  f7, f7, f28
        fsqrt.s f4, f4
        fsqrt.s f5, f5
        fsqrt.s f6, f6
        fsqrt.s f7, f7
        fdiv.s  f20, f31, f4
        fdiv.s  f21, f31, f5
        fdiv.s  f22, f31, f6
        fdiv.s  f23, f31, f7
        fmul.s  f24, f0, f20
        fmul.s  f25, f1, f21
        fmul.s  f26, f2, f22
        fmul.s  f27, f3, f23
        mv      t0, a0
        add     t1, t0, a5
        add     t2, t1, a5
        add     t3, t2, a5
        mv      t4, a3
        add     t5, t4, a5
        add     t6, t5, a5
        add     a7, t6, a5
        mv      s0, a1
        mv      s1, a2
        add     s2, a1, a5              # end of gamma
ln_y:
        flw     f0, 0(t0)
        flw     f1, 4(t0)
        addi    t0, t0, 8
        flw     f2, 0(t1)
        fmsub.s f8, f0, f20, f24
        flw     f3, 4(t1)
        fmsub.s f9, f1, f20, f24
        addi    t1, t1, 8
        flw     f4, 0(t2)
        fmsub.s f10, f2, f21, f25
        flw     f5, 4(t2)
        fmsub.s f11, f3, f21, f25
        addi    t2, t2, 8
        flw     f6, 0(t3)
        fmsub.s f12, f4, f22, f26
        flw     f7, 4(t3)
        fmsub.s f13, f5, f22, f26
        addi    t3, t3, 8
        fmsub.s f14, f6, f23, f27
        flw     f16, 0(s0)
        fmsub.s f15, f7, f23, f27
        flw     f17, 4(s0)
        addi    s0, s0, 8
        flw     f18, 0(s1)
        flw     f19, 4(s1)
        addi    s1, s1, 8
        fmadd.s f8, f8, f16, f18
        fmadd.s f9, f9, f17, f19
        fmadd.s f10, f10, f16, f18
        fmadd.s f11, f11, f17, f19
        fsw     f8, 0(t4)
        fmadd.s f12, f12, f16, f18
        fsw     f9, 4(t4)
        addi    t4, t4, 8
        fmadd.s f13, f13, f17, f19
        fsw     f10, 0(t5)
        fmadd.s f14, f14, f16, f18
        fsw     f11, 4(t5)
        addi    t5, t5, 8
        fmadd.s f15, f15, f17, f19
        fsw     f12, 0(t6)
        fsw     f13, 4(t6)
        addi    t6, t6, 8
        fsw     f14, 0(a7)
        fsw     f15, 4(a7)
        addi    a7, a7, 8
        bltu    s0, s2, ln_y
        slli    a6, a5, 2
        add     a0, a0, a6
        add     a3, a3, a6
        addi    a4, a4, -4
        bnez    a4, ln_rows
        lw      s0, 0(sp)
        lw      s1, 4(sp)
        lw      s2, 8(sp)
        addi    sp, sp, 16
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
        addi    sp, sp, 48
        ret
