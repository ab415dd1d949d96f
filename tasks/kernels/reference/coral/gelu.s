# gelu on coral (RV32IMF + Zbb, in-order, scalar F unit): y[i] = 0.5 * x[i] * (1 + erf(x[i] / sqrt(2)))
# = x[i] * Phi(x[i]), Phi the standard normal CDF.
#
# Entry: a0 = x, a1 = y, a2 = N.
#
# Algorithm: Phi by table-driven piecewise polynomials (no exp, no division). The range
# [-5.5, 5.5) is cut into 88 intervals of width h = 0.125; on each, Phi is a degree-3 polynomial
# in u = x - center (Chebyshev interpolation of 0.5 * (1 + erf(x / sqrt(2))), coefficients rounded
# to f32). Entry 0 is the constant 0 (x < -5.5: Phi < 1.9e-8) and entry 88+1 the constant 1
# (x >= 5.5). The entry is j = clamp(fcvt.w.s(x/h + 1 - lo/h), 0, 88+1) (rtz; Zbb max / minu
# clamp it), then y = x * p(u) by Horner. Measured error of p against Phi over x in [-300, 300],
# f32 evaluation: at most 9.8e-08 absolute (|y - gelu(x)| <= 2.9e-07), far inside the tolerance.
# Cost per element: 7 FP operations (scale, convert, u, 3 FMAs, product) and 7 loads/stores (x, 5
# table words, y), so the FPU and the load/store port are both the bound. The core issues in order,
# so the loop is software-pipelined by modulo scheduling (computed offline from the
# latencies: load 2, FP 3, ALU 1): one element enters every 7 cycles, its 7 FP operations and 7
# memory operations on distinct slots of the 7-cycle period, 7 elements (registers rotate) per
# 49-cycle loop step, no instruction waiting for an operand. N mod 7 leftovers take a
# one-element loop.

        .text
        .globl gelu
gelu:
        addi    sp, sp, -40
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
        li      t0, 0x41000000
        fmv.w.x f24, t0                 # 1/h
        li      t0, 0x42340000
        fmv.w.x f25, t0                 # 1 - lo/h
        li      a4, 89                  # a4 = the last table entry
        la      a5, gelu_tab
        li      a3, 7
        divu    a6, a2, a3              # a6 = groups of 7
        remu    a2, a2, a3              # a2 = leftovers
        beqz    a6, 5f
        # 7 elements a step, software-pipelined: one element enters every 7 cycles
        # prologue step 0
        flw     f0, 0(a0)
        fmadd.s f7, f0, f24, f25
        flw     f1, 4(a0)
        fcvt.w.s t0, f7, rtz
        max     t0, t0, zero
        minu    t0, t0, a4
        fmadd.s f10, f1, f24, f25
        slli    t0, t0, 5
        add     t0, t0, a5
        flw     f2, 8(a0)
        fcvt.w.s t1, f10, rtz
        flw     f9, 0(t0)
        flw     f16, 16(t0)
        fsub.s  f7, f0, f9
        max     t1, t1, zero
        flw     f9, 12(t0)
        minu    t1, t1, a4
        fmadd.s f11, f2, f24, f25
        slli    t1, t1, 5
        fmadd.s f16, f16, f7, f9
        add     t1, t1, a5
        flw     f3, 12(a0)
        flw     f9, 8(t0)
        fcvt.w.s t2, f11, rtz
        flw     f18, 0(t1)
        fmadd.s f16, f16, f7, f9
        flw     f17, 16(t1)
        flw     f9, 4(t0)
        fsub.s  f10, f1, f18
        max     t2, t2, zero
        flw     f18, 12(t1)
        minu    t2, t2, a4
        fmadd.s f12, f3, f24, f25
        fmadd.s f16, f16, f7, f9
        slli    t2, t2, 5
        fmadd.s f17, f17, f10, f18
        add     t2, t2, a5
        flw     f4, 16(a0)
        flw     f18, 8(t1)
        fcvt.w.s t3, f12, rtz
        fmul.s  f16, f0, f16
        flw     f19, 0(t2)
        fmadd.s f17, f17, f10, f18
        flw     f28, 16(t2)
        flw     f18, 4(t1)
        fsub.s  f11, f2, f19
        max     t3, t3, zero
        flw     f19, 12(t2)
        minu    t3, t3, a4
        fmadd.s f13, f4, f24, f25
        fsw     f16, 0(a1)
        fmadd.s f17, f17, f10, f18
        slli    t3, t3, 5
        fmadd.s f28, f28, f11, f19
        add     t3, t3, a5
        flw     f5, 20(a0)
        flw     f19, 8(t2)
        fcvt.w.s t4, f13, rtz
        fmul.s  f17, f1, f17
        flw     f20, 0(t3)
        fmadd.s f28, f28, f11, f19
        flw     f29, 16(t3)
        flw     f19, 4(t2)
        fsub.s  f12, f3, f20
        max     t4, t4, zero
        flw     f20, 12(t3)
        minu    t4, t4, a4
        fmadd.s f14, f5, f24, f25
        fsw     f17, 4(a1)
        fmadd.s f28, f28, f11, f19
        slli    t4, t4, 5
        fmadd.s f29, f29, f12, f20
        add     t4, t4, a5
        flw     f6, 24(a0)
        flw     f20, 8(t3)
        fcvt.w.s t5, f14, rtz
        fmul.s  f28, f2, f28
        flw     f21, 0(t4)
        fmadd.s f29, f29, f12, f20
        flw     f30, 16(t4)
        flw     f20, 4(t3)
        fsub.s  f13, f4, f21
        max     t5, t5, zero
        flw     f21, 12(t4)
        minu    t5, t5, a4
        fmadd.s f15, f6, f24, f25
        fsw     f28, 8(a1)
        fmadd.s f29, f29, f12, f20
        slli    t5, t5, 5
        addi    a0, a0, 28
        addi    a1, a1, 28
        addi    a6, a6, -1
        beqz    a6, gelu_loop_epi
