# softmax on coral (RV32IMF + Zbb, in-order, scalar F unit): y[m, :] = exp(x[m, :] - max) /
# sum(exp(x[m, :] - max)), f32.
#
# Entry: a0 = x, a1 = y, a2 = M, a3 = N. N must be a multiple of 8 (every configuration's is).
#
# Algorithm, per row, three passes over groups of 8 elements; the core issues in order, so each
# group is a list schedule computed offline from the latencies (load 2, FP 3) in which no
# instruction waits for an operand (10, 64 and 16 issue cycles per group of 8 for the passes).
#  1. max: 4 partial fmax.s chains, combined at the end of the row.
#  2. e = exp(x - max), stored to y and summed. exp by table-driven range
#     reduction: k = t * 32/ln2 + 1.5*2^23 rounds t*32/ln2 to an integer n held in k's low mantissa
#     bits (k - 1.5*2^23 = n exactly); r = t - n * ln2/32, |r| <= ln2/64; e^r = 1 + w with
#     w = r * (1 + r/2) (error < 2.2e-7 relative for |r| <= 0.0109); 2^(n/32) = 2^(n >> 5) * T[n & 31],
#     T the 32 f32 values 2^(j/32), is built in the integer unit from the bits of k:
#     bits(T[n & 31]) + ((n >> 5) << 23) (the exponent field of 1.5*2^23 vanishes in the shift), with
#     n clamped to >= -4032 first (Zbb max; 2^(n/32) stays a normal float, e^-87 ~ 1.6e-38 where it
#     applies); e = 2^(n/32) + 2^(n/32) * w (one FMA). Relative error below 5e-7, plus up to
#     4e-6 * |t| / 87 from rounding ln2/32 to f32 (only on values below e^-10 of the row's largest).
#     The two moves between the FP and integer registers go through y[i] in memory (fsw/lw,
#     sw/flw), which the load/store port can afford: 8 FP operations and 7 memory operations an
#     element. The loop is software-pipelined by modulo scheduling (computed offline): one element
#     enters every 8 cycles, each unit's operations on distinct slots of the period.
#  3. y = e * (1 / sum): one fdiv.s per row, then loads, products and stores.

        .text
        .globl softmax
softmax:
        addi    sp, sp, -96
        sw      s0, 0(sp)
        sw      s1, 4(sp)
        sw      s2, 8(sp)
        sw      s3, 12(sp)
        sw      s4, 16(sp)
        sw      s5, 20(sp)
        sw      s6, 24(sp)
        sw      s7, 28(sp)
        sw      s8, 32(sp)
        sw      s9, 36(sp)
        sw      s10, 40(sp)
        sw      s11, 44(sp)
        fsw     f8, 48(sp)
        fsw     f9, 52(sp)
        fsw     f18, 56(sp)
        fsw     f19, 60(sp)
        fsw     f20, 64(sp)
        fsw     f21, 68(sp)
        fsw     f22, 72(sp)
        fsw     f23, 76(sp)
        fsw     f24, 80(sp)
        fsw     f25, 84(sp)
        fsw     f26, 88(sp)
        fsw     f27, 92(sp)
        li      t0, 0x4238aa3b
        fmv.w.x f25, t0                 # 32/ln2
        li      t0, 0x4b400000
        fmv.w.x f26, t0                 # 1.5*2^23
        li      t0, 0x3cb17218
        fmv.w.x f27, t0                 # ln2/32
        li      t0, 0x3f000000
        fmv.w.x f28, t0                 # 0.5
        li      t0, 0x3f800000
        fmv.w.x f29, t0                 # 1.0
        li      a7, 0x4b3ff040       # bits of 1.5*2^23 - 4032: the smallest n
        la      s11, softmax_exp2_tab
        slli    s10, a3, 2              # s10 = N*4: one row
sm_row:
        add     a5, a0, s10             # a5 = end of the row of x
        mv      a4, a0
        flw     f8, 0(a0)
        flw     f9, 4(a0)
        flw     f10, 8(a0)
        flw     f11, 12(a0)
