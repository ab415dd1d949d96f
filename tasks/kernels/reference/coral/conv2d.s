# conv2d on coral (RV32IMF + Zve32x, VLEN = 128): y[CO, OH, OW] = sum over ci, ky, kx of
# x[ci, oy+ky, ox+kx] * w[co, ci, ky, kx], stride 1, no padding (OH = H-K+1, OW = W-K+1), int8
# inputs, int8 output requantised from the exact int32 sums: y = clamp((acc + 2^(s-1)) >> s, -128, 127)
# with s = 7 + (log2(CI * K * K) + 1) / 2 (tasks/level1/conv2d.yaml).
#
# Entry: a0 = x, a1 = w, a2 = y, a3 = CI, a4 = CO, a5 = H, a6 = W, a7 = K. CO must be even and
# W at most 32 (every configuration's are).
#
# Algorithm: outer products on the vector unit over whole input rows. For a block of R = 32 / W
# output rows, the sum over taps j = (ci, ky, kx) of w[co, j] * x[ci, oy0+ky .., kx ..] is a sum of
# scaled contiguous stretches of x: lane i of the stretch starting at x[ci, oy0+ky, kx] feeds
# output (oy0 + i / W, i % W); lanes with i % W >= OW are computed and dropped (W - OW of every W).
# A table of the taps' offsets ci*H*W + ky*W + kx is built on the stack once. Two output channels
# are computed together, sharing each stretch: one vle8 (e8 m2, vl = rows * W <= 32), two
# vwmul.vx by the scalar weights (lb; exact int16 products), two vwadd.wv into int32 accumulators
# (e32 m8: v0-v7, v8-v15; int16 cannot hold even two products of -128 * -128), the first tap with
# vwadd.vx (+0) instead of clearing. The block's sums are then requantised in the vector unit:
# vnclip.wx narrows int32 to int16 shifting right by s with the rounding of vxrm = 0 (rnu: adds the
# last bit shifted out, exactly round half up) and saturating, vnclip.wi by 0 saturates int16 to
# int8 (e32 m8 -> e16 m4 -> e8 m2 keeps vl). Each output row is stored with vse8 (vl = OW) after a
# vslidedown.vx brings its lanes to the front. The vector multiplier bounds the tap loop.
# The tap loop is software-pipelined for the in-order issue: the next tap's loads, weights and
# offsets (read two taps ahead from a table padded with two zero offsets) issue while the
# multiplier works, so the vector multiplier is the bound.
        .text
        .globl conv2d
conv2d:
        csrwi   vxrm, 0                 # fixed-point rounding: round to nearest, half up (rnu)
        addi    sp, sp, -48
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
        sub     s0, a5, a7
        addi    s0, s0, 1               # s0 = OH
        sub     s1, a6, a7
        addi    s1, s1, 1               # s1 = OW
        mul     t0, a7, a7
        mul     s2, a3, t0              # s2 = J = CI*K*K taps
        li      t0, 32
        divu    s3, t0, a6              # s3 = R = 32 / W rows per block
        slli    t0, s2, 2
        addi    t0, t0, 8+15            # (two padding entries: the loop reads two taps ahead)
        andi    t0, t0, -16
        sub     sp, sp, t0              # the tap table
        mv      s9, t0                  # s9 = its size (to pop)
        mv      s4, sp                  # s4 = off[]
        mul     t1, a5, a6              # t1 = H*W: one input channel
        mv      t2, s4                  # write pointer
        mv      t3, zero                # t3 = ci*H*W
        mv      t4, a3                  # ci left
cv_t_ci:
        mv      t5, t3                  # t5 = ci*H*W + ky*W
        mv      t6, a7                  # ky left
cv_t_ky:
        mv      s5, t5
        mv      s6, a7                  # kx left
cv_t_kx:
        sw      s5, 0(t2)
        addi    t2, t2, 4
        addi    s5, s5, 1
        addi    s6, s6, -1
        bnez    s6, cv_t_kx
        add     t5, t5, a6
        addi    t6, t6, -1
        bnez    t6, cv_t_ky
        add     t3, t3, t1
        addi    t4, t4, -1
        bnez    t4, cv_t_ci
        mv      s5, t2                  # s5 = end of off[]
        sw      zero, 0(t2)             # the padding: offset 0, a valid address
        sw      zero, 4(t2)
        clz     a7, s2                  # (K is not needed any more)
        li      t0, 32
        sub     a7, t0, a7              # log2(J) + 1 = 32 - clz(J)
        srli    a7, a7, 1
        addi    a7, a7, 7               # a7 = s = 7 + (log2(CI*K*K) + 1) / 2
        mul     s8, s0, s1              # s8 = OH*OW: one output channel (int8)
        mv      s7, s1                  # s7 = OW: one output row
        srli    s6, a4, 1               # s6 = channel pairs left
