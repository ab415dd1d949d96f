# conv_block on coral (RV32IMF + Zve32x, VLEN = 128): y[co, i, j] = max(conv[co, i, j] * bn[0, co] +
# bn[1, co], 0), conv = 2-D convolution (3x3, stride 1, no padding) of x[CI, H, W] (int8) with
# w[CO, CI, 3, 3] (int8), exact int32 sums; bn[2, CO] and y[CO, H-2, W-2] f32; row-major.
#
# Entry: a0 = x, a1 = w, a2 = bn, a3 = y, a4 = CI, a5 = CO, a6 = H, a7 = W. CO must be even (every
# configuration's is: 4..16); CI >= 1, H and W >= 3.
#
# Algorithm. (1) Convolution on the vector unit, two output channels at a time, over the output
# plane flattened with the input's row stride: lane p = oh*W + ow (p < L = (OH-1)*W + OW; lanes
# with ow >= OW are computed and dropped), so the taps of all output rows are contiguous stretches
# of x: lane p of tap (ci, kh, kw) reads x[ci*H*W + kh*W + kw + p]. Blocks of 32 lanes (int32
# accumulators e32 m8: v0-v7, v8-v15); per tap one vle8 (e8 m2) shared by both channels, two
# vwmul.vx by the scalar weights (lb; exact int16 products) and two vwadd.wv into the int32
# accumulators (int16 cannot hold even two products of -128 * -128); the first tap widens with
# vwadd.vx (+0) instead of clearing. The vector multiplier (8 int8 products a cycle: a vwmul takes
# 4 cycles for 32 lanes) is the bound: 8 cycles a tap for both channels. The tap loop is rotated
# so that its taken branch issues while the multiplier is busy (the penalty is hidden), the next
# tap's offset and weights loaded (lw, lb) between the vector instructions; the offsets come from
# a table built on the stack once (two zero entries past the end for the last tap's look-ahead).
# Each block's sums go to an int32 plane per channel on the stack (vse32).
# (2) Batch norm on the scalar F unit (the vector unit has no floating point), in place over the
# planes: float(acc) * bn[0, co] + bn[1, co] by fcvt.s.w and one fmadd.s (f32, as the reference
# rounds). It runs as a 4-stage stream over lane r of both planes (store r-3, fmadd r-2, fcvt
# r-1, load r: each stage reads what the previous one wrote a step earlier), one step inside
# each tap of the next block's convolution (loop A, as many taps as stored lanes wait), in the
# cycles the in-order core would otherwise spend waiting for the multiplier, so it costs
# nothing there; the lanes left at the end of a channel pair (the last block's, and all a short
# tap loop could not take) go through the same stream alone. 16 bytes before each plane take the
# stream's first three (empty) stores.
# (3) ReLU on the vector unit while the valid lanes of each row go to y: vle32, vmax.vx with 0 (a
# negative float is a negative int32, so the max gives +0.0 and leaves positive floats alone),
# vse32.

        .text
        .globl conv_block
conv_block:
        addi    sp, sp, -64
        sw      ra, 0(sp)
        sw      s0, 4(sp)
        sw      s1, 8(sp)
        sw      s2, 12(sp)
        sw      s3, 16(sp)
        sw      s4, 20(sp)
        sw      s5, 24(sp)
        sw      s6, 28(sp)
        sw      s7, 32(sp)
        sw      s8, 36(sp)
        sw      s9, 40(sp)
        sw      s10, 44(sp)
        sw      s11, 48(sp)
        fsw     f8, 52(sp)
        fsw     f9, 56(sp)
        addi    s0, a6, -2              # s0 = OH
        addi    s1, a7, -2              # s1 = OW
        li      t0, 9
        mul     s2, a4, t0              # s2 = J = CI*9 taps
        addi    t0, s0, -1
        mul     s3, t0, a7
        add     s3, s3, s1              # s3 = L = (OH-1)*W + OW lanes
        # the tap table off[t] = ci*H*W + kh*W + kw, on the stack
        addi    t0, s2, 2
        slli    t0, t0, 2
        addi    t0, t0, 15
        andi    t0, t0, -16
        sub     sp, sp, t0
        mv      s4, sp                  # s4 = off[] (J entries, then two zeros)
        mul     t1, a6, a7              # t1 = H*W
        mv      t2, s4
        mv      t3, zero                # ci*H*W
        mv      t4, a4
cb_t_ci:
        mv      t5, t3
        li      t6, 3
