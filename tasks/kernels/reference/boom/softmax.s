# softmax on boom (RV64IMFD, out of order): y[m, :] = exp(x[m, :] - max) / sum(exp(x[m, :] - max)), f32.
#
# Entry: a0 = x, a1 = y, a2 = M, a3 = N. N must be a multiple of 8 (every configuration's is).
#
# Algorithm, per row, three passes over groups of 8 elements in lockstep (8 independent chains
# keep the one FP pipe busy through the 4-cycle latencies, within the reorder buffer's reach):
#  1. max: 4 partial fmax.s chains, combined at the end of the row.
#  2. e = exp(t) with t = max(x - max, -87) (the clamp keeps 2^n a normal float; e^-87 = 1.6e-38),
#     stored to y and added into 4 partial sums. exp by table-driven range reduction:
#     k = t * 32/ln2 + 1.5*2^23 rounds t*32/ln2 to an integer n held in k's low mantissa bits
#     (k - 1.5*2^23 = n exactly); r = t - n * ln2/32, |r| <= ln2/64; e^r = 1 + w with
#     w = r * (1 + r/2) (error < 2.2e-7 relative for |r| <= 0.0109); 2^(n/32) = 2^(n >> 5) * T[n & 31],
#     T the 32 f32 values 2^(j/32), is built in the integer unit from the bits of k:
#     bits(T[n & 31]) + ((n >> 5) << 23) (the exponent field of 1.5*2^23 vanishes in the shift);
#     e = 2^(n/32) + 2^(n/32) * w (one FMA). Relative error below 5e-7 (plus up to 4e-6 * |t| / 87
#     from rounding ln2/32 to f32, on values below e^-10 relative to the row's largest).
#     The moves between the FP and the integer registers go through y[i] in memory (fsw/lwu,
#     sw/flw: the memory port has room, the one FP pipe has not), so 9 FP operations an element:
#     sub, clamp, scale, n, r, q, w, the FMA, the sum.
#  3. y = e * (1 / sum): one fdiv.s per row; the next group's loads issue before this group's stores.

        .text
        .globl softmax
softmax:
        addi    sp, sp, -112
        sd      s0, 88(sp)
        sd      s1, 96(sp)
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
        li      a4, 0xc2ae0000
        fmv.w.x fs5, a4             # -87
        li      a4, 0x4238aa3b
        fmv.w.x fs6, a4             # 32/ln2
        li      a4, 0x4b400000
        fmv.w.x fs7, a4             # 1.5*2^23
        li      a4, 0x3cb17218
        fmv.w.x fs8, a4              # ln2/32
        li      a4, 0x3f000000
        fmv.w.x fs9, a4             # 0.5
        li      a4, 0x3f800000
        fmv.w.x fs10, a4            # 1.0
        la      s0, softmax_exp2_tab
        slli    a6, a3, 2               # a6 = N*4: one row
sm_row:
        add     a4, a0, a6              # a4 = end of the row
        mv      t0, a0
        flw     fs0, 0(t0)
        flw     fs1, 4(t0)
        flw     fs2, 8(t0)
        flw     fs3, 12(t0)
1:
        flw     ft0, 0(t0)
        flw     ft1, 4(t0)
        flw     ft2, 8(t0)
        flw     ft3, 12(t0)
        flw     ft4, 16(t0)
        flw     ft5, 20(t0)
        flw     ft6, 24(t0)
        flw     ft7, 28(t0)
        fmax.s  fs0, fs0, ft0
        fmax.s  fs1, fs1, ft1
        fmax.s  fs2, fs2, ft2
        fmax.s  fs3, fs3, ft3
        fmax.s  fs0, fs0, ft4
        fmax.s  fs1, fs1, ft5
        fmax.s  fs2, fs2, ft6
        fmax.s  fs3, fs3, ft7
        addi    t0, t0, 32
        bltu    t0, a4, 1b
        fmax.s  fs0, fs0, fs1
        fmax.s  fs2, fs2, fs3
        fmax.s  fs4, fs0, fs2           # the row's max
        fmv.w.x fs0, zero
        fmv.w.x fs1, zero
        fmv.w.x fs2, zero
        fmv.w.x fs3, zero
        mv      s1, a0
        mv      a5, a1
        flw     ft0, 0(s1)
        flw     ft1, 4(s1)
        flw     ft2, 8(s1)
        flw     ft3, 12(s1)
        flw     ft4, 16(s1)
        flw     ft5, 20(s1)
        flw     ft6, 24(s1)
        flw     ft7, 28(s1)