sm_max:
        flw     f0, 0(a4)
        flw     f1, 4(a4)
        flw     f2, 8(a4)
        fmax.s  f8, f8, f0
        flw     f3, 12(a4)
        fmax.s  f9, f9, f1
        flw     f4, 16(a4)
        fmax.s  f10, f10, f2
        flw     f5, 20(a4)
        fmax.s  f11, f11, f3
        flw     f6, 24(a4)
        fmax.s  f8, f8, f4
        flw     f7, 28(a4)
        fmax.s  f9, f9, f5
        addi    a4, a4, 32
        fmax.s  f10, f10, f6
        fmax.s  f11, f11, f7
        bltu    a4, a5, sm_max
        fmax.s  f8, f8, f9
        fmax.s  f10, f10, f11
        fmax.s  f24, f8, f10
        fmv.w.x f30, zero
        mv      a4, a0
        mv      a6, a1
        srli    s9, a3, 3               # s9 = groups of 8
        # prologue step 0
        flw     f0, 0(a4)
        fsub.s  f0, f0, f24
        fmadd.s f8, f0, f25, f26
        flw     f1, 4(a4)
        fsw     f8, 0(a6)
        fsub.s  f8, f8, f26
        fsub.s  f1, f1, f24
        lw      t0, 0(a6)
        fnmsub.s f8, f8, f27, f0
        max     t0, t0, a7
        fmadd.s f9, f1, f25, f26
        andi    s1, t0, 31
        andi    t0, t0, -32
        fmadd.s f16, f8, f28, f29
        slli    s1, s1, 2
        slli    t0, t0, 18
        flw     f2, 8(a4)
        add     s1, s1, s11
        fsw     f9, 4(a6)
        fsub.s  f9, f9, f26
        lw      s1, 0(s1)
        fsub.s  f2, f2, f24
        add     t0, t0, s1
        lw      t1, 4(a6)
        fnmsub.s f9, f9, f27, f1
        sw      t0, 0(a6)
        fmul.s  f8, f8, f16
        flw     f0, 0(a6)
        max     t1, t1, a7
        fmadd.s f10, f2, f25, f26
        andi    s2, t1, 31
        andi    t1, t1, -32
        fmadd.s f17, f9, f28, f29
        fmadd.s f0, f0, f8, f0
        slli    s2, s2, 2
        slli    t1, t1, 18
        flw     f3, 12(a4)
        add     s2, s2, s11
        fsw     f10, 8(a6)
        fsub.s  f10, f10, f26
        lw      s2, 0(s2)
        fsub.s  f3, f3, f24
        fadd.s  f30, f30, f0
        fsw     f0, 0(a6)
        add     t1, t1, s2
        lw      t2, 8(a6)
        fnmsub.s f10, f10, f27, f2
        sw      t1, 4(a6)
        fmul.s  f9, f9, f17
        flw     f1, 4(a6)
        max     t2, t2, a7
        fmadd.s f11, f3, f25, f26
        andi    s3, t2, 31
        andi    t2, t2, -32
        fmadd.s f18, f10, f28, f29
        fmadd.s f1, f1, f9, f1
        slli    s3, s3, 2
        slli    t2, t2, 18
        flw     f4, 16(a4)
        add     s3, s3, s11
        fsw     f11, 12(a6)
        fsub.s  f11, f11, f26
        lw      s3, 0(s3)
        fsub.s  f4, f4, f24
        fadd.s  f30, f30, f1
        fsw     f1, 4(a6)
        add     t2, t2, s3
        lw      t3, 12(a6)
        fnmsub.s f11, f11, f27, f3
        sw      t2, 8(a6)
        fmul.s  f10, f10, f18
        flw     f2, 8(a6)
        max     t3, t3, a7
        fmadd.s f12, f4, f25, f26
        andi    s4, t3, 31
        andi    t3, t3, -32
        fmadd.s f19, f11, f28, f29
        fmadd.s f2, f2, f10, f2
        slli    s4, s4, 2
        slli    t3, t3, 18
        flw     f5, 20(a4)
        add     s4, s4, s11
        fsw     f12, 16(a6)
        fsub.s  f12, f12, f26
        lw      s4, 0(s4)
        fsub.s  f5, f5, f24
        fadd.s  f30, f30, f2
        fsw     f2, 8(a6)
        add     t3, t3, s4
        lw      t4, 16(a6)
        fnmsub.s f12, f12, f27, f4
        sw      t3, 12(a6)
        fmul.s  f11, f11, f19
        flw     f3, 12(a6)
        max     t4, t4, a7
        fmadd.s f13, f5, f25, f26
        andi    s5, t4, 31
        andi    t4, t4, -32
        fmadd.s f20, f12, f28, f29
        fmadd.s f3, f3, f11, f3
        slli    s5, s5, 2
        slli    t4, t4, 18
        flw     f6, 24(a4)
        add     s5, s5, s11
        fsw     f13, 20(a6)
        fsub.s  f13, f13, f26
        lw      s5, 0(s5)
        fsub.s  f6, f6, f24
        fadd.s  f30, f30, f3
        fsw     f3, 12(a6)
        add     t4, t4, s5
        lw      t5, 20(a6)
        fnmsub.s f13, f13, f27, f5
        sw      t4, 16(a6)
        fmul.s  f12, f12, f20
        flw     f4, 16(a6)
        max     t5, t5, a7
        fmadd.s f14, f6, f25, f26
        andi    s6, t5, 31
        andi    t5, t5, -32
        fmadd.s f21, f13, f28, f29
        fmadd.s f4, f4, f12, f4
        slli    s6, s6, 2
        slli    t5, t5, 18
        flw     f7, 28(a4)
        add     s6, s6, s11
        fsw     f14, 24(a6)
        fsub.s  f14, f14, f26
        lw      s6, 0(s6)
        fsub.s  f7, f7, f24
        fadd.s  f30, f30, f4
        fsw     f4, 16(a6)
        add     t5, t5, s6
        lw      t6, 24(a6)
        fnmsub.s f14, f14, f27, f6
        sw      t5, 20(a6)
        fmul.s  f13, f13, f21
        flw     f5, 20(a6)
        max     t6, t6, a7
        fmadd.s f15, f7, f25, f26
        andi    s7, t6, 31
        andi    t6, t6, -32
        fmadd.s f22, f14, f28, f29
        addi    a4, a4, 32
        addi    a6, a6, 32
        addi    s9, s9, -1
        beqz    s9, sm_exp_epi
