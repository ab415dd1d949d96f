# depthwise_conv on boom (RV64IMFD, out of order): y[c, oy, ox] = sum over ky, kx of
# x[c, oy+ky, ox+kx] * w[c, ky, kx], stride 1, no padding, OH = H-K+1, OW = W-K+1, f32.
#
# Entry: a0 = x, a1 = w, a2 = y, a3 = C, a4 = H, a5 = W, a6 = K. Needs OH >= 2 and OW >= 4
# (every configuration has OH = OW >= 6).
#
# Algorithm: a tile of 2 output rows x 4 output columns lives in 8 FP registers.
# K = 3 (every configuration) has its own path: the channel's 9 weights stay in registers, and each
# of the tile's 4 input rows is loaded once (6 values) and feeds every tap that touches it: 24
# loads and 72 FMAs per tile (the first product of each output by fmul), so the one FP pipe is the
# bound: one FMA a cycle, the roofline.
# Any other K takes the general path: the K*K taps run
# as one flat loop (a short kx loop would pay a mispredicted exit every row of taps) over a table
# of byte offsets (ky*W + kx)*4 built on the stack; the next tap's offset is loaded a step ahead.
# Every tap loads its weight and the 8 inputs under the tile (two row pointers, immediate offsets)
# and issues 8 independent fmadd.s: about 10 memory operations per 8 multiply-adds, so the one
# memory port bounds the kernel. A row or column count that is not a multiple of the tile ends
# with a tile shifted back to OH-2 / OW-4 (it recomputes a few outputs with identical values).
# Sums are f32 in tap order.
        .text
        .globl depthwise_conv
depthwise_conv:
        addi    sp, sp, -64
        sd      s0, 0(sp)
        sd      s1, 8(sp)
        sd      s2, 16(sp)
        sd      s3, 24(sp)
        sd      s4, 32(sp)
        sd      s5, 40(sp)
        sd      s6, 48(sp)
        sd      s7, 56(sp)
        sub     t0, a4, a6
        addi    s0, t0, 1               # s0 = OH
        sub     t1, a5, a6
        addi    s1, t1, 1               # s1 = OW
        slli    t2, a5, 2               # t2 = W*4: input row stride
        mul     t4, a4, t2              # t4 = H*W*4: one input channel
        mul     t5, a6, a6
        slli    t5, t5, 2               # t5 = K*K*4: one channel of w, and the tap table
        slli    t6, s1, 2               # t6 = OW*4: output row stride
        addi    a7, s0, -2              # a7 = OH-2: the last tile's row
        addi    a4, s1, -4              # a4 = OW-4: the last tile's column
        mul     a5, s0, t6              # a5 = OH*OW*4: one output channel
        li      t0, 3
        beq     a6, t0, dw3             # the 3x3 fast path
        addi    t0, t5, 15
        andi    s7, t0, -16             # s7 = the tap table's bytes, 16-aligned
        sub     sp, sp, s7
        mv      t0, sp                  # t0 = table write pointer
        mv      t1, zero                # t1 = ky*W*4
        mv      s2, a6                  # ky left
dw_tky:
        mv      s3, t1
        mv      s4, a6                  # kx left
dw_tkx:
        sw      s3, 0(t0)
        addi    t0, t0, 4
        addi    s3, s3, 4
        addi    s4, s4, -1
        bnez    s4, dw_tkx
        add     t1, t1, t2
        addi    s2, s2, -1
        bnez    s2, dw_tky
        mv      s6, t0                  # s6 = end of the tap table
dw_c:
        mv      s2, zero                # s2 = oy
dw_oy:
        ble     s2, a7, 1f
        mv      s2, a7
1:      mv      s3, zero                # s3 = ox
dw_ox:
        ble     s3, a4, 2f
        mv      s3, a4
2:      mul     t0, s2, t2
        slli    t1, s3, 2
        add     t0, t0, t1
        add     t0, t0, a0              # t0 = x[c, oy, ox]
        add     t1, t0, t2              # t1 = x[c, oy+1, ox]
        mv      s4, a1                  # s4 = w[c, tap]
        mv      s5, sp                  # s5 = off[tap]
        fmv.w.x fa0, zero
        fmv.w.x fa1, zero
        fmv.w.x fa2, zero
        fmv.w.x fa3, zero
        fmv.w.x fa4, zero
        fmv.w.x fa5, zero
        fmv.w.x fa6, zero
        fmv.w.x fa7, zero
        lw      t3, 0(s5)
