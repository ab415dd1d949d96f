# depthwise_conv on coral (RV32IMF + Zve32x, VLEN = 128): y[c, oy, ox] = sum over ky, kx of
# x[c, oy+ky, ox+kx] * w[c, ky, kx], stride 1, no padding (OH = H-K+1, OW = W-K+1), int8 inputs,
# int8 output requantised from the exact int32 sums: y = clamp((acc + 2^(s-1)) >> s, -128, 127) with
# s = 7 + (log2(K * K) + 1) / 2 (tasks/level1/depthwise_conv.yaml).
#
# Entry: a0 = x, a1 = w, a2 = y, a3 = C, a4 = H, a5 = W, a6 = K. C must be even and W at most 32
# (every configuration's are).
#
# Algorithm: outer products on the vector unit over whole input rows. For a block of R = 32 / W
# output rows of channel c, the sum over taps (ky, kx) of w[c, ky, kx] * x[c, oy0+ky .., kx ..] is a
# sum of scaled contiguous stretches of x: lane i of the stretch starting at x[c, oy0+ky, kx] feeds
# output (oy0 + i / W, i % W); lanes with i % W >= OW are computed and dropped. A table of the taps'
# offsets ky*W + kx is built on the stack once. Two channels go together so that the two vector
# ALUs and the multiplier stay busy: per tap two vle8 (e8 m2, vl = rows * W <= 32), two vwmul.vx by
# the scalar weights (lb; exact int16 products), two vwadd.wv into int32 accumulators (e32 m8:
# v0-v7, v8-v15; int16 cannot hold even two products of -128 * -128), the first tap with vwadd.vx
# (+0) instead of clearing. The block's sums are then requantised in the vector unit: vnclip.wx
# narrows int32 to int16 shifting right by s with the rounding of vxrm = 0 (rnu: adds the last bit
# shifted out, exactly round half up) and saturating, vnclip.wi by 0 saturates int16 to int8
# (e32 m8 -> e16 m4 -> e8 m2 keeps vl). Each output row is stored with vse8 (vl = OW) after a
# vslidedown.vx brings its lanes to the front.
# The tap loop is software-pipelined for the in-order issue: the next tap's loads, weights and
# offsets (read two taps ahead from a table padded with two zero offsets) issue while the
# multiplier works, so the vector multiplier is the bound.
        .text
        .globl depthwise_conv
depthwise_conv:
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
        sub     s0, a4, a6
        addi    s0, s0, 1               # s0 = OH
        sub     s1, a5, a6
        addi    s1, s1, 1               # s1 = OW
        mul     s2, a6, a6              # s2 = K*K taps
        li      t0, 32
        divu    s3, t0, a5              # s3 = R = 32 / W rows per block
        slli    t0, s2, 2
        addi    t0, t0, 8+15            # (two padding entries: the loop reads two taps ahead)
        andi    t0, t0, -16
        sub     sp, sp, t0              # the tap table
        mv      s4, sp                  # s4 = off[]
        mv      t2, s4                  # write pointer
        mv      t5, zero                # t5 = ky*W
        mv      t6, a6                  # ky left
dw_t_ky:
        mv      s5, t5
        mv      s6, a6                  # kx left
dw_t_kx:
        sw      s5, 0(t2)
        addi    t2, t2, 4
        addi    s5, s5, 1
        addi    s6, s6, -1
        bnez    s6, dw_t_kx
        add     t5, t5, a5
        addi    t6, t6, -1
        bnez    t6, dw_t_ky
        mv      s5, t2                  # s5 = end of off[]
        sw      zero, 0(t2)             # the padding: offset 0, a valid address
        sw      zero, 4(t2)
        clz     s9, s2
        li      t0, 32
        sub     s9, t0, s9              # log2(K*K) + 1 = 32 - clz(K*K)
        srli    s9, s9, 1
        addi    s9, s9, 7               # s9 = s = 7 + (log2(K*K) + 1) / 2
        mul     s8, s0, s1              # s8 = OH*OW: one output channel (int8)
        mv      s7, s1                  # s7 = OW: one output row
        mul     a7, a4, a5              # a7 = H*W: one input channel
        srli    s6, a3, 1               # s6 = channel pairs left
