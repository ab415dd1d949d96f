# rms_norm on coral (RV32IMF + Zbb, in-order, scalar F unit): y[m, :] = x[m, :] / sqrt(mean(x[m, :]^2) + 1e-6)
# * gamma, f32.
#
# Entry: a0 = x, a1 = gamma, a2 = y, a3 = M, a4 = N. M must be a multiple of 4 and N even (every
# configuration's are).
#
# Algorithm: four rows at a time, two columns per step; the core issues in order, so each step is a
# list schedule computed offline from the latencies (load 2, FP 3) in which no instruction waits
# (10 and 23 issue cycles per 8 elements for the passes).
#  1. sum of squares: 8 f32 fmadd.s accumulators (two per row): one load and one FMA an element.
#  2. rstd = 1 / sqrt(ss / N + eps): fsqrt.s and fdiv.s per row (8 cycles each on this core).
#  3. y = (x * gamma) * rstd: gamma is loaded once per column for the 4 rows (2.25 loads/stores an
#     element, the bound).

        .text
        .globl rms_norm
rms_norm:
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
        slli    s1, a4, 2               # (N*4 kept in a4 below)
        fcvt.s.w f30, a4
        li      a5, 0x3f800000
        fmv.w.x f31, a5                 # f31 = 1.0
        fdiv.s  f30, f31, f30           # f30 = 1/N
        li      a5, 0x358637bd
        fmv.w.x f28, a5                 # f28 = eps
        slli    a4, a4, 2               # a4 = N*4: one row
rn_rows:
        mv      t0, a0
        add     t1, t0, a4
        add     t2, t1, a4
        add     t3, t2, a4
        add     a5, a0, a4              # end of row 0
        fmv.w.x f8, zero
        fmv.w.x f9, zero
        fmv.w.x f10, zero
        fmv.w.x f11, zero
        fmv.w.x f12, zero
        fmv.w.x f13, zero
        fmv.w.x f14, zero
        fmv.w.x f15, zero
rn_ss:
        flw     f0, 0(t0)
        flw     f1, 4(t0)
        addi    t0, t0, 8
        flw     f2, 0(t1)
        fmadd.s f8, f0, f0, f8
        flw     f3, 4(t1)
        fmadd.s f9, f1, f1, f9
        addi    t1, t1, 8
        flw     f4, 0(t2)
        fmadd.s f10, f2, f2, f10
        flw     f5, 4(t2)
        fmadd.s f11, f3, f3, f11
        addi    t2, t2, 8
        flw     f6, 0(t3)
        fmadd.s f12, f4, f4, f12
        flw     f7, 4(t3)
        fmadd.s f13, f5, f5, f13
        addi    t3, t3, 8
        fmadd.s f14, f6, f6, f14
        fmadd.s f15, f7, f7, f15
        bltu    t0, a5, rn_ss
        fadd.s  f0, f8, f9
        fadd.s  f1, f10, f11
        fadd.s  f2, f12, f13
        fadd.s  f3, f14, f15
        fmadd.s f0, f0, f30, f28
        fmadd.s f1, f1, f30, f28
        fmadd.s f2, f2, f30, f28
        fmadd.s f3, f3, f30, f28
        fsqrt.s f0, f0
        fsqrt.s f1, f1
        fsqrt.s f2, f2
        fsqrt.s f3, f3
        fdiv.s  f8, f31, f0
        fdiv.s  f9, f31, f1
        fdiv.s  f10, f31, f2
        fdiv.s  f11, f31, f3
        mv      t0, a0
        add     t1, t0, a4
        add     t2, t1, a4
        add     t3, t2, a4
        mv      t4, a2
        add     t5, t4, a4
        add     t6, t5, a4
        add     a7, t6, a4
        mv      a6, a1
        add     s0, a1, a4              # end of gamma
rn_y:
        flw     f24, 0(a6)
        flw     f25, 4(a6)
        addi    a6, a6, 8
        flw     f0, 0(t0)
        flw     f1, 4(t0)
        addi    t0, t0, 8
        flw     f2, 0(t1)
        fmul.s  f16, f0, f24
        flw     f3, 4(t1)
        fmul.s  f17, f1, f25
        addi    t1, t1, 8
        flw     f4, 0(t2)
        fmul.s  f18, f2, f24
        flw     f5, 4(t2)
        fmul.s  f19, f3, f25
        addi    t2, t2, 8
        flw     f6, 0(t3)
        fmul.s  f20, f4, f24
        flw     f7, 4(t3)
        fmul.s  f21, f5, f25
        addi    t3, t3, 8
        fmul.s  f22, f6, f24
        fmul.s  f23, f7, f25
        fmul.s  f16, f16, f8
        fmul.s  f17, f17, f8
        fmul.s  f18, f18, f9
        fmul.s  f19, f19, f9
        fsw     f16, 0(t4)
        fmul.s  f20, f20, f10
        fsw     f17, 4(t4)
        addi    t4, t4, 8
        fmul.s  f21, f21, f10
        fsw     f18, 0(t5)
        fmul.s  f22, f22, f11
        fsw     f19, 4(t5)
        addi    t5, t5, 8
        fmul.s  f23, f23, f11
        fsw     f20, 0(t6)
        fsw     f21, 4(t6)
        addi    t6, t6, 8
        fsw     f22, 0(a7)
        fsw     f23, 4(a7)
        addi    a7, a7, 8
        bltu    a6, s0, rn_y
        slli    a5, a4, 2
        add     a0, a0, a5
        add     a2, a2, a5
        addi    a3, a3, -4
        bnez    a3, rn_rows
        lw      s0, 0(sp)
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