dw_j:
        addi    s5, s5, 4
        add     a6, t0, t3
        add     s7, t1, t3
        lw      t3, 0(s5)               # the next tap's offset (one past the end: harmless)
        flw     ft8, 0(s4)
        flw     ft0, 0(a6)
        flw     ft1, 4(a6)
        flw     ft2, 8(a6)
        flw     ft3, 12(a6)
        flw     ft4, 0(s7)
        flw     ft5, 4(s7)
        flw     ft6, 8(s7)
        flw     ft7, 12(s7)
        fmadd.s fa0, ft8, ft0, fa0
        fmadd.s fa1, ft8, ft1, fa1
        fmadd.s fa2, ft8, ft2, fa2
        fmadd.s fa3, ft8, ft3, fa3
        fmadd.s fa4, ft8, ft4, fa4
        fmadd.s fa5, ft8, ft5, fa5
        fmadd.s fa6, ft8, ft6, fa6
        fmadd.s fa7, ft8, ft7, fa7
        addi    s4, s4, 4
        bltu    s5, s6, dw_j
        mul     t0, s2, t6
        slli    t1, s3, 2
        add     t0, t0, t1
        add     t0, t0, a2              # y[c, oy, ox]
        add     t1, t0, t6
        fsw     fa0, 0(t0)
        fsw     fa1, 4(t0)
        fsw     fa2, 8(t0)
        fsw     fa3, 12(t0)
        fsw     fa4, 0(t1)
        fsw     fa5, 4(t1)
        fsw     fa6, 8(t1)
        fsw     fa7, 12(t1)
        addi    s3, s3, 4
        blt     s3, s1, dw_ox
        addi    s2, s2, 2
        blt     s2, s0, dw_oy
        add     a0, a0, t4
        add     a1, a1, t5
        add     a2, a2, a5
        addi    a3, a3, -1
        bnez    a3, dw_c
        sub     t0, s6, sp
        addi    t0, t0, 15
        andi    t0, t0, -16
        add     sp, sp, t0
dw_done:
        ld      s0, 0(sp)
        ld      s1, 8(sp)
        ld      s2, 16(sp)
        ld      s3, 24(sp)
        ld      s4, 32(sp)
        ld      s5, 40(sp)
        ld      s6, 48(sp)
        ld      s7, 56(sp)
        addi    sp, sp, 64
        ret
dw3:                                    # K == 3: the taps' weights in registers, inputs reused across taps
        addi    sp, sp, -80
        fsd     fs0, 0(sp)
        fsd     fs1, 8(sp)
        fsd     fs2, 16(sp)
        fsd     fs3, 24(sp)
        fsd     fs4, 32(sp)
        fsd     fs5, 40(sp)
        fsd     fs6, 48(sp)
        fsd     fs7, 56(sp)
        fsd     fs8, 64(sp)
dw3_c:
        flw     fs0, 0(a1)
        flw     fs1, 4(a1)
        flw     fs2, 8(a1)
        flw     fs3, 12(a1)
        flw     fs4, 16(a1)
        flw     fs5, 20(a1)
        flw     fs6, 24(a1)
        flw     fs7, 28(a1)
        flw     fs8, 32(a1)
        mv      s2, zero                # s2 = oy
dw3_oy:
        ble     s2, a7, 1f
        mv      s2, a7
1:      mv      s3, zero                # s3 = ox
dw3_ox:
        ble     s3, a4, 2f
        mv      s3, a4