sm_exp:
        flw     f0, 0(a4)
        fmadd.s f5, f5, f13, f5
        slli    s7, s7, 2
        slli    t6, t6, 18
        add     s7, s7, s11
        fsw     f15, -4(a6)
        fsub.s  f15, f15, f26
        fsub.s  f0, f0, f24
        lw      s7, 0(s7)
        fadd.s  f30, f30, f5
        fsw     f5, -12(a6)
        add     t6, t6, s7
        lw      s0, -4(a6)
        fnmsub.s f15, f15, f27, f7
        sw      t6, -8(a6)
        fmul.s  f14, f14, f22
        fmadd.s f8, f0, f25, f26
        flw     f6, -8(a6)
        max     s0, s0, a7
        andi    s8, s0, 31
        andi    s0, s0, -32
        fmadd.s f23, f15, f28, f29
        flw     f1, 4(a4)
        fmadd.s f6, f6, f14, f6
        slli    s8, s8, 2
        slli    s0, s0, 18
        fsw     f8, 0(a6)
        fsub.s  f8, f8, f26
        add     s8, s8, s11
        fsub.s  f1, f1, f24
        lw      s8, 0(s8)
        fadd.s  f30, f30, f6
        fsw     f6, -8(a6)
        lw      t0, 0(a6)
        fnmsub.s f8, f8, f27, f0
        add     s0, s0, s8
        sw      s0, -4(a6)
        fmul.s  f15, f15, f23
        max     t0, t0, a7
        fmadd.s f9, f1, f25, f26
        flw     f7, -4(a6)
        andi    s1, t0, 31
        andi    t0, t0, -32
        fmadd.s f16, f8, f28, f29
        slli    s1, s1, 2
        slli    t0, t0, 18
        flw     f2, 8(a4)
        fmadd.s f7, f7, f15, f7
        add     s1, s1, s11
        fsw     f9, 4(a6)
        fsub.s  f9, f9, f26
        lw      s1, 0(s1)
        fsub.s  f2, f2, f24
        fadd.s  f30, f30, f7
        fsw     f7, -4(a6)
        add     t0, t0, s1
        lw      t1, 4(a6)
        fnmsub.s f9, f9, f27, f1
        sw      t0, 0(a6)
        fmul.s  f8, f8, f16
        flw     f0, 0(a6)
        max     t1, t1, a7
        fmadd.s f10, f2, f25, f26
        andi    s2, t1, 31
        andi    t1, t1, -32
        fmadd.s f17, f9, f28, f29
        fmadd.s f0, f0, f8, f0
        slli    s2, s2, 2
        slli    t1, t1, 18
        flw     f3, 12(a4)
        add     s2, s2, s11
        fsw     f10, 8(a6)
        fsub.s  f10, f10, f26
        lw      s2, 0(s2)
        fsub.s  f3, f3, f24
        fadd.s  f30, f30, f0
        fsw     f0, 0(a6)
        add     t1, t1, s2
        lw      t2, 8(a6)
        fnmsub.s f10, f10, f27, f2
        sw      t1, 4(a6)
        fmul.s  f9, f9, f17
        flw     f1, 4(a6)
        max     t2, t2, a7
        fmadd.s f11, f3, f25, f26
        andi    s3, t2, 31
        andi    t2, t2, -32
        fmadd.s f18, f10, f28, f29
        fmadd.s f1, f1, f9, f1
        slli    s3, s3, 2
        slli    t2, t2, 18
        flw     f4, 16(a4)
        add     s3, s3, s11
        fsw     f11, 12(a6)
        fsub.s  f11, f11, f26
        lw      s3, 0(s3)
        fsub.s  f4, f4, f24
        fadd.s  f30, f30, f1
        fsw     f1, 4(a6)
        add     t2, t2, s3
        lw      t3, 12(a6)
        fnmsub.s f11, f11, f27, f3
        sw      t2, 8(a6)
        fmul.s  f10, f10, f18
        flw     f2, 8(a6)
        max     t3, t3, a7
        fmadd.s f12, f4, f25, f26
        andi    s4, t3, 31
        andi    t3, t3, -32
        fmadd.s f19, f11, f28, f29
        fmadd.s f2, f2, f10, f2
        slli    s4, s4, 2
        slli    t3, t3, 18
        flw     f5, 20(a4)
        add     s4, s4, s11
        fsw     f12, 16(a6)
        fsub.s  f12, f12, f26
        lw      s4, 0(s4)
        fsub.s  f5, f5, f24
        fadd.s  f30, f30, f2
        fsw     f2, 8(a6)
        add     t3, t3, s4
        lw      t4, 16(a6)
        fnmsub.s f12, f12, f27, f4
        sw      t3, 12(a6)
        fmul.s  f11, f11, f19
        flw     f3, 12(a6)
        max     t4, t4, a7
        fmadd.s f13, f5, f25, f26
        andi    s5, t4, 31
        andi    t4, t4, -32
        fmadd.s f20, f12, f28, f29
        fmadd.s f3, f3, f11, f3
        slli    s5, s5, 2
        slli    t4, t4, 18
        flw     f6, 24(a4)
        add     s5, s5, s11
        fsw     f13, 20(a6)
        fsub.s  f13, f13, f26
        lw      s5, 0(s5)
        fsub.s  f6, f6, f24
        fadd.s  f30, f30, f3
        fsw     f3, 12(a6)
        add     t4, t4, s5
        lw      t5, 20(a6)
        fnmsub.s f13, f13, f27, f5
        sw      t4, 16(a6)
        fmul.s  f12, f12, f20
        flw     f4, 16(a6)
        max     t5, t5, a7
        fmadd.s f14, f6, f25, f26
        andi    s6, t5, 31
        andi    t5, t5, -32
        fmadd.s f21, f13, f28, f29
        fmadd.s f4, f4, f12, f4
        slli    s6, s6, 2
        slli    t5, t5, 18
        flw     f7, 28(a4)
        add     s6, s6, s11
        fsw     f14, 24(a6)
        fsub.s  f14, f14, f26
        lw      s6, 0(s6)
        fsub.s  f7, f7, f24
        fadd.s  f30, f30, f4
        fsw     f4, 16(a6)
        add     t5, t5, s6
        lw      t6, 24(a6)
        fnmsub.s f14, f14, f27, f6
        sw      t5, 20(a6)
        fmul.s  f13, f13, f21
        flw     f5, 20(a6)
        max     t6, t6, a7
        fmadd.s f15, f7, f25, f26
        andi    s7, t6, 31
        andi    t6, t6, -32
        fmadd.s f22, f14, f28, f29
        addi    a4, a4, 32
        addi    a6, a6, 32
        addi    s9, s9, -1
        bnez    s9, sm_exp
