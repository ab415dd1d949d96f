# rms_norm on coral (RV32IMF + Zbb, in-order, scalar F unit): y[m, :] = x[m, :] / sqrt(mean(x[m, :]^2) + 1e-6)
# * gamma, f32.
#
# Entry: a0 = x, a1 = gamma, a2 = y, a3 = M, a4 = N. M must be a multiple of 4 and N of 4 (every
# configuration's are).
#
# Algorithm: four rows at a time. The core issues in order, so both column loops are
# software-pipelined by modulo scheduling (computed offline from the latencies: load 2, FP 3): a
# column of the 4 rows enters every P cycles, each unit's operations on distinct slots of the
# period, 4 columns per loop step, no instruction waiting for an operand.
#  1. sum of squares: one f32 fmadd.s chain per row, one load and one FMA an element (P = 4).
#  2. rstd = 1 / sqrt(ss / N + eps): fsqrt.s and fdiv.s per row (8 cycles each on this core).
#  3. y = (x * gamma) * rstd: gamma is loaded once per column for the 4 rows: 5 loads and 4 stores
#     a column (P = 9, the load/store port's bound).

        .text
        .globl rms_norm
rms_norm:
        addi    sp, sp, -52
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
        fcvt.s.w f30, a4
        li      a5, 0x3f800000
        fmv.w.x f31, a5                 # f31 = 1.0
        fdiv.s  f30, f31, f30           # f30 = 1/N
        li      a5, 0x358637bd
        fmv.w.x f28, a5                 # f28 = eps
        srli    a5, a4, 2               # a5 = N/4 column steps
        slli    a4, a4, 2               # a4 = N*4: one row
rn_rows:
        mv      t0, a0
        add     t1, t0, a4
        add     t2, t1, a4
        add     t3, t2, a4
        fmv.w.x f16, zero
        fmv.w.x f17, zero
        fmv.w.x f18, zero
        fmv.w.x f19, zero
        mv      s0, a5
        # prologue step 0
        flw     f0, 0(t0)
        flw     f1, 0(t1)
        fmadd.s f16, f0, f0, f16
        flw     f2, 0(t2)
        fmadd.s f17, f1, f1, f17
        flw     f3, 0(t3)
        fmadd.s f18, f2, f2, f18
        flw     f4, 4(t0)
        fmadd.s f19, f3, f3, f19
        flw     f5, 4(t1)
        fmadd.s f16, f4, f4, f16
        flw     f6, 4(t2)
        fmadd.s f17, f5, f5, f17
        flw     f7, 4(t3)
        fmadd.s f18, f6, f6, f18
        flw     f8, 8(t0)
        fmadd.s f19, f7, f7, f19
        flw     f9, 8(t1)
        fmadd.s f16, f8, f8, f16
        flw     f10, 8(t2)
        fmadd.s f17, f9, f9, f17
        flw     f11, 8(t3)
        fmadd.s f18, f10, f10, f18
        flw     f12, 12(t0)
        fmadd.s f19, f11, f11, f19
        flw     f13, 12(t1)
        fmadd.s f16, f12, f12, f16
        flw     f14, 12(t2)
        fmadd.s f17, f13, f13, f17
        flw     f15, 12(t3)
        addi    t0, t0, 16
        addi    t1, t1, 16
        addi    t2, t2, 16
        addi    t3, t3, 16
        addi    s0, s0, -1
        beqz    s0, rn_ss_epi