dw_c:
        mv      s10, zero               # s10 = oy0
        mv      s11, a2                 # s11 = y[c, oy0, 0]
dw_blk:
        sub     t0, s0, s10             # rows left
        mv      a4, s3
        bleu    a4, t0, 1f
        mv      a4, t0                  # a4 = rows in this block = min(R, OH - oy0)
1:      mul     a3, a4, a5              # a3 = vl = rows * W
        mul     a6, s10, a5
        add     a6, a6, a0              # a6 = x[c, oy0, 0]
        add     t0, a6, a7              # t0 = x[c+1, oy0, 0]
        mv      t4, a1                  # t4 = w[c, j]
        add     t5, a1, s2              # t5 = w[c+1, j]
        mv      t6, s4                  # t6 = off[j]
        lw      t1, 0(t6)
        lb      t2, 0(t4)
        lb      t3, 0(t5)
        add     s1, t1, t0
        add     t1, t1, a6
        vsetvli zero, a3, e8, m2, ta, ma
        vle8.v  v24, (t1)
        vle8.v  v26, (s1)
        lw      t1, 4(t6)
        vwmul.vx v16, v24, t2
        add     s1, t1, t0
        add     t1, t1, a6
        vle8.v  v24, (t1)               # the next tap's rows, each right after its register's last use
        lb      t2, 1(t4)
        vwmul.vx v20, v26, t3
        vle8.v  v26, (s1)
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
        add     s1, t1, t0              # while the multiplier works: the next tap's addresses,
        add     t1, t1, a6
        lb      t2, 1(t4)               # its weight for channel c,
        vle8.v  v24, (t1)               # its row of channel c (v24's last use is behind us),
        lw      t1, 8(t6)               # the offset two taps ahead
        addi    t4, t4, 1
        addi    t5, t5, 1
        addi    t6, t6, 4
        vwmul.vx v20, v26, t3
        vle8.v  v26, (s1)
        lb      t3, 0(t5)
        vsetvli zero, zero, e16, m4, ta, ma
        vwadd.wv v0, v0, v16
        vwadd.wv v8, v8, v20
        bltu    t6, s5, 2b
3:      vnclip.wx v16, v0, s9           # (e16 m4, vl = rows * W) int32 -> int16: (acc + 2^(s-1)) >> s
        vnclip.wx v20, v8, s9
        vsetvli zero, zero, e8, m2, ta, ma
        vnclip.wi v16, v16, 0           # int16 -> int8: saturate to [-128, 127]
        vnclip.wi v20, v20, 0
        vsetvli zero, s7, e8, m2, ta, ma  # vl = OW (s1 held a pointer above)
        add     t2, s11, s8             # y[c+1, oy0, 0]
        vse8.v  v16, (s11)
        vse8.v  v20, (t2)
        mv      t1, s11
        mv      t3, zero                # lane offset r*W
        addi    t0, a4, -1              # rows after the first
        beqz    t0, 5f
4:      add     t3, t3, a5
        add     t1, t1, s7
        add     t2, t2, s7
        vslidedown.vx v24, v16, t3
        vse8.v  v24, (t1)
        vslidedown.vx v26, v20, t3
        vse8.v  v26, (t2)
        addi    t0, t0, -1
        bnez    t0, 4b
5:      add     s10, s10, a4
        mul     t0, a4, s7
        add     s11, s11, t0
        bltu    s10, s0, dw_blk
        slli    t0, s2, 1
        add     a1, a1, t0              # next channel pair of w
        slli    t0, s8, 1
        add     a2, a2, t0              # and of y
        slli    t0, a7, 1
        add     a0, a0, t0              # and of x
        addi    s6, s6, -1
        bnez    s6, dw_c
        slli    t0, s2, 2               # pop the tap table (its size as allocated)
        addi    t0, t0, 8+15
        andi    t0, t0, -16
        add     sp, sp, t0
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