gelu_loop:
        flw     f0, 0(a0)
        fmadd.s f30, f30, f13, f21
        add     t5, t5, a5
        flw     f21, 8(t4)
        fcvt.w.s t6, f15, rtz
        fmul.s  f29, f3, f29
        flw     f22, 0(t5)
        fmadd.s f30, f30, f13, f21
        flw     f31, 16(t5)
        flw     f21, 4(t4)
        fsub.s  f14, f5, f22
        max     t6, t6, zero
        fmadd.s f7, f0, f24, f25
        flw     f22, 12(t5)
        minu    t6, t6, a4
        fsw     f29, -16(a1)
        fmadd.s f30, f30, f13, f21
        slli    t6, t6, 5
        flw     f1, 4(a0)
        fmadd.s f31, f31, f14, f22
        add     t6, t6, a5
        fcvt.w.s t0, f7, rtz
        flw     f22, 8(t5)
        fmul.s  f30, f4, f30
        flw     f23, 0(t6)
        fmadd.s f31, f31, f14, f22
        flw     f8, 16(t6)
        max     t0, t0, zero
        flw     f22, 4(t5)
        fsub.s  f15, f6, f23
        minu    t0, t0, a4
        fmadd.s f10, f1, f24, f25
        flw     f23, 12(t6)
        slli    t0, t0, 5
        fsw     f30, -12(a1)
        fmadd.s f31, f31, f14, f22
        add     t0, t0, a5
        flw     f2, 8(a0)
        fmadd.s f8, f8, f15, f23
        fcvt.w.s t1, f10, rtz
        flw     f23, 8(t6)
        flw     f9, 0(t0)
        fmul.s  f31, f5, f31
        flw     f16, 16(t0)
        fmadd.s f8, f8, f15, f23
        fsub.s  f7, f0, f9
        max     t1, t1, zero
        flw     f23, 4(t6)
        flw     f9, 12(t0)
        minu    t1, t1, a4
        fmadd.s f11, f2, f24, f25
        slli    t1, t1, 5
        fsw     f31, -8(a1)
        fmadd.s f8, f8, f15, f23
        fmadd.s f16, f16, f7, f9
        add     t1, t1, a5
        flw     f3, 12(a0)
        flw     f9, 8(t0)
        fcvt.w.s t2, f11, rtz
        flw     f18, 0(t1)
        fmul.s  f8, f6, f8
        fmadd.s f16, f16, f7, f9
        flw     f17, 16(t1)
        flw     f9, 4(t0)
        fsub.s  f10, f1, f18
        max     t2, t2, zero
        flw     f18, 12(t1)
        minu    t2, t2, a4
        fmadd.s f12, f3, f24, f25
        fmadd.s f16, f16, f7, f9
        slli    t2, t2, 5
        fsw     f8, -4(a1)
        fmadd.s f17, f17, f10, f18
        add     t2, t2, a5
        flw     f4, 16(a0)
        flw     f18, 8(t1)
        fcvt.w.s t3, f12, rtz
        fmul.s  f16, f0, f16
        flw     f19, 0(t2)
        fmadd.s f17, f17, f10, f18
        flw     f28, 16(t2)
        flw     f18, 4(t1)
        fsub.s  f11, f2, f19
        max     t3, t3, zero
        flw     f19, 12(t2)
        minu    t3, t3, a4
        fmadd.s f13, f4, f24, f25
        fsw     f16, 0(a1)
        fmadd.s f17, f17, f10, f18
        slli    t3, t3, 5
        fmadd.s f28, f28, f11, f19
        add     t3, t3, a5
        flw     f5, 20(a0)
        flw     f19, 8(t2)
        fcvt.w.s t4, f13, rtz
        fmul.s  f17, f1, f17
        flw     f20, 0(t3)
        fmadd.s f28, f28, f11, f19
        flw     f29, 16(t3)
        flw     f19, 4(t2)
        fsub.s  f12, f3, f20
        max     t4, t4, zero
        flw     f20, 12(t3)
        minu    t4, t4, a4
        fmadd.s f14, f5, f24, f25
        fsw     f17, 4(a1)
        fmadd.s f28, f28, f11, f19
        slli    t4, t4, 5
        fmadd.s f29, f29, f12, f20
        add     t4, t4, a5
        flw     f6, 24(a0)
        flw     f20, 8(t3)
        fcvt.w.s t5, f14, rtz
        fmul.s  f28, f2, f28
        flw     f21, 0(t4)
        fmadd.s f29, f29, f12, f20
        flw     f30, 16(t4)
        flw     f20, 4(t3)
        fsub.s  f13, f4, f21
        max     t5, t5, zero
        flw     f21, 12(t4)
        minu    t5, t5, a4
        fmadd.s f15, f6, f24, f25
        fsw     f28, 8(a1)
        fmadd.s f29, f29, f12, f20
        slli    t5, t5, 5
        addi    a0, a0, 28
        addi    a1, a1, 28
        addi    a6, a6, -1
        bnez    a6, gelu_loop