rn_ss:
        flw     f0, 0(t0)
        fmadd.s f18, f14, f14, f18
        flw     f1, 0(t1)
        fmadd.s f19, f15, f15, f19
        fmadd.s f16, f0, f0, f16
        flw     f2, 0(t2)
        fmadd.s f17, f1, f1, f17
        flw     f3, 0(t3)
        fmadd.s f18, f2, f2, f18
        flw     f4, 4(t0)
        fmadd.s f19, f3, f3, f19
        flw     f5, 4(t1)
        fmadd.s f16, f4, f4, f16
        flw     f6, 4(t2)
        fmadd.s f17, f5, f5, f17
        flw     f7, 4(t3)
        fmadd.s f18, f6, f6, f18
        flw     f8, 8(t0)
        fmadd.s f19, f7, f7, f19
        flw     f9, 8(t1)
        fmadd.s f16, f8, f8, f16
        flw     f10, 8(t2)
        fmadd.s f17, f9, f9, f17
        flw     f11, 8(t3)
        fmadd.s f18, f10, f10, f18
        flw     f12, 12(t0)
        fmadd.s f19, f11, f11, f19
        flw     f13, 12(t1)
        fmadd.s f16, f12, f12, f16
        flw     f14, 12(t2)
        fmadd.s f17, f13, f13, f17
        flw     f15, 12(t3)
        addi    t0, t0, 16
        addi    t1, t1, 16
        addi    t2, t2, 16
        addi    t3, t3, 16
        addi    s0, s0, -1
        bnez    s0, rn_ss
rn_ss_epi:
        # epilogue step 1
        fmadd.s f18, f14, f14, f18
        fmadd.s f19, f15, f15, f19
        addi    t0, t0, 16
        addi    t1, t1, 16
        addi    t2, t2, 16
        addi    t3, t3, 16
        addi    t0, t0, -16
        addi    t1, t1, -16
        addi    t2, t2, -16
        addi    t3, t3, -16
        fmadd.s f24, f16, f30, f28
        fmadd.s f25, f17, f30, f28
        fmadd.s f26, f18, f30, f28
        fmadd.s f27, f19, f30, f28
        fsqrt.s f24, f24
        fsqrt.s f25, f25
        fsqrt.s f26, f26
        fsqrt.s f27, f27
        fdiv.s  f24, f31, f24
        fdiv.s  f25, f31, f25
        fdiv.s  f26, f31, f26
        fdiv.s  f27, f31, f27
        mv      t0, a0
        add     t1, t0, a4
        add     t2, t1, a4
        add     t3, t2, a4
        mv      t4, a2
        add     t5, t4, a4
        add     t6, t5, a4
        add     a7, t6, a4
        mv      a6, a1
        mv      s0, a5
        # prologue step 0
        flw     f20, 0(a6)
        flw     f0, 0(t0)
        flw     f1, 0(t1)
        flw     f2, 0(t2)
        fmul.s  f0, f0, f20
        flw     f3, 0(t3)
        fmul.s  f1, f1, f20
        fmul.s  f2, f2, f20
        fmul.s  f3, f3, f20
        fmul.s  f0, f0, f24
        fmul.s  f1, f1, f25
        fmul.s  f2, f2, f26
        flw     f21, 4(a6)
        fmul.s  f3, f3, f27
        flw     f4, 4(t0)
        flw     f5, 4(t1)
        flw     f6, 4(t2)
        fmul.s  f4, f4, f21
        flw     f7, 4(t3)
        fmul.s  f5, f5, f21
        fsw     f0, 0(t4)
        fmul.s  f6, f6, f21
        fsw     f1, 0(t5)
        fmul.s  f7, f7, f21
        fsw     f2, 0(t6)
        fmul.s  f4, f4, f24
        fsw     f3, 0(a7)
        fmul.s  f5, f5, f25
        fmul.s  f6, f6, f26
        flw     f22, 8(a6)
        fmul.s  f7, f7, f27
        flw     f8, 8(t0)
        flw     f9, 8(t1)
        flw     f10, 8(t2)
        fmul.s  f8, f8, f22
        flw     f11, 8(t3)
        fmul.s  f9, f9, f22
        fsw     f4, 4(t4)
        fmul.s  f10, f10, f22
        fsw     f5, 4(t5)
        fmul.s  f11, f11, f22
        fsw     f6, 4(t6)
        fmul.s  f8, f8, f24
        fsw     f7, 4(a7)
        fmul.s  f9, f9, f25
        fmul.s  f10, f10, f26
        flw     f23, 12(a6)
        fmul.s  f11, f11, f27
        flw     f12, 12(t0)
        flw     f13, 12(t1)
        flw     f14, 12(t2)
        fmul.s  f12, f12, f23
        flw     f15, 12(t3)
        fmul.s  f13, f13, f23
        fsw     f8, 8(t4)
        fmul.s  f14, f14, f23
        fsw     f9, 8(t5)
        fmul.s  f15, f15, f23
        fsw     f10, 8(t6)
        fmul.s  f12, f12, f24
        fsw     f11, 8(a7)
        fmul.s  f13, f13, f25
        addi    t0, t0, 16
        addi    t1, t1, 16
        addi    t2, t2, 16
        addi    t3, t3, 16
        addi    t4, t4, 16
        addi    t5, t5, 16
        addi    t6, t6, 16
        addi    a7, a7, 16
        addi    a6, a6, 16
        addi    s0, s0, -1
        beqz    s0, rn_y_epi