sm_exp_epi:
        # epilogue step 1
        fmadd.s f5, f5, f13, f5
        slli    s7, s7, 2
        slli    t6, t6, 18
        add     s7, s7, s11
        fsw     f15, -4(a6)
        fsub.s  f15, f15, f26
        lw      s7, 0(s7)
        fadd.s  f30, f30, f5
        fsw     f5, -12(a6)
        add     t6, t6, s7
        lw      s0, -4(a6)
        fnmsub.s f15, f15, f27, f7
        sw      t6, -8(a6)
        fmul.s  f14, f14, f22
        flw     f6, -8(a6)
        max     s0, s0, a7
        andi    s8, s0, 31
        andi    s0, s0, -32
        fmadd.s f23, f15, f28, f29
        fmadd.s f6, f6, f14, f6
        slli    s8, s8, 2
        slli    s0, s0, 18
        add     s8, s8, s11
        lw      s8, 0(s8)
        fadd.s  f30, f30, f6
        fsw     f6, -8(a6)
        add     s0, s0, s8
        sw      s0, -4(a6)
        fmul.s  f15, f15, f23
        flw     f7, -4(a6)
        fmadd.s f7, f7, f15, f7
        fadd.s  f30, f30, f7
        fsw     f7, -4(a6)
        addi    a4, a4, 32
        addi    a6, a6, 32
        addi    a4, a4, -32
        addi    a6, a6, -32
        fdiv.s  f30, f29, f30           # 1 / sum
        mv      a6, a1
        add     a5, a1, s10