gelu_loop_epi:
        # epilogue step 1
        fmadd.s f30, f30, f13, f21
        add     t5, t5, a5
        flw     f21, 8(t4)
        fcvt.w.s t6, f15, rtz
        fmul.s  f29, f3, f29
        flw     f22, 0(t5)
        fmadd.s f30, f30, f13, f21
        flw     f31, 16(t5)
        flw     f21, 4(t4)
        fsub.s  f14, f5, f22
        max     t6, t6, zero
        flw     f22, 12(t5)
        minu    t6, t6, a4
        fsw     f29, -16(a1)
        fmadd.s f30, f30, f13, f21
        slli    t6, t6, 5
        fmadd.s f31, f31, f14, f22
        add     t6, t6, a5
        flw     f22, 8(t5)
        fmul.s  f30, f4, f30
        flw     f23, 0(t6)
        fmadd.s f31, f31, f14, f22
        flw     f8, 16(t6)
        flw     f22, 4(t5)
        fsub.s  f15, f6, f23
        flw     f23, 12(t6)
        fsw     f30, -12(a1)
        fmadd.s f31, f31, f14, f22
        fmadd.s f8, f8, f15, f23
        flw     f23, 8(t6)
        fmul.s  f31, f5, f31
        fmadd.s f8, f8, f15, f23
        flw     f23, 4(t6)
        fsw     f31, -8(a1)
        fmadd.s f8, f8, f15, f23
        fmul.s  f8, f6, f8
        fsw     f8, -4(a1)
        addi    a0, a0, 28
        addi    a1, a1, 28
        addi    a0, a0, -28
        addi    a1, a1, -28