cb_t_kh:
        sw      t5, 0(t2)
        addi    s5, t5, 1
        sw      s5, 4(t2)
        addi    s5, t5, 2
        sw      s5, 8(t2)
        addi    t2, t2, 12
        add     t5, t5, a7
        addi    t6, t6, -1
        bnez    t6, cb_t_kh
        add     t3, t3, t1
        addi    t4, t4, -1
        bnez    t4, cb_t_ci
        mv      s5, t2                  # s5 = off[J]
        sw      zero, 0(t2)
        sw      zero, 4(t2)
        # two int32 planes of L lanes (rounded up to groups of 8) for a channel pair
        addi    s6, s3, 7
        andi    s6, s6, -8
        slli    s6, s6, 2
        addi    s6, s6, 16              # s6 = a plane's stride: L lanes rounded up to 8, then 16 bytes
        slli    t0, s6, 1
        sub     sp, sp, t0
        addi    s7, sp, 16              # s7 = plane of co after a 16-byte pad; s7 + s6: co + 1
        addi    sp, sp, -16             # 0(sp): channel pairs left (ra is loop A's bound below)
        mv      s8, a1                  # s8 = w[co]
        mv      s9, a3                  # s9 = y[co]
        mv      s10, a2                 # s10 = bn[0, co]
        slli    s11, a5, 2              # s11 = CO*4: bn[1, co] = bn[0, co] + CO*4
        srli    ra, a5, 1               # ra = channel pairs left
        sw      ra, 0(sp)
        mv      a3, a0                  # a3 = x (a0 is needed below)
cb_pair:
        flw     f4, 0(s10)              # f4, f5 = bn[0, co], bn[1, co]; f6, f7 for co + 1
        add     t0, s10, s11
        flw     f5, 0(t0)
        flw     f6, 4(s10)
        flw     f7, 4(t0)
        mv      a0, s7                  # a0, a1: lane r of the two planes, batch norm's stream
        add     a1, s7, s6
        mv      a2, zero                # a2 = p0, the block's first lane
cb_blk:
        sub     t0, s3, a2
        vsetvli a5, t0, e8, m2, ta, ma  # a5 = vl = min(L - p0, 32)
        add     a4, a3, a2              # a4 = x + p0
        mv      t4, s8                  # t4 = w[co, t]
        add     t5, s8, s2              # t5 = w[co+1, t]
        mv      t6, s4                  # t6 = off[t]
        lw      t1, 0(t6)
        lb      t2, 0(t4)
        lb      t3, 0(t5)
        add     t1, t1, a4
        vle8.v  v24, (t1)               # X(0)
        vwmul.vx v16, v24, t2           # A(0): int16 products
        lw      t1, 4(t6)
        lb      t2, 1(t4)
        vwmul.vx v20, v24, t3           # B(0)
        lb      t3, 1(t5)
        vsetvli zero, zero, e16, m4, ta, ma
        vwadd.vx v0, v16, zero          # the int32 sums start as the widened products: no clearing
        vwadd.vx v8, v20, zero
        add     t1, t1, a4
        vsetvli zero, zero, e8, m2, ta, ma
        vle8.v  v24, (t1)               # X(1)
        vwmul.vx v16, v24, t2           # A(1)
        lw      t1, 8(t6)
        lb      t2, 2(t4)
        addi    t4, t4, 1
        addi    t5, t5, 1
        addi    t6, t6, 4
        # loop A runs while stored lanes wait for batch norm: min(J-1, p0 - r) taps
        slli    ra, a2, 2
        add     ra, ra, s7
        sub     ra, ra, a0              # (p0 - r) * 4
        sub     t0, s5, t6              # (J - 1) * 4
        minu    ra, ra, t0
        add     ra, ra, t6              # ra = loop A's bound on t6
        bgeu    t6, ra, 5f
        # tap t >= 1 (A(t) issued; t3 = w[co+1, t], t2 = w[co, t+1], t1 = off[t+1]), rotated so that
        # the taken branch issues while the multiplier works on A(t+1): its penalty is hidden.
        # Loop A also moves batch norm one lane pair along (4 stages, a lane each: store r-3,
        # fmadd r-2, fcvt r-1, load r) in the cycles the multiplier leaves the scalar side idle.
4:      vwmul.vx v20, v24, t3           # B(t)
        lb      t3, 1(t5)
        vsetvli zero, zero, e16, m4, ta, ma
        addi    t5, t5, 1
        vwadd.wv v0, v0, v16
        fsw     f2, -12(a0)             # lane r-3
        vwadd.wv v8, v8, v20
        fmadd.s f2, f0, f4, f5          # lane r-2
        fsw     f3, -12(a1)
        fmadd.s f3, f1, f6, f7
        add     t1, t1, a4
        addi    t4, t4, 1
        fcvt.s.w f0, a6                 # lane r-1
        lw      a6, 0(a0)               # lane r
        addi    t6, t6, 4
        vsetvli zero, zero, e8, m2, ta, ma
        vle8.v  v24, (t1)               # X(t+1)
        fcvt.s.w f1, a7
        vwmul.vx v16, v24, t2           # A(t+1)
        lw      a7, 0(a1)
        lw      t1, 4(t6)
        lb      t2, 1(t4)
        addi    a0, a0, 4
        addi    a1, a1, 4
        bltu    t6, ra, 4b