2:      mul     t0, s2, t2
        slli    t1, s3, 2
        add     t0, t0, t1
        add     t0, t0, a0              # t0 = x[c, oy, ox]
        add     t1, t0, t2
        add     a6, t1, t2
        add     s4, a6, t2              # input rows oy .. oy+3
        flw     ft0, 0(t0)
        flw     ft1, 4(t0)
        flw     ft2, 8(t0)
        flw     ft3, 12(t0)
        flw     ft4, 16(t0)
        flw     ft5, 20(t0)
        fmul.s  fa0, fs0, ft0
        fmul.s  fa1, fs0, ft1
        fmul.s  fa2, fs0, ft2
        fmul.s  fa3, fs0, ft3
        fmadd.s fa0, fs1, ft1, fa0
        fmadd.s fa1, fs1, ft2, fa1
        fmadd.s fa2, fs1, ft3, fa2
        fmadd.s fa3, fs1, ft4, fa3
        fmadd.s fa0, fs2, ft2, fa0
        fmadd.s fa1, fs2, ft3, fa1
        fmadd.s fa2, fs2, ft4, fa2
        fmadd.s fa3, fs2, ft5, fa3
        flw     ft0, 0(t1)
        flw     ft1, 4(t1)
        flw     ft2, 8(t1)
        flw     ft3, 12(t1)
        flw     ft4, 16(t1)
        flw     ft5, 20(t1)
        fmul.s  fa4, fs0, ft0
        fmul.s  fa5, fs0, ft1
        fmul.s  fa6, fs0, ft2
        fmul.s  fa7, fs0, ft3
        fmadd.s fa4, fs1, ft1, fa4
        fmadd.s fa5, fs1, ft2, fa5
        fmadd.s fa6, fs1, ft3, fa6
        fmadd.s fa7, fs1, ft4, fa7
        fmadd.s fa4, fs2, ft2, fa4
        fmadd.s fa5, fs2, ft3, fa5
        fmadd.s fa6, fs2, ft4, fa6
        fmadd.s fa7, fs2, ft5, fa7
        fmadd.s fa0, fs3, ft0, fa0
        fmadd.s fa1, fs3, ft1, fa1
        fmadd.s fa2, fs3, ft2, fa2
        fmadd.s fa3, fs3, ft3, fa3
        fmadd.s fa0, fs4, ft1, fa0
        fmadd.s fa1, fs4, ft2, fa1
        fmadd.s fa2, fs4, ft3, fa2
        fmadd.s fa3, fs4, ft4, fa3
        fmadd.s fa0, fs5, ft2, fa0
        fmadd.s fa1, fs5, ft3, fa1
        fmadd.s fa2, fs5, ft4, fa2
        fmadd.s fa3, fs5, ft5, fa3
        flw     ft0, 0(a6)
        flw     ft1, 4(a6)
        flw     ft2, 8(a6)
        flw     ft3, 12(a6)
        flw     ft4, 16(a6)
        flw     ft5, 20(a6)
        fmadd.s fa4, fs3, ft0, fa4
        fmadd.s fa5, fs3, ft1, fa5
        fmadd.s fa6, fs3, ft2, fa6
        fmadd.s fa7, fs3, ft3, fa7
        fmadd.s fa4, fs4, ft1, fa4
        fmadd.s fa5, fs4, ft2, fa5
        fmadd.s fa6, fs4, ft3, fa6
        fmadd.s fa7, fs4, ft4, fa7
        fmadd.s fa4, fs5, ft2, fa4
        fmadd.s fa5, fs5, ft3, fa5
        fmadd.s fa6, fs5, ft4, fa6
        fmadd.s fa7, fs5, ft5, fa7
        fmadd.s fa0, fs6, ft0, fa0
        fmadd.s fa1, fs6, ft1, fa1
        fmadd.s fa2, fs6, ft2, fa2
        fmadd.s fa3, fs6, ft3, fa3
        fmadd.s fa0, fs7, ft1, fa0
        fmadd.s fa1, fs7, ft2, fa1
        fmadd.s fa2, fs7, ft3, fa2
        fmadd.s fa3, fs7, ft4, fa3
        fmadd.s fa0, fs8, ft2, fa0
        fmadd.s fa1, fs8, ft3, fa1
        fmadd.s fa2, fs8, ft4, fa2
        fmadd.s fa3, fs8, ft5, fa3
        flw     ft0, 0(s4)
        flw     ft1, 4(s4)
        flw     ft2, 8(s4)
        flw     ft3, 12(s4)
        flw     ft4, 16(s4)
        flw     ft5, 20(s4)
        fmadd.s fa4, fs6, ft0, fa4
        fmadd.s fa5, fs6, ft1, fa5
        fmadd.s fa6, fs6, ft2, fa6
        fmadd.s fa7, fs6, ft3, fa7
        fmadd.s fa4, fs7, ft1, fa4
        fmadd.s fa5, fs7, ft2, fa5
        fmadd.s fa6, fs7, ft3, fa6
        fmadd.s fa7, fs7, ft4, fa7
        fmadd.s fa4, fs8, ft2, fa4
        fmadd.s fa5, fs8, ft3, fa5
        fmadd.s fa6, fs8, ft4, fa6
        fmadd.s fa7, fs8, ft5, fa7
        mul     t0, s2, t6
        slli    t1, s3, 2
        add     t0, t0, t1
        add     t0, t0, a2              # y[c, oy, ox]
        add     t1, t0, t6
        fsw     fa0, 0(t0)
        fsw     fa1, 4(t0)
        fsw     fa2, 8(t0)
        fsw     fa3, 12(t0)
        fsw     fa4, 0(t1)
        fsw     fa5, 4(t1)
        fsw     fa6, 8(t1)
        fsw     fa7, 12(t1)
        addi    s3, s3, 4
        blt     s3, s1, dw3_ox
        addi    s2, s2, 2
        blt     s2, s0, dw3_oy
        add     a0, a0, t4
        add     a1, a1, t5
        add     a2, a2, a5
        addi    a3, a3, -1
        bnez    a3, dw3_c
        fld     fs0, 0(sp)
        fld     fs1, 8(sp)
        fld     fs2, 16(sp)
        fld     fs3, 24(sp)
        fld     fs4, 32(sp)
        fld     fs5, 40(sp)
        fld     fs6, 48(sp)
        fld     fs7, 56(sp)
        fld     fs8, 64(sp)
        addi    sp, sp, 80
        j       dw_done