3:
        fsub.s  ft0, ft0, fs4
        fsub.s  ft1, ft1, fs4
        fsub.s  ft2, ft2, fs4
        fsub.s  ft3, ft3, fs4
        fsub.s  ft4, ft4, fs4
        fsub.s  ft5, ft5, fs4
        fsub.s  ft6, ft6, fs4
        fsub.s  ft7, ft7, fs4
        fmax.s  ft0, ft0, fs5
        fmax.s  ft1, ft1, fs5
        fmax.s  ft2, ft2, fs5
        fmax.s  ft3, ft3, fs5
        fmax.s  ft4, ft4, fs5
        fmax.s  ft5, ft5, fs5
        fmax.s  ft6, ft6, fs5
        fmax.s  ft7, ft7, fs5
        fmadd.s ft8, ft0, fs6, fs7
        fmadd.s ft9, ft1, fs6, fs7
        fmadd.s ft10, ft2, fs6, fs7
        fmadd.s ft11, ft3, fs6, fs7
        fmadd.s fa0, ft4, fs6, fs7
        fmadd.s fa1, ft5, fs6, fs7
        fmadd.s fa2, ft6, fs6, fs7
        fmadd.s fa3, ft7, fs6, fs7
        fsw     ft8, 0(a5)               # k's bits through y[i] (the memory port has room,
        fsw     ft9, 4(a5)
        fsw     ft10, 8(a5)
        fsw     ft11, 12(a5)
        fsw     fa0, 16(a5)
        fsw     fa1, 20(a5)
        fsw     fa2, 24(a5)
        fsw     fa3, 28(a5)
        lwu     t0, 0(a5)               # the one FP pipe has not)
        lwu     t1, 4(a5)
        lwu     t2, 8(a5)
        lwu     t3, 12(a5)
        lwu     t4, 16(a5)
        lwu     t5, 20(a5)
        lwu     t6, 24(a5)
        lwu     a7, 28(a5)
        andi    a3, t0, 31
        andi    t0, t0, -32
        slli    a3, a3, 2
        add     a3, a3, s0
        lw      a3, 0(a3)               # bits of 2^(j/32)
        slli    t0, t0, 18
        addw    t0, t0, a3            # bits of 2^(n/32)
        sw      t0, 0(a5)
        andi    a3, t1, 31
        andi    t1, t1, -32
        slli    a3, a3, 2
        add     a3, a3, s0
        lw      a3, 0(a3)
        slli    t1, t1, 18
        addw    t1, t1, a3
        sw      t1, 4(a5)
        andi    a3, t2, 31
        andi    t2, t2, -32
        slli    a3, a3, 2
        add     a3, a3, s0
        lw      a3, 0(a3)
        slli    t2, t2, 18
        addw    t2, t2, a3
        sw      t2, 8(a5)
        andi    a3, t3, 31
        andi    t3, t3, -32
        slli    a3, a3, 2
        add     a3, a3, s0
        lw      a3, 0(a3)
        slli    t3, t3, 18
        addw    t3, t3, a3
        sw      t3, 12(a5)
        andi    a3, t4, 31
        andi    t4, t4, -32
        slli    a3, a3, 2
        add     a3, a3, s0
        lw      a3, 0(a3)
        slli    t4, t4, 18
        addw    t4, t4, a3
        sw      t4, 16(a5)
        andi    a3, t5, 31
        andi    t5, t5, -32
        slli    a3, a3, 2
        add     a3, a3, s0
        lw      a3, 0(a3)
        slli    t5, t5, 18
        addw    t5, t5, a3
        sw      t5, 20(a5)
        andi    a3, t6, 31
        andi    t6, t6, -32
        slli    a3, a3, 2
        add     a3, a3, s0
        lw      a3, 0(a3)
        slli    t6, t6, 18
        addw    t6, t6, a3
        sw      t6, 24(a5)
        andi    a3, a7, 31
        andi    a7, a7, -32
        slli    a3, a3, 2
        add     a3, a3, s0
        lw      a3, 0(a3)
        slli    a7, a7, 18
        addw    a7, a7, a3
        sw      a7, 28(a5)
        fsub.s  ft8, ft8, fs7
        fsub.s  ft9, ft9, fs7
        fsub.s  ft10, ft10, fs7
        fsub.s  ft11, ft11, fs7
        fsub.s  fa0, fa0, fs7
        fsub.s  fa1, fa1, fs7
        fsub.s  fa2, fa2, fs7
        fsub.s  fa3, fa3, fs7
        fnmsub.s ft8, ft8, fs8, ft0
        fnmsub.s ft9, ft9, fs8, ft1
        fnmsub.s ft10, ft10, fs8, ft2
        fnmsub.s ft11, ft11, fs8, ft3
        fnmsub.s fa0, fa0, fs8, ft4
        fnmsub.s fa1, fa1, fs8, ft5
        fnmsub.s fa2, fa2, fs8, ft6
        fnmsub.s fa3, fa3, fs8, ft7
        fmadd.s fa4, ft8, fs9, fs10
        fmadd.s fa5, ft9, fs9, fs10
        fmadd.s fa6, ft10, fs9, fs10
        fmadd.s fa7, ft11, fs9, fs10
        fmul.s  ft8, ft8, fa4
        fmul.s  ft9, ft9, fa5
        fmul.s  ft10, ft10, fa6
        fmul.s  ft11, ft11, fa7
        fmadd.s fa4, fa0, fs9, fs10
        fmadd.s fa5, fa1, fs9, fs10
        fmadd.s fa6, fa2, fs9, fs10
        fmadd.s fa7, fa3, fs9, fs10
        fmul.s  fa0, fa0, fa4
        fmul.s  fa1, fa1, fa5
        fmul.s  fa2, fa2, fa6
        fmul.s  fa3, fa3, fa7
        flw     ft0, 0(a5)
        flw     ft1, 4(a5)
        flw     ft2, 8(a5)
        flw     ft3, 12(a5)
        flw     ft4, 16(a5)
        flw     ft5, 20(a5)
        flw     ft6, 24(a5)
        flw     ft7, 28(a5)
        fmadd.s ft0, ft0, ft8, ft0
        fmadd.s ft1, ft1, ft9, ft1
        fmadd.s ft2, ft2, ft10, ft2
        fmadd.s ft3, ft3, ft11, ft3
        fmadd.s ft4, ft4, fa0, ft4
        fmadd.s ft5, ft5, fa1, ft5
        fmadd.s ft6, ft6, fa2, ft6
        fmadd.s ft7, ft7, fa3, ft7
        fadd.s  fs0, fs0, ft0
        fadd.s  fs1, fs1, ft1
        fadd.s  fs2, fs2, ft2
        fadd.s  fs3, fs3, ft3
        fadd.s  fs0, fs0, ft4
        fadd.s  fs1, fs1, ft5
        fadd.s  fs2, fs2, ft6
        fadd.s  fs3, fs3, ft7
        addi    s1, s1, 32
        fsw     ft0, 0(a5)
        fsw     ft1, 4(a5)
        fsw     ft2, 8(a5)
        fsw     ft3, 12(a5)
        fsw     ft4, 16(a5)
        fsw     ft5, 20(a5)
        fsw     ft6, 24(a5)
        fsw     ft7, 28(a5)
        flw     ft0, 0(s1)
        flw     ft1, 4(s1)
        flw     ft2, 8(s1)
        flw     ft3, 12(s1)
        flw     ft4, 16(s1)
        flw     ft5, 20(s1)
        flw     ft6, 24(s1)
        flw     ft7, 28(s1)
        addi    a5, a5, 32
        bltu    s1, a4, 3b
        fadd.s  fs0, fs0, fs1
        fadd.s  fs2, fs2, fs3
        fadd.s  fs0, fs0, fs2
        fdiv.s  fs0, fs10, fs0           # 1 / sum
        mv      a5, a1
        add     a3, a1, a6
        flw     ft0, 0(a5)
        flw     ft1, 4(a5)
        flw     ft2, 8(a5)
        flw     ft3, 12(a5)
        flw     ft4, 16(a5)
        flw     ft5, 20(a5)
        flw     ft6, 24(a5)
        flw     ft7, 28(a5)