5:      beqz    a2, 9f                  # the N mod 7 leftovers, one at a time
6:
        flw     f0, 0(a0)
        fmadd.s f7, f0, f24, f25
        fcvt.w.s t0, f7, rtz
        max     t0, t0, zero
        minu    t0, t0, a4
        slli    t0, t0, 5
        add     t0, t0, a5
        flw     f9, 0(t0)
        fsub.s  f7, f0, f9
        flw     f16, 16(t0)
        flw     f9, 12(t0)
        fmadd.s f16, f16, f7, f9
        flw     f9, 8(t0)
        fmadd.s f16, f16, f7, f9
        flw     f9, 4(t0)
        fmadd.s f16, f16, f7, f9
        fmul.s  f16, f0, f16
        fsw     f16, 0(a1)
        addi    a0, a0, 4
        addi    a1, a1, 4
        addi    a2, a2, -1
        bnez    a2, 6b
9:      flw     f8, 0(sp)
        flw     f9, 4(sp)
        flw     f18, 8(sp)
        flw     f19, 12(sp)
        flw     f20, 16(sp)
        flw     f21, 20(sp)
        flw     f22, 24(sp)
        flw     f23, 28(sp)
        flw     f24, 32(sp)
        flw     f25, 36(sp)
        addi    sp, sp, 40
        ret

        .section .rodata
        .p2align 5