sm_div:
        flw     f0, 0(a6)
        flw     f1, 4(a6)
        flw     f2, 8(a6)
        fmul.s  f0, f0, f30
        flw     f3, 12(a6)
        fmul.s  f1, f1, f30
        flw     f4, 16(a6)
        fmul.s  f2, f2, f30
        flw     f5, 20(a6)
        fmul.s  f3, f3, f30
        flw     f6, 24(a6)
        fmul.s  f4, f4, f30
        flw     f7, 28(a6)
        fmul.s  f5, f5, f30
        fmul.s  f6, f6, f30
        fsw     f0, 0(a6)
        fmul.s  f7, f7, f30
        fsw     f1, 4(a6)
        fsw     f2, 8(a6)
        fsw     f3, 12(a6)
        fsw     f4, 16(a6)
        fsw     f5, 20(a6)
        fsw     f6, 24(a6)
        fsw     f7, 28(a6)
        addi    a6, a6, 32
        bltu    a6, a5, sm_div
        add     a0, a0, s10
        add     a1, a1, s10
        addi    a2, a2, -1
        bnez    a2, sm_row
        lw      s0, 0(sp)
        lw      s1, 4(sp)
        lw      s2, 8(sp)
        lw      s3, 12(sp)
        lw      s4, 16(sp)
        lw      s5, 20(sp)
        lw      s6, 24(sp)
        lw      s7, 28(sp)
        lw      s8, 32(sp)
        lw      s9, 36(sp)
        lw      s10, 40(sp)
        lw      s11, 44(sp)
        flw     f8, 48(sp)
        flw     f9, 52(sp)
        flw     f18, 56(sp)
        flw     f19, 60(sp)
        flw     f20, 64(sp)
        flw     f21, 68(sp)
        flw     f22, 72(sp)
        flw     f23, 76(sp)
        flw     f24, 80(sp)
        flw     f25, 84(sp)
        flw     f26, 88(sp)
        flw     f27, 92(sp)
        addi    sp, sp, 96
        ret

        .section .rodata
        .p2align 4
softmax_exp2_tab:
        # 2^(j/32), j = 0..31, as f32 bits
        .word   0x3f800000, 0x3f82cd87, 0x3f85aac3, 0x3f88980f, 0x3f8b95c2, 0x3f8ea43a, 0x3f91c3d3, 0x3f94f4f0
        .word   0x3f9837f0, 0x3f9b8d3a, 0x3f9ef532, 0x3fa27043, 0x3fa5fed7, 0x3fa9a15b, 0x3fad583f, 0x3fb123f6
        .word   0x3fb504f3, 0x3fb8fbaf, 0x3fbd08a4, 0x3fc12c4d, 0x3fc5672a, 0x3fc9b9be, 0x3fce248c, 0x3fd2a81e
        .word   0x3fd744fd, 0x3fdbfbb8, 0x3fe0ccdf, 0x3fe5b907, 0x3feac0c7, 0x3fefe4ba, 0x3ff5257d, 0x3ffa83b3
