# relu on boom (RV64IMFD, out of order): y[i] = max(x[i], 0) for f32 x[N].
#
# Entry: a0 = x, a1 = y, a2 = N.
#
# Algorithm. A float is negative exactly when its sign bit is set, and relu maps it to +0, so the
# kernel never touches the FP pipe: it loads two floats at a time as one 64-bit integer (ld), takes
# the two sign bits to bit 0 of each 32-bit lane ((w >> 31) & 0x100000001), turns them into
# per-lane masks with one multiply by 0xffffffff (the pipelined multiplier, not an ALU), and clears
# the negative lanes (w ^ (w & mask)). -0.0 becomes +0.0, which relu allows. Per pair: ld, sd and
# five ALU/MUL operations, so one memory operation per element instead of the two (flw + fsw) of a
# scalar fmax.s loop; the main loop handles 16 floats (8 independent pairs) per iteration, all loads
# before all stores, and a scalar fmax.s loop finishes the N mod 16 tail.
        .text
        .globl relu
relu:
        addi    sp, sp, -32
        sd      s2, 0(sp)
        sd      s3, 8(sp)
        sd      s4, 16(sp)
        sd      s5, 24(sp)
        srli    t0, a2, 4               # t0 = N / 16 iterations
        andi    a2, a2, 15              # a2 = tail elements
        li      t1, 1
        slli    t1, t1, 32
        addi    t1, t1, 1               # t1 = 0x0000000100000001: the lanes' bit 0
        li      t2, -1
        srli    t2, t2, 32              # t2 = 0x00000000ffffffff
        beqz    t0, 2f
        addi    sp, sp, -32
        sd      s6, 0(sp)
        sd      s7, 8(sp)
        sd      s8, 16(sp)
1:
        ld      a3, 0(a0)
        ld      a4, 8(a0)
        ld      a5, 16(a0)
        ld      a6, 24(a0)
        ld      a7, 32(a0)
        ld      s2, 40(a0)
        ld      s3, 48(a0)
        ld      s4, 56(a0)
        srli    t3, a3, 31
        srli    t4, a4, 31
        srli    t5, a5, 31
        srli    t6, a6, 31
        srli    s5, a7, 31
        srli    s6, s2, 31
        srli    s7, s3, 31
        srli    s8, s4, 31
        and     t3, t3, t1
        and     t4, t4, t1
        and     t5, t5, t1
        and     t6, t6, t1
        and     s5, s5, t1
        and     s6, s6, t1
        and     s7, s7, t1
        and     s8, s8, t1
        mul     t3, t3, t2
        mul     t4, t4, t2
        mul     t5, t5, t2
        mul     t6, t6, t2
        mul     s5, s5, t2
        mul     s6, s6, t2
        mul     s7, s7, t2
        mul     s8, s8, t2
        and     t3, t3, a3
        and     t4, t4, a4
        and     t5, t5, a5
        and     t6, t6, a6
        and     s5, s5, a7
        and     s6, s6, s2
        and     s7, s7, s3
        and     s8, s8, s4
        xor     a3, a3, t3
        xor     a4, a4, t4
        xor     a5, a5, t5
        xor     a6, a6, t6
        xor     a7, a7, s5
        xor     s2, s2, s6
        xor     s3, s3, s7
        xor     s4, s4, s8
        sd      a3, 0(a1)
        sd      a4, 8(a1)
        sd      a5, 16(a1)
        sd      a6, 24(a1)
        sd      a7, 32(a1)
        sd      s2, 40(a1)
        sd      s3, 48(a1)
        sd      s4, 56(a1)
        addi    a0, a0, 64
        addi    a1, a1, 64
        addi    t0, t0, -1
        bnez    t0, 1b
        ld      s6, 0(sp)
        ld      s7, 8(sp)
        ld      s8, 16(sp)
        addi    sp, sp, 32
2:      beqz    a2, 4f
        fmv.w.x ft1, zero
3:      flw     ft0, 0(a0)
        fmax.s  ft0, ft0, ft1
        fsw     ft0, 0(a1)
        addi    a0, a0, 4
        addi    a1, a1, 4
        addi    a2, a2, -1
        bnez    a2, 3b
4:      ld      s2, 0(sp)
        ld      s3, 8(sp)
        ld      s4, 16(sp)
        ld      s5, 24(sp)
        addi    sp, sp, 32
        ret