cv_co:
        mv      s10, zero               # s10 = oy0
        mv      s11, a2                 # s11 = y[co, oy0, 0]
cv_blk:
        sub     t0, s0, s10             # rows left
        mv      a5, s3
        bleu    a5, t0, 1f
        mv      a5, t0                  # a5 = rows in this block = min(R, OH - oy0)
1:      mul     a3, a5, a6              # a3 = vl = rows * W
        mul     a4, s10, a6
        add     a4, a4, a0              # a4 = x[0, oy0, 0]
        mv      t4, a1                  # t4 = w[co, j]
        add     t5, a1, s2              # t5 = w[co+1, j]
        mv      t6, s4                  # t6 = off[j]
        lw      t1, 0(t6)
        lb      t2, 0(t4)
        lb      t3, 0(t5)
        add     t1, t1, a4
        vsetvli zero, a3, e8, m2, ta, ma
        vle8.v  v24, (t1)
        lw      t1, 4(t6)
        vwmul.vx v16, v24, t2
        add     t1, t1, a4
        lb      t2, 1(t4)
        vwmul.vx v20, v24, t3
        vle8.v  v24, (t1)               # the next tap's stretch, right after the register's last use
        lb      t3, 1(t5)
        lw      t1, 8(t6)               # the offset two taps ahead
        vsetvli zero, zero, e16, m4, ta, ma
        vwadd.vx v0, v16, zero          # acc = widen(product): no clearing pass
        vwadd.vx v8, v20, zero
        addi    t4, t4, 1
        addi    t5, t5, 1
        addi    t6, t6, 4
        bgeu    t6, s5, 3f
2:      vsetvli zero, zero, e8, m2, ta, ma
        vwmul.vx v16, v24, t2
        add     t1, t1, a4              # while the multiplier works: the next tap's address,
        lb      t2, 1(t4)               # its weight for channel co,
        lw      t0, 8(t6)               # the offset two taps ahead
        addi    t4, t4, 1
        addi    t5, t5, 1
        addi    t6, t6, 4
        vwmul.vx v20, v24, t3
        vle8.v  v24, (t1)               # the next tap's stretch (v24's last use is behind us)
        lb      t3, 0(t5)
        mv      t1, t0
        vsetvli zero, zero, e16, m4, ta, ma
        vwadd.wv v0, v0, v16
        vwadd.wv v8, v8, v20
        bltu    t6, s5, 2b
3:      vnclip.wx v16, v0, a7           # (e16 m4, vl = rows * W) int32 -> int16: (acc + 2^(s-1)) >> s
        vnclip.wx v20, v8, a7
        vsetvli zero, zero, e8, m2, ta, ma
        vnclip.wi v16, v16, 0           # int16 -> int8: saturate to [-128, 127]
        vnclip.wi v20, v20, 0
        vsetvli zero, s1, e8, m2, ta, ma
        add     t2, s11, s8             # y[co+1, oy0, 0]
        vse8.v  v16, (s11)
        vse8.v  v20, (t2)
        mv      t1, s11
        mv      t3, zero                # lane offset r*W
        addi    t0, a5, -1              # rows after the first
        beqz    t0, 5f
4:      add     t3, t3, a6
        add     t1, t1, s7
        add     t2, t2, s7
        vslidedown.vx v24, v16, t3
        vse8.v  v24, (t1)
        vslidedown.vx v26, v20, t3
        vse8.v  v26, (t2)
        addi    t0, t0, -1
        bnez    t0, 4b
5:      add     s10, s10, a5
        mul     t0, a5, s7
        add     s11, s11, t0
        bltu    s10, s0, cv_blk
        slli    t0, s2, 1
        add     a1, a1, t0              # next channel pair of w
        slli    t0, s8, 1
        add     a2, a2, t0              # and of y
        addi    s6, s6, -1
        bnez    s6, cv_co
        add     sp, sp, s9
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
        addi    sp, sp, 48
        ret