rn_y:
        flw     f20, 0(a6)
        fmul.s  f14, f14, f26
        flw     f0, 0(t0)
        fmul.s  f15, f15, f27
        flw     f1, 0(t1)
        flw     f2, 0(t2)
        fmul.s  f0, f0, f20
        flw     f3, 0(t3)
        fmul.s  f1, f1, f20
        fmul.s  f2, f2, f20
        fsw     f12, -4(t4)
        fmul.s  f3, f3, f20
        fsw     f13, -4(t5)
        fmul.s  f0, f0, f24
        fsw     f14, -4(t6)
        fmul.s  f1, f1, f25
        fsw     f15, -4(a7)
        fmul.s  f2, f2, f26
        flw     f21, 4(a6)
        fmul.s  f3, f3, f27
        flw     f4, 4(t0)
        flw     f5, 4(t1)
        flw     f6, 4(t2)
        fmul.s  f4, f4, f21
        flw     f7, 4(t3)
        fmul.s  f5, f5, f21
        fsw     f0, 0(t4)
        fmul.s  f6, f6, f21
        fsw     f1, 0(t5)
        fmul.s  f7, f7, f21
        fsw     f2, 0(t6)
        fmul.s  f4, f4, f24
        fsw     f3, 0(a7)
        fmul.s  f5, f5, f25
        fmul.s  f6, f6, f26
        flw     f22, 8(a6)
        fmul.s  f7, f7, f27
        flw     f8, 8(t0)
        flw     f9, 8(t1)
        flw     f10, 8(t2)
        fmul.s  f8, f8, f22
        flw     f11, 8(t3)
        fmul.s  f9, f9, f22
        fsw     f4, 4(t4)
        fmul.s  f10, f10, f22
        fsw     f5, 4(t5)
        fmul.s  f11, f11, f22
        fsw     f6, 4(t6)
        fmul.s  f8, f8, f24
        fsw     f7, 4(a7)
        fmul.s  f9, f9, f25
        fmul.s  f10, f10, f26
        flw     f23, 12(a6)
        fmul.s  f11, f11, f27
        flw     f12, 12(t0)
        flw     f13, 12(t1)
        flw     f14, 12(t2)
        fmul.s  f12, f12, f23
        flw     f15, 12(t3)
        fmul.s  f13, f13, f23
        fsw     f8, 8(t4)
        fmul.s  f14, f14, f23
        fsw     f9, 8(t5)
        fmul.s  f15, f15, f23
        fsw     f10, 8(t6)
        fmul.s  f12, f12, f24
        fsw     f11, 8(a7)
        fmul.s  f13, f13, f25
        addi    t0, t0, 16
        addi    t1, t1, 16
        addi    t2, t2, 16
        addi    t3, t3, 16
        addi    t4, t4, 16
        addi    t5, t5, 16
        addi    t6, t6, 16
        addi    a7, a7, 16
        addi    a6, a6, 16
        addi    s0, s0, -1
        bnez    s0, rn_y
rn_y_epi:
        # epilogue step 1
        fmul.s  f14, f14, f26
        fmul.s  f15, f15, f27
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
        addi    a6, a6, 16
        addi    t0, t0, -16
        addi    t1, t1, -16
        addi    t2, t2, -16
        addi    t3, t3, -16
        addi    t4, t4, -16
        addi    t5, t5, -16
        addi    t6, t6, -16
        addi    a7, a7, -16
        addi    a6, a6, -16
        slli    t0, a4, 2
        add     a0, a0, t0
        add     a2, a2, t0
        addi    a3, a3, -4
        bnez    a3, rn_rows
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
        addi    sp, sp, 52
        ret