gelu_tab:
        # 90 entries of 8 words: center, c0..c3, padding
        .word   0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000
        .word   0xc0ae0000, 0x32e80e76, 0x3422c1f9, 0x34df2b62, 0x3542a7d6, 0x00000000, 0x00000000, 0x00000000
        .word   0xc0aa0000, 0x33683265, 0x349f550d, 0x35555b5c, 0x35b58c12, 0x00000000, 0x00000000, 0x00000000
        .word   0xc0a60000, 0x33e4d740, 0x35198f85, 0x35c8b449, 0x36267dee, 0x00000000, 0x00000000, 0x00000000
        .word   0xc0a20000, 0x345e24b3, 0x3591b41d, 0x3639c4cf, 0x36961faa, 0x00000000, 0x00000000, 0x00000000
        .word   0xc09e0000, 0x34d467a8, 0x36081aec, 0x36a92d71, 0x37051586, 0x00000000, 0x00000000, 0x00000000
        .word   0xc09a0000, 0x35480c8a, 0x367a55fe, 0x3717956f, 0x3767f699, 0x00000000, 0x00000000, 0x00000000
        .word   0xc0960000, 0x35b99777, 0x36e2a66a, 0x3785a005, 0x37c6b719, 0x00000000, 0x00000000, 0x00000000
        .word   0xc0920000, 0x36299b25, 0x374a061b, 0x37e7c5e8, 0x38275231, 0x00000000, 0x00000000, 0x00000000
        .word   0xc08e0000, 0x3698af4f, 0x37b14814, 0x3845be20, 0x388a766d, 0x00000000, 0x00000000, 0x00000000
        .word   0xc08a0000, 0x3707679a, 0x38192859, 0x38a5f690, 0x38e131ac, 0x00000000, 0x00000000, 0x00000000
        .word   0xc0860000, 0x376c9733, 0x388243d7, 0x39090482, 0x3933ee9d, 0x00000000, 0x00000000, 0x00000000
        .word   0xc0820000, 0x37cba122, 0x38da2726, 0x395e8982, 0x398d3d56, 0x00000000, 0x00000000, 0x00000000
        .word   0xc07c0000, 0x382caa82, 0x3933d636, 0x39b1bf9a, 0x39d9cd55, 0x00000000, 0x00000000, 0x00000000
        .word   0xc0740000, 0x38903fab, 0x3991f3b6, 0x3a0ba230, 0x3a24ed05, 0x00000000, 0x00000000, 0x00000000
        .word   0xc06c0000, 0x38ed7753, 0x39e93b0f, 0x3a57c08d, 0x3a754032, 0x00000000, 0x00000000, 0x00000000
        .word   0xc0640000, 0x39409703, 0x3a377635, 0x3aa3e960, 0x3ab301b4, 0x00000000, 0x00000000, 0x00000000
        .word   0xc05c0000, 0x3999e7fc, 0x3a8e135a, 0x3af4e4d3, 0x3b003a72, 0x00000000, 0x00000000, 0x00000000
        .word   0xc0540000, 0x39f26480, 0x3ad8a3b4, 0x3b33ded8, 0x3b343e0c, 0x00000000, 0x00000000, 0x00000000
        .word   0xc04c0000, 0x3a3c1925, 0x3b229b72, 0x3b81e13b, 0x3b787db2, 0x00000000, 0x00000000, 0x00000000
        .word   0xc0440000, 0x3a8fd935, 0x3b705163, 0x3bb86029, 0x3ba7ef94, 0x00000000, 0x00000000, 0x00000000
        .word   0xc03c0000, 0x3ad8d691, 0x3baed48d, 0x3c00a055, 0x3bde70b0, 0x00000000, 0x00000000, 0x00000000
        .word   0xc0340000, 0x3b211499, 0x3bfa6ece, 0x3c305df9, 0x3c1048df, 0x00000000, 0x00000000, 0x00000000
        .word   0xc02c0000, 0x3b6be4ac, 0x3c30955e, 0x3c6d9c36, 0x3c373451, 0x00000000, 0x00000000, 0x00000000
        .word   0xc0240000, 0x3baa43c8, 0x3c752972, 0x3c9d3d38, 0x3c637fab, 0x00000000, 0x00000000, 0x00000000
        .word   0xc01c0000, 0x3bf24e5d, 0x3ca78c5d, 0x3ccc651b, 0x3c8a0076, 0x00000000, 0x00000000, 0x00000000
        .word   0xc0140000, 0x3c29fc29, 0x3ce175fd, 0x3d0271b3, 0x3ca35e12, 0x00000000, 0x00000000, 0x00000000
        .word   0xc00c0000, 0x3c6b28e3, 0x3d1557f5, 0x3d23707c, 0x3cbc66f7, 0x00000000, 0x00000000, 0x00000000
        .word   0xc0040000, 0x3ca06662, 0x3d42c7df, 0x3d48f316, 0x3cd335bd, 0x00000000, 0x00000000, 0x00000000
        .word   0xbff80000, 0x3cd7cb6e, 0x3d7a1a7b, 0x3d7258da, 0x3ce57fa9, 0x00000000, 0x00000000, 0x00000000
        .word   0xbfe80000, 0x3d0f2c6f, 0x3d9e1487, 0x3d8f45ff, 0x3cf0b415, 0x00000000, 0x00000000, 0x00000000
        .word   0xbfd80000, 0x3d3b6828, 0x3dc4bbe6, 0x3da5fc6b, 0x3cf22d96, 0x00000000, 0x00000000, 0x00000000
        .word   0xbfc80000, 0x3d720340, 0x3df10b23, 0x3dbc47ec, 0x3ce77302, 0x00000000, 0x00000000, 0x00000000
        .word   0xbfb80000, 0x3d9a3099, 0x3e116082, 0x3dd0ea77, 0x3cce8388, 0x00000000, 0x00000000, 0x00000000
        .word   0xbfa80000, 0x3dc1e55e, 0x3e2ca3b2, 0x3de27eba, 0x3ca62623, 0x00000000, 0x00000000, 0x00000000
        .word   0xbf980000, 0x3df0abd7, 0x3e49d600, 0x3def8e60, 0x3c5c64a9, 0x00000000, 0x00000000, 0x00000000
        .word   0xbf880000, 0x3e1375e5, 0x3e684fce, 0x3df6ae51, 0x3b9f1c25, 0x00000000, 0x00000000, 0x00000000
        .word   0xbf700000, 0x3e326eca, 0x3e839f31, 0x3df69ee1, 0xbbaa6c3e, 0x00000000, 0x00000000, 0x00000000
        .word   0xbf500000, 0x3e554020, 0x3e92d5b4, 0x3dee6cc3, 0xbc851bef, 0x00000000, 0x00000000, 0x00000000
        .word   0xbf300000, 0x3e7bc8fd, 0x3ea14436, 0x3ddd8f1c, 0xbce2bf96, 0x00000000, 0x00000000, 0x00000000
        .word   0xbf100000, 0x3e92e2f3, 0x3eae5ee0, 0x3dc3fee3, 0xbd1ee082, 0x00000000, 0x00000000, 0x00000000
        .word   0xbee00000, 0x3ea9685f, 0x3eb99dd6, 0x3da2441d, 0xbd4806cf, 0x00000000, 0x00000000, 0x00000000
        .word   0xbea00000, 0x3ec13170, 0x3ec28643, 0x3d72ed0e, 0xbd69ea1e, 0x00000000, 0x00000000, 0x00000000
        .word   0xbe400000, 0x3ed9ecbe, 0x3ec8b307, 0x3d16611b, 0xbd8105d5, 0x00000000, 0x00000000, 0x00000000
        .word   0xbd800000, 0x3ef33dfe, 0x3ecbdc21, 0x3c4ba943, 0xbd874bf7, 0x00000000, 0x00000000, 0x00000000
        .word   0x3d800000, 0x3f066101, 0x3ecbdc21, 0xbc4ba943, 0xbd874bf7, 0x00000000, 0x00000000, 0x00000000
        .word   0x3e400000, 0x3f1309a1, 0x3ec8b307, 0xbd16611b, 0xbd8105d5, 0x00000000, 0x00000000, 0x00000000
        .word   0x3ea00000, 0x3f1f6748, 0x3ec28643, 0xbd72ed0e, 0xbd69ea1e, 0x00000000, 0x00000000, 0x00000000
        .word   0x3ee00000, 0x3f2b4bd0, 0x3eb99dd6, 0xbda2441d, 0xbd4806cf, 0x00000000, 0x00000000, 0x00000000
        .word   0x3f100000, 0x3f368e86, 0x3eae5ee0, 0xbdc3fee3, 0xbd1ee082, 0x00000000, 0x00000000, 0x00000000
        .word   0x3f300000, 0x3f410dc1, 0x3ea14436, 0xbddd8f1c, 0xbce2bf96, 0x00000000, 0x00000000, 0x00000000
        .word   0x3f500000, 0x3f4aaff8, 0x3e92d5b4, 0xbdee6cc3, 0xbc851bef, 0x00000000, 0x00000000, 0x00000000
        .word   0x3f700000, 0x3f53644d, 0x3e839f31, 0xbdf69ee1, 0xbbaa6c3e, 0x00000000, 0x00000000, 0x00000000
        .word   0x3f880000, 0x3f5b2287, 0x3e684fce, 0xbdf6ae51, 0x3b9f1c25, 0x00000000, 0x00000000, 0x00000000
        .word   0x3f980000, 0x3f61ea85, 0x3e49d600, 0xbdef8e60, 0x3c5c64a9, 0x00000000, 0x00000000, 0x00000000
        .word   0x3fa80000, 0x3f67c354, 0x3e2ca3b2, 0xbde27eba, 0x3ca62623, 0x00000000, 0x00000000, 0x00000000
        .word   0x3fb80000, 0x3f6cb9ed, 0x3e116082, 0xbdd0ea77, 0x3cce8388, 0x00000000, 0x00000000, 0x00000000
        .word   0x3fc80000, 0x3f70dfcc, 0x3df10b23, 0xbdbc47ec, 0x3ce77302, 0x00000000, 0x00000000, 0x00000000
        .word   0x3fd80000, 0x3f74497e, 0x3dc4bbe6, 0xbda5fc6b, 0x3cf22d96, 0x00000000, 0x00000000, 0x00000000
        .word   0x3fe80000, 0x3f770d39, 0x3d9e1487, 0xbd8f45ff, 0x3cf0b415, 0x00000000, 0x00000000, 0x00000000
        .word   0x3ff80000, 0x3f7941a5, 0x3d7a1a7b, 0xbd7258da, 0x3ce57fa9, 0x00000000, 0x00000000, 0x00000000
        .word   0x40040000, 0x3f7afccd, 0x3d42c7df, 0xbd48f316, 0x3cd335bd, 0x00000000, 0x00000000, 0x00000000
        .word   0x400c0000, 0x3f7c535c, 0x3d1557f5, 0xbd23707c, 0x3cbc66f7, 0x00000000, 0x00000000, 0x00000000
        .word   0x40140000, 0x3f7d580f, 0x3ce175fd, 0xbd0271b3, 0x3ca35e12, 0x00000000, 0x00000000, 0x00000000
        .word   0x401c0000, 0x3f7e1b63, 0x3ca78c5d, 0xbccc651b, 0x3c8a0076, 0x00000000, 0x00000000, 0x00000000
        .word   0x40240000, 0x3f7eab78, 0x3c752972, 0xbc9d3d38, 0x3c637fab, 0x00000000, 0x00000000, 0x00000000
        .word   0x402c0000, 0x3f7f141b, 0x3c30955e, 0xbc6d9c36, 0x3c373451, 0x00000000, 0x00000000, 0x00000000
        .word   0x40340000, 0x3f7f5eeb, 0x3bfa6ece, 0xbc305df9, 0x3c1048df, 0x00000000, 0x00000000, 0x00000000
        .word   0x403c0000, 0x3f7f9395, 0x3baed48d, 0xbc00a055, 0x3bde70b0, 0x00000000, 0x00000000, 0x00000000
        .word   0x40440000, 0x3f7fb813, 0x3b705163, 0xbbb86029, 0x3ba7ef94, 0x00000000, 0x00000000, 0x00000000
        .word   0x404c0000, 0x3f7fd0fa, 0x3b229b72, 0xbb81e13b, 0x3b787db2, 0x00000000, 0x00000000, 0x00000000
        .word   0x40540000, 0x3f7fe1b3, 0x3ad8a3b4, 0xbb33ded8, 0x3b343e0c, 0x00000000, 0x00000000, 0x00000000
        .word   0x405c0000, 0x3f7fecc3, 0x3a8e135a, 0xbaf4e4d3, 0x3b003a72, 0x00000000, 0x00000000, 0x00000000
        .word   0x40640000, 0x3f7ff3f7, 0x3a377635, 0xbaa3e960, 0x3ab301b4, 0x00000000, 0x00000000, 0x00000000
        .word   0x406c0000, 0x3f7ff894, 0x39e93b0f, 0xba57c08d, 0x3a754032, 0x00000000, 0x00000000, 0x00000000
        .word   0x40740000, 0x3f7ffb7e, 0x3991f3b6, 0xba0ba230, 0x3a24ed05, 0x00000000, 0x00000000, 0x00000000
        .word   0x407c0000, 0x3f7ffd4d, 0x3933d636, 0xb9b1bf9a, 0x39d9cd55, 0x00000000, 0x00000000, 0x00000000
        .word   0x40820000, 0x3f7ffe69, 0x38da2726, 0xb95e8982, 0x398d3d56, 0x00000000, 0x00000000, 0x00000000
        .word   0x40860000, 0x3f7fff13, 0x388243d7, 0xb9090482, 0x3933ee9d, 0x00000000, 0x00000000, 0x00000000
        .word   0x408a0000, 0x3f7fff79, 0x38192859, 0xb8a5f690, 0x38e131ac, 0x00000000, 0x00000000, 0x00000000
        .word   0x408e0000, 0x3f7fffb4, 0x37b14814, 0xb845be20, 0x388a766d, 0x00000000, 0x00000000, 0x00000000
        .word   0x40920000, 0x3f7fffd6, 0x374a061b, 0xb7e7c5e8, 0x38275231, 0x00000000, 0x00000000, 0x00000000
        .word   0x40960000, 0x3f7fffe9, 0x36e2a66a, 0xb785a005, 0x37c6b718, 0x00000000, 0x00000000, 0x00000000
        .word   0x409a0000, 0x3f7ffff3, 0x367a55fe, 0xb717956f, 0x3767f698, 0x00000000, 0x00000000, 0x00000000
        .word   0x409e0000, 0x3f7ffff9, 0x36081aec, 0xb6a92d71, 0x37051585, 0x00000000, 0x00000000, 0x00000000
        .word   0x40a20000, 0x3f7ffffd, 0x3591b41d, 0xb639c4cf, 0x36961faa, 0x00000000, 0x00000000, 0x00000000
        .word   0x40a60000, 0x3f7ffffe, 0x35198f85, 0xb5c8b44a, 0x36267deb, 0x00000000, 0x00000000, 0x00000000
        .word   0x40aa0000, 0x3f7fffff, 0x349f550d, 0xb5555b5d, 0x35b58c0b, 0x00000000, 0x00000000, 0x00000000
        .word   0x40ae0000, 0x3f800000, 0x3422c1f9, 0xb4df2b64, 0x3542a7de, 0x00000000, 0x00000000, 0x00000000
        .word   0x00000000, 0x3f800000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000