5:      bgeu    t6, s5, 3f
2:      vwmul.vx v20, v24, t3           # B(t)
        lb      t3, 1(t5)
        vsetvli zero, zero, e16, m4, ta, ma
        vwadd.wv v0, v0, v16
        vwadd.wv v8, v8, v20
        add     t1, t1, a4
        addi    t4, t4, 1
        addi    t5, t5, 1
        addi    t6, t6, 4
        vsetvli zero, zero, e8, m2, ta, ma
        vle8.v  v24, (t1)               # X(t+1) (at t = J-1: off[J] = 0, harmless)
        vwmul.vx v16, v24, t2           # A(t+1) (unused at t = J-1)
        lw      t1, 4(t6)
        lb      t2, 1(t4)
        bltu    t6, s5, 2b
3:      vsetvli zero, a5, e32, m8, ta, ma
        slli    t0, a2, 2
        add     t0, t0, s7
        vse32.v v0, (t0)
        add     t0, t0, s6
        vse32.v v8, (t0)
        add     a2, a2, a5
        bltu    a2, s3, cb_blk
        # batch norm's stream to the end: lanes r .. L-1, and three more steps to drain its stages
        addi    t0, s3, 3
        slli    t0, t0, 2
        add     t0, t0, s7              # the load stage's end: lane L + 3
6:      fsw     f2, -12(a0)
        fmadd.s f2, f0, f4, f5
        fsw     f3, -12(a1)
        fmadd.s f3, f1, f6, f7
        fcvt.s.w f0, a6
        lw      a6, 0(a0)
        fcvt.s.w f1, a7
        lw      a7, 0(a1)
        addi    a0, a0, 4
        addi    a1, a1, 4
        bltu    a0, t0, 6b
        # ReLU and the valid lanes: row oh of each plane (lanes oh*W .. oh*W + OW-1) to y[co, oh]
        mv      t0, s7                  # source row
        mv      t1, s9                  # y[co, 0]
        addi    t3, s1, 2
        slli    t3, t3, 2               # W*4
        slli    t4, s1, 2               # OW*4
        li      t5, 2
cb_cp_c:
        mv      t6, s0                  # rows left
        mv      a0, t0
cb_cp_r:
        mv      a1, a0
        mv      a2, t1
        mv      a4, s1                  # columns left
4:      vsetvli a5, a4, e32, m8, ta, ma
        vle32.v v0, (a1)
        vmax.vx v0, v0, zero            # a negative float is a negative int32: max with 0 gives +0.0
        vse32.v v0, (a2)
        sub     a4, a4, a5
        slli    a5, a5, 2
        add     a1, a1, a5
        add     a2, a2, a5
        bnez    a4, 4b
        add     a0, a0, t3
        add     t1, t1, t4
        addi    t6, t6, -1
        bnez    t6, cb_cp_r
        add     t0, t0, s6              # the next plane; t1 is already at y[co+1]
        addi    t5, t5, -1
        bnez    t5, cb_cp_c
        mv      s9, t1                  # y[co + 2]
        slli    t0, s2, 1
        add     s8, s8, t0              # w[co + 2]
        addi    s10, s10, 8             # bn[0, co + 2]
        lw      ra, 0(sp)
        addi    ra, ra, -1
        sw      ra, 0(sp)
        beqz    ra, cb_done
        j       cb_pair
cb_done:
        slli    t0, s6, 1
        addi    t0, t0, 16
        add     sp, sp, t0
        addi    t0, s2, 2
        slli    t0, t0, 2
        addi    t0, t0, 15
        andi    t0, t0, -16
        add     sp, sp, t0
        lw      ra, 0(sp)
        lw      s0, 4(sp)
        lw      s1, 8(sp)
        lw      s2, 12(sp)
        lw      s3, 16(sp)
        lw      s4, 20(sp)
        lw      s5, 24(sp)
        lw      s6, 28(sp)
        lw      s7, 32(sp)
        lw      s8, 36(sp)
        lw      s9, 40(sp)
        lw      s10, 44(sp)
        lw      s11, 48(sp)
        flw     f8, 52(sp)
        flw     f9, 56(sp)
        addi    sp, sp, 64
        ret