4:
        fmul.s  ft8, ft0, fs0
        fmul.s  ft9, ft1, fs0
        fmul.s  ft10, ft2, fs0
        fmul.s  ft11, ft3, fs0
        fmul.s  fa0, ft4, fs0
        fmul.s  fa1, ft5, fs0
        fmul.s  fa2, ft6, fs0
        fmul.s  fa3, ft7, fs0
        flw     ft0, 32(a5)          # the next group, ahead of the stores
        flw     ft1, 36(a5)
        flw     ft2, 40(a5)
        flw     ft3, 44(a5)
        flw     ft4, 48(a5)
        flw     ft5, 52(a5)
        flw     ft6, 56(a5)
        flw     ft7, 60(a5)
        fsw     ft8, 0(a5)
        fsw     ft9, 4(a5)
        fsw     ft10, 8(a5)
        fsw     ft11, 12(a5)
        fsw     fa0, 16(a5)
        fsw     fa1, 20(a5)
        fsw     fa2, 24(a5)
        fsw     fa3, 28(a5)
        addi    a5, a5, 32
        bltu    a5, a3, 4b
        add     a0, a0, a6
        add     a1, a1, a6
        addi    a2, a2, -1
        bnez    a2, sm_row
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
        ld      s0, 88(sp)
        ld      s1, 96(sp)
        addi    sp, sp, 112
        ret

        .section .rodata
        .p2align 4
softmax_exp2_tab:
        # 2^(j/32), j = 0..31, as f32 bits
        .word   0x3f800000, 0x3f82cd87, 0x3f85aac3, 0x3f88980f, 0x3f8b95c2, 0x3f8ea43a, 0x3f91c3d3, 0x3f94f4f0
        .word   0x3f9837f0, 0x3f9b8d3a, 0x3f9ef532, 0x3fa27043, 0x3fa5fed7, 0x3fa9a15b, 0x3fad583f, 0x3fb123f6
        .word   0x3fb504f3, 0x3fb8fbaf, 0x3fbd08a4, 0x3fc12c4d, 0x3fc5672a, 0x3fc9b9be, 0x3fce248c, 0x3fd2a81e
        .word   0x3fd744fd, 0x3fdbfbb8, 0x3fe0ccdf, 0x3fe5b907, 0x3feac0c7, 0x3fefe4ba, 0x3ff5257d, 0x3ffa83b3
