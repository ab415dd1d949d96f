# conv_block on boom (RV64IMFD, out of order): y[co, i, j] = max(conv[co, i, j] * bn[0, co] +
# bn[1, co], 0), conv = 2-D convolution (3x3, stride 1, no padding) of x[CI, H, W] with
# w[CO, CI, 3, 3]; y[CO, H-2, W-2]; f32, row-major.
#
# Entry: a0 = x, a1 = w, a2 = bn, a3 = y, a4 = CI, a5 = CO, a6 = H, a7 = W. CO must be a multiple
# of 4 and W at least 6 (every configuration's are: CO 4..16, W 8..24).
#
# Algorithm: register blocking over four output channels and four output columns of one output
# row: the 16 sums of a tile live in f0-f15 for all CI*9 taps. For each input channel and kernel
# row kh, the 12 weights w[co0..co0+3, ci, kh, 0..2] are loaded, then the six x values of the
# input row under the tile are loaded one at a time and each feeds up to 12 fmadd.s (4 channels x
# the up-to-3 output columns it touches), so a load is shared by 8 FMAs on average, 18 loads per
# 48 FMAs: the one FP pipe is the bound, at about one FMA a cycle (an accumulator's consecutive
# updates are about 12 FP operations apart, above the 4-cycle FMA latency). The first input
# channel's first tap multiplies (fmul.s) instead of zeroing. Per tile the epilogue is batch
# norm as one fmadd.s per output (acc * bn[0] + bn[1], f32 like the reference's rounding), fmax.s
# with 0 for ReLU, and the stores. Columns: 4-wide tiles, then a 2-wide tile when OW % 4 = 2, or
# one 4-wide tile overlapping the previous one when OW % 4 is 1 or 3 (its outputs are written
# twice with the same values). Accumulation is in f32, ci-major in tap order.

        .text
        .globl conv_block
conv_block:
        addi    sp, sp, -192
        sd      s0, 0(sp)
        sd      s1, 8(sp)
        sd      s2, 16(sp)
        sd      s3, 24(sp)
        sd      s4, 32(sp)
        sd      s5, 40(sp)
        sd      s6, 48(sp)
        sd      s7, 56(sp)
        sd      s8, 64(sp)
        sd      s9, 72(sp)
        sd      s10, 80(sp)
        sd      s11, 88(sp)
        fsd     fs0, 96(sp)
        fsd     fs1, 104(sp)
        fsd     fs2, 112(sp)
        fsd     fs3, 120(sp)
        fsd     fs4, 128(sp)
        fsd     fs5, 136(sp)
        fsd     fs6, 144(sp)
        fsd     fs7, 152(sp)
        fsd     fs8, 160(sp)
        fsd     fs9, 168(sp)
        fsd     fs10, 176(sp)
        fsd     fs11, 184(sp)
        addi    s0, a6, -2              # s0 = OH
        addi    s1, a7, -2              # s1 = OW
        slli    s2, a7, 2               # s2 = W*4: a row of x
        mul     s3, a6, s2              # s3 = H*W*4: a channel of x
        li      t0, 36
        mul     s4, a4, t0              # s4 = CI*36: a filter (one co)
        mul     s5, s0, s1
        slli    s5, s5, 2               # s5 = OH*OW*4: a channel of y
        fmv.w.x f31, zero
        mv      s6, zero                # s6 = co0
        mv      s9, a1                  # s9 = w[co0]
        mv      s10, a3                 # s10 = y[co0]
cb_co:
        mv      s7, zero                # s7 = oh
cb_oh:
        mv      s8, zero                # s8 = ow0
cb_ow:
        sub     t0, s1, s8              # columns left
        li      t1, 4
        blt     t0, t1, cb_rest
cb_t4:
        mul     t0, s7, a7
        add     t0, t0, s8
        slli    t0, t0, 2
        add     t0, t0, a0              # x[0, oh, ow0]
        add     t1, t0, s2              # x[0, oh+1, ow0]
        add     t2, t1, s2              # x[0, oh+2, ow0]
        mv      t3, s9                  # w[co0, 0]
        add     t4, t3, s4
        add     t5, t4, s4
        add     t6, t5, s4
        addi    s11, a4, -1             # channels after the first
        flw     f16, 0(t3)
        flw     f17, 4(t3)
        flw     f18, 8(t3)
        flw     f19, 0(t4)
        flw     f20, 4(t4)
        flw     f21, 8(t4)
        flw     f22, 0(t5)
        flw     f23, 4(t5)
        flw     f24, 8(t5)
        flw     f25, 0(t6)
        flw     f26, 4(t6)
        flw     f27, 8(t6)
        flw     f28, 0(t0)
        fmul.s  f0, f16, f28
        fmul.s  f4, f19, f28
        fmul.s  f8, f22, f28
        fmul.s  f12, f25, f28
        flw     f29, 4(t0)
        fmul.s  f1, f16, f29
        fmul.s  f5, f19, f29
        fmul.s  f9, f22, f29
        fmul.s  f13, f25, f29
        fmadd.s f0, f17, f29, f0
        fmadd.s f4, f20, f29, f4
        fmadd.s f8, f23, f29, f8
        fmadd.s f12, f26, f29, f12
        flw     f30, 8(t0)
        fmul.s  f2, f16, f30
        fmul.s  f6, f19, f30
        fmul.s  f10, f22, f30
        fmul.s  f14, f25, f30
        fmadd.s f1, f17, f30, f1
        fmadd.s f5, f20, f30, f5
        fmadd.s f9, f23, f30, f9
        fmadd.s f13, f26, f30, f13
        fmadd.s f0, f18, f30, f0
        fmadd.s f4, f21, f30, f4
        fmadd.s f8, f24, f30, f8
        fmadd.s f12, f27, f30, f12
        flw     f28, 12(t0)
        fmul.s  f3, f16, f28
        fmul.s  f7, f19, f28
        fmul.s  f11, f22, f28
        fmul.s  f15, f25, f28
        fmadd.s f2, f17, f28, f2
        fmadd.s f6, f20, f28, f6
        fmadd.s f10, f23, f28, f10
        fmadd.s f14, f26, f28, f14
        fmadd.s f1, f18, f28, f1
        fmadd.s f5, f21, f28, f5
        fmadd.s f9, f24, f28, f9
        fmadd.s f13, f27, f28, f13
        flw     f29, 16(t0)
        fmadd.s f3, f17, f29, f3
        fmadd.s f7, f20, f29, f7
        fmadd.s f11, f23, f29, f11
        fmadd.s f15, f26, f29, f15
        fmadd.s f2, f18, f29, f2
        fmadd.s f6, f21, f29, f6
        fmadd.s f10, f24, f29, f10
        fmadd.s f14, f27, f29, f14
        flw     f30, 20(t0)
        fmadd.s f3, f18, f30, f3
        fmadd.s f7, f21, f30, f7
        fmadd.s f11, f24, f30, f11
        fmadd.s f15, f27, f30, f15
        flw     f16, 12(t3)
        flw     f17, 16(t3)
        flw     f18, 20(t3)
        flw     f19, 12(t4)
        flw     f20, 16(t4)
        flw     f21, 20(t4)
        flw     f22, 12(t5)
        flw     f23, 16(t5)
        flw     f24, 20(t5)
        flw     f25, 12(t6)
        flw     f26, 16(t6)
        flw     f27, 20(t6)
        flw     f28, 0(t1)
        fmadd.s f0, f16, f28, f0
        fmadd.s f4, f19, f28, f4
        fmadd.s f8, f22, f28, f8
        fmadd.s f12, f25, f28, f12
        flw     f29, 4(t1)
        fmadd.s f1, f16, f29, f1
        fmadd.s f5, f19, f29, f5
        fmadd.s f9, f22, f29, f9
        fmadd.s f13, f25, f29, f13
        fmadd.s f0, f17, f29, f0
        fmadd.s f4, f20, f29, f4
        fmadd.s f8, f23, f29, f8
        fmadd.s f12, f26, f29, f12
        flw     f30, 8(t1)
        fmadd.s f2, f16, f30, f2
        fmadd.s f6, f19, f30, f6
        fmadd.s f10, f22, f30, f10
        fmadd.s f14, f25, f30, f14
        fmadd.s f1, f17, f30, f1
        fmadd.s f5, f20, f30, f5
        fmadd.s f9, f23, f30, f9
        fmadd.s f13, f26, f30, f13
        fmadd.s f0, f18, f30, f0
        fmadd.s f4, f21, f30, f4
        fmadd.s f8, f24, f30, f8
        fmadd.s f12, f27, f30, f12
        flw     f28, 12(t1)
        fmadd.s f3, f16, f28, f3
        fmadd.s f7, f19, f28, f7
        fmadd.s f11, f22, f28, f11
        fmadd.s f15, f25, f28, f15
        fmadd.s f2, f17, f28, f2
        fmadd.s f6, f20, f28, f6
        fmadd.s f10, f23, f28, f10
        fmadd.s f14, f26, f28, f14
        fmadd.s f1, f18, f28, f1
        fmadd.s f5, f21, f28, f5
        fmadd.s f9, f24, f28, f9
        fmadd.s f13, f27, f28, f13
        flw     f29, 16(t1)
        fmadd.s f3, f17, f29, f3
        fmadd.s f7, f20, f29, f7
        fmadd.s f11, f23, f29, f11
        fmadd.s f15, f26, f29, f15
        fmadd.s f2, f18, f29, f2
        fmadd.s f6, f21, f29, f6
        fmadd.s f10, f24, f29, f10
        fmadd.s f14, f27, f29, f14
        flw     f30, 20(t1)
        fmadd.s f3, f18, f30, f3
        fmadd.s f7, f21, f30, f7
        fmadd.s f11, f24, f30, f11
        fmadd.s f15, f27, f30, f15
        flw     f16, 24(t3)
        flw     f17, 28(t3)
        flw     f18, 32(t3)
        flw     f19, 24(t4)
        flw     f20, 28(t4)
        flw     f21, 32(t4)
        flw     f22, 24(t5)
        flw     f23, 28(t5)
        flw     f24, 32(t5)
        flw     f25, 24(t6)
        flw     f26, 28(t6)
        flw     f27, 32(t6)
        flw     f28, 0(t2)
        fmadd.s f0, f16, f28, f0
        fmadd.s f4, f19, f28, f4
        fmadd.s f8, f22, f28, f8
        fmadd.s f12, f25, f28, f12
        flw     f29, 4(t2)
        fmadd.s f1, f16, f29, f1
        fmadd.s f5, f19, f29, f5
        fmadd.s f9, f22, f29, f9
        fmadd.s f13, f25, f29, f13
        fmadd.s f0, f17, f29, f0
        fmadd.s f4, f20, f29, f4
        fmadd.s f8, f23, f29, f8
        fmadd.s f12, f26, f29, f12
        flw     f30, 8(t2)
        fmadd.s f2, f16, f30, f2
        fmadd.s f6, f19, f30, f6
        fmadd.s f10, f22, f30, f10
        fmadd.s f14, f25, f30, f14
        fmadd.s f1, f17, f30, f1
        fmadd.s f5, f20, f30, f5
        fmadd.s f9, f23, f30, f9
        fmadd.s f13, f26, f30, f13
        fmadd.s f0, f18, f30, f0
        fmadd.s f4, f21, f30, f4
        fmadd.s f8, f24, f30, f8
        fmadd.s f12, f27, f30, f12
        flw     f28, 12(t2)
        fmadd.s f3, f16, f28, f3
        fmadd.s f7, f19, f28, f7
        fmadd.s f11, f22, f28, f11
        fmadd.s f15, f25, f28, f15
        fmadd.s f2, f17, f28, f2
        fmadd.s f6, f20, f28, f6
        fmadd.s f10, f23, f28, f10
        fmadd.s f14, f26, f28, f14
        fmadd.s f1, f18, f28, f1
        fmadd.s f5, f21, f28, f5
        fmadd.s f9, f24, f28, f9
        fmadd.s f13, f27, f28, f13
        flw     f29, 16(t2)
        fmadd.s f3, f17, f29, f3
        fmadd.s f7, f20, f29, f7
        fmadd.s f11, f23, f29, f11
        fmadd.s f15, f26, f29, f15
        fmadd.s f2, f18, f29, f2
        fmadd.s f6, f21, f29, f6
        fmadd.s f10, f24, f29, f10
        fmadd.s f14, f27, f29, f14
        flw     f30, 20(t2)
        fmadd.s f3, f18, f30, f3
        fmadd.s f7, f21, f30, f7
        fmadd.s f11, f24, f30, f11
        fmadd.s f15, f27, f30, f15
        beqz    s11, cb_t4_bn
cb_t4_ci:
        add     t0, t0, s3
        add     t1, t1, s3
        add     t2, t2, s3
        addi    t3, t3, 36
        addi    t4, t4, 36
        addi    t5, t5, 36
        addi    t6, t6, 36
        flw     f16, 0(t3)
        flw     f17, 4(t3)
        flw     f18, 8(t3)
        flw     f19, 0(t4)
        flw     f20, 4(t4)
        flw     f21, 8(t4)
        flw     f22, 0(t5)
        flw     f23, 4(t5)
        flw     f24, 8(t5)
        flw     f25, 0(t6)
        flw     f26, 4(t6)
        flw     f27, 8(t6)
        flw     f28, 0(t0)
        fmadd.s f0, f16, f28, f0
        fmadd.s f4, f19, f28, f4
        fmadd.s f8, f22, f28, f8
        fmadd.s f12, f25, f28, f12
        flw     f29, 4(t0)
        fmadd.s f1, f16, f29, f1
        fmadd.s f5, f19, f29, f5
        fmadd.s f9, f22, f29, f9
        fmadd.s f13, f25, f29, f13
        fmadd.s f0, f17, f29, f0
        fmadd.s f4, f20, f29, f4
        fmadd.s f8, f23, f29, f8
        fmadd.s f12, f26, f29, f12
        flw     f30, 8(t0)
        fmadd.s f2, f16, f30, f2
        fmadd.s f6, f19, f30, f6
        fmadd.s f10, f22, f30, f10
        fmadd.s f14, f25, f30, f14
        fmadd.s f1, f17, f30, f1
        fmadd.s f5, f20, f30, f5
        fmadd.s f9, f23, f30, f9
        fmadd.s f13, f26, f30, f13
        fmadd.s f0, f18, f30, f0
        fmadd.s f4, f21, f30, f4
        fmadd.s f8, f24, f30, f8
        fmadd.s f12, f27, f30, f12
        flw     f28, 12(t0)
        fmadd.s f3, f16, f28, f3
        fmadd.s f7, f19, f28, f7
        fmadd.s f11, f22, f28, f11
        fmadd.s f15, f25, f28, f15
        fmadd.s f2, f17, f28, f2
        fmadd.s f6, f20, f28, f6
        fmadd.s f10, f23, f28, f10
        fmadd.s f14, f26, f28, f14
        fmadd.s f1, f18, f28, f1
        fmadd.s f5, f21, f28, f5
        fmadd.s f9, f24, f28, f9
        fmadd.s f13, f27, f28, f13
        flw     f29, 16(t0)
        fmadd.s f3, f17, f29, f3
        fmadd.s f7, f20, f29, f7
        fmadd.s f11, f23, f29, f11
        fmadd.s f15, f26, f29, f15
        fmadd.s f2, f18, f29, f2
        fmadd.s f6, f21, f29, f6
        fmadd.s f10, f24, f29, f10
        fmadd.s f14, f27, f29, f14
        flw     f30, 20(t0)
        fmadd.s f3, f18, f30, f3
        fmadd.s f7, f21, f30, f7
        fmadd.s f11, f24, f30, f11
        fmadd.s f15, f27, f30, f15
        flw     f16, 12(t3)
        flw     f17, 16(t3)
        flw     f18, 20(t3)
        flw     f19, 12(t4)
        flw     f20, 16(t4)
        flw     f21, 20(t4)
        flw     f22, 12(t5)
        flw     f23, 16(t5)
        flw     f24, 20(t5)
        flw     f25, 12(t6)
        flw     f26, 16(t6)
        flw     f27, 20(t6)
        flw     f28, 0(t1)
        fmadd.s f0, f16, f28, f0
        fmadd.s f4, f19, f28, f4
        fmadd.s f8, f22, f28, f8
        fmadd.s f12, f25, f28, f12
        flw     f29, 4(t1)
        fmadd.s f1, f16, f29, f1
        fmadd.s f5, f19, f29, f5
        fmadd.s f9, f22, f29, f9
        fmadd.s f13, f25, f29, f13
        fmadd.s f0, f17, f29, f0
        fmadd.s f4, f20, f29, f4
        fmadd.s f8, f23, f29, f8
        fmadd.s f12, f26, f29, f12
        flw     f30, 8(t1)
        fmadd.s f2, f16, f30, f2
        fmadd.s f6, f19, f30, f6
        fmadd.s f10, f22, f30, f10
        fmadd.s f14, f25, f30, f14
        fmadd.s f1, f17, f30, f1
        fmadd.s f5, f20, f30, f5
        fmadd.s f9, f23, f30, f9
        fmadd.s f13, f26, f30, f13
        fmadd.s f0, f18, f30, f0
        fmadd.s f4, f21, f30, f4
        fmadd.s f8, f24, f30, f8
        fmadd.s f12, f27, f30, f12
        flw     f28, 12(t1)
        fmadd.s f3, f16, f28, f3
        fmadd.s f7, f19, f28, f7
        fmadd.s f11, f22, f28, f11
        fmadd.s f15, f25, f28, f15
        fmadd.s f2, f17, f28, f2
        fmadd.s f6, f20, f28, f6
        fmadd.s f10, f23, f28, f10
        fmadd.s f14, f26, f28, f14
        fmadd.s f1, f18, f28, f1
        fmadd.s f5, f21, f28, f5
        fmadd.s f9, f24, f28, f9
        fmadd.s f13, f27, f28, f13
        flw     f29, 16(t1)
        fmadd.s f3, f17, f29, f3
        fmadd.s f7, f20, f29, f7
        fmadd.s f11, f23, f29, f11
        fmadd.s f15, f26, f29, f15
        fmadd.s f2, f18, f29, f2
        fmadd.s f6, f21, f29, f6
        fmadd.s f10, f24, f29, f10
        fmadd.s f14, f27, f29, f14
        flw     f30, 20(t1)
        fmadd.s f3, f18, f30, f3
        fmadd.s f7, f21, f30, f7
        fmadd.s f11, f24, f30, f11
        fmadd.s f15, f27, f30, f15
        flw     f16, 24(t3)
        flw     f17, 28(t3)
        flw     f18, 32(t3)
        flw     f19, 24(t4)
        flw     f20, 28(t4)
        flw     f21, 32(t4)
        flw     f22, 24(t5)
        flw     f23, 28(t5)
        flw     f24, 32(t5)
        flw     f25, 24(t6)
        flw     f26, 28(t6)
        flw     f27, 32(t6)
        flw     f28, 0(t2)
        fmadd.s f0, f16, f28, f0
        fmadd.s f4, f19, f28, f4
        fmadd.s f8, f22, f28, f8
        fmadd.s f12, f25, f28, f12
        flw     f29, 4(t2)
        fmadd.s f1, f16, f29, f1
        fmadd.s f5, f19, f29, f5
        fmadd.s f9, f22, f29, f9
        fmadd.s f13, f25, f29, f13
        fmadd.s f0, f17, f29, f0
        fmadd.s f4, f20, f29, f4
        fmadd.s f8, f23, f29, f8
        fmadd.s f12, f26, f29, f12
        flw     f30, 8(t2)
        fmadd.s f2, f16, f30, f2
        fmadd.s f6, f19, f30, f6
        fmadd.s f10, f22, f30, f10
        fmadd.s f14, f25, f30, f14
        fmadd.s f1, f17, f30, f1
        fmadd.s f5, f20, f30, f5
        fmadd.s f9, f23, f30, f9
        fmadd.s f13, f26, f30, f13
        fmadd.s f0, f18, f30, f0
        fmadd.s f4, f21, f30, f4
        fmadd.s f8, f24, f30, f8
        fmadd.s f12, f27, f30, f12
        flw     f28, 12(t2)
        fmadd.s f3, f16, f28, f3
        fmadd.s f7, f19, f28, f7
        fmadd.s f11, f22, f28, f11
        fmadd.s f15, f25, f28, f15
        fmadd.s f2, f17, f28, f2
        fmadd.s f6, f20, f28, f6
        fmadd.s f10, f23, f28, f10
        fmadd.s f14, f26, f28, f14
        fmadd.s f1, f18, f28, f1
        fmadd.s f5, f21, f28, f5
        fmadd.s f9, f24, f28, f9
        fmadd.s f13, f27, f28, f13
        flw     f29, 16(t2)
        fmadd.s f3, f17, f29, f3
        fmadd.s f7, f20, f29, f7
        fmadd.s f11, f23, f29, f11
        fmadd.s f15, f26, f29, f15
        fmadd.s f2, f18, f29, f2
        fmadd.s f6, f21, f29, f6
        fmadd.s f10, f24, f29, f10
        fmadd.s f14, f27, f29, f14
        flw     f30, 20(t2)
        fmadd.s f3, f18, f30, f3
        fmadd.s f7, f21, f30, f7
        fmadd.s f11, f24, f30, f11
        fmadd.s f15, f27, f30, f15
        addi    s11, s11, -1
        bnez    s11, cb_t4_ci
cb_t4_bn:                               # y = max(acc * bn[0, co] + bn[1, co], 0)
        mul     t0, s7, s1
        add     t0, t0, s8
        slli    t0, t0, 2
        add     t0, t0, s10             # y[co0, oh, ow0]
        slli    t1, s6, 2
        add     t1, t1, a2              # bn[0, co0]
        slli    t2, a5, 2
        add     t2, t2, t1              # bn[1, co0]
        flw     f16, 0(t1)
        flw     f17, 0(t2)
        flw     f19, 4(t1)
        flw     f20, 4(t2)
        flw     f22, 8(t1)
        flw     f23, 8(t2)
        flw     f25, 12(t1)
        flw     f26, 12(t2)
        fmadd.s f0, f0, f16, f17
        fmadd.s f1, f1, f16, f17
        fmadd.s f2, f2, f16, f17
        fmadd.s f3, f3, f16, f17
        fmadd.s f4, f4, f19, f20
        fmadd.s f5, f5, f19, f20
        fmadd.s f6, f6, f19, f20
        fmadd.s f7, f7, f19, f20
        fmadd.s f8, f8, f22, f23
        fmadd.s f9, f9, f22, f23
        fmadd.s f10, f10, f22, f23
        fmadd.s f11, f11, f22, f23
        fmadd.s f12, f12, f25, f26
        fmadd.s f13, f13, f25, f26
        fmadd.s f14, f14, f25, f26
        fmadd.s f15, f15, f25, f26
        fmax.s  f0, f0, f31
        fmax.s  f1, f1, f31
        fmax.s  f2, f2, f31
        fmax.s  f3, f3, f31
        fmax.s  f4, f4, f31
        fmax.s  f5, f5, f31
        fmax.s  f6, f6, f31
        fmax.s  f7, f7, f31
        fmax.s  f8, f8, f31
        fmax.s  f9, f9, f31
        fmax.s  f10, f10, f31
        fmax.s  f11, f11, f31
        fmax.s  f12, f12, f31
        fmax.s  f13, f13, f31
        fmax.s  f14, f14, f31
        fmax.s  f15, f15, f31
        fsw     f0, 0(t0)
        fsw     f1, 4(t0)
        fsw     f2, 8(t0)
        fsw     f3, 12(t0)
        add     t0, t0, s5
        fsw     f4, 0(t0)
        fsw     f5, 4(t0)
        fsw     f6, 8(t0)
        fsw     f7, 12(t0)
        add     t0, t0, s5
        fsw     f8, 0(t0)
        fsw     f9, 4(t0)
        fsw     f10, 8(t0)
        fsw     f11, 12(t0)
        add     t0, t0, s5
        fsw     f12, 0(t0)
        fsw     f13, 4(t0)
        fsw     f14, 8(t0)
        fsw     f15, 12(t0)
        addi    s8, s8, 4
        j       cb_ow
cb_rest:
        beqz    t0, cb_row
        li      t1, 2
        beq     t0, t1, cb_t2
        addi    s8, s1, -4              # 1 or 3 left: a 4-wide tile overlapping the previous one
        j       cb_t4
cb_t2:
        mul     t0, s7, a7
        add     t0, t0, s8
        slli    t0, t0, 2
        add     t0, t0, a0              # x[0, oh, ow0]
        add     t1, t0, s2              # x[0, oh+1, ow0]
        add     t2, t1, s2              # x[0, oh+2, ow0]
        mv      t3, s9                  # w[co0, 0]
        add     t4, t3, s4
        add     t5, t4, s4
        add     t6, t5, s4
        addi    s11, a4, -1             # channels after the first
        flw     f16, 0(t3)
        flw     f17, 4(t3)
        flw     f18, 8(t3)
        flw     f19, 0(t4)
        flw     f20, 4(t4)
        flw     f21, 8(t4)
        flw     f22, 0(t5)
        flw     f23, 4(t5)
        flw     f24, 8(t5)
        flw     f25, 0(t6)
        flw     f26, 4(t6)
        flw     f27, 8(t6)
        flw     f28, 0(t0)
        fmul.s  f0, f16, f28
        fmul.s  f4, f19, f28
        fmul.s  f8, f22, f28
        fmul.s  f12, f25, f28
        flw     f29, 4(t0)
        fmul.s  f1, f16, f29
        fmul.s  f5, f19, f29
        fmul.s  f9, f22, f29
        fmul.s  f13, f25, f29
        fmadd.s f0, f17, f29, f0
        fmadd.s f4, f20, f29, f4
        fmadd.s f8, f23, f29, f8
        fmadd.s f12, f26, f29, f12
        flw     f30, 8(t0)
        fmadd.s f1, f17, f30, f1
        fmadd.s f5, f20, f30, f5
        fmadd.s f9, f23, f30, f9
        fmadd.s f13, f26, f30, f13
        fmadd.s f0, f18, f30, f0
        fmadd.s f4, f21, f30, f4
        fmadd.s f8, f24, f30, f8
        fmadd.s f12, f27, f30, f12
        flw     f28, 12(t0)
        fmadd.s f1, f18, f28, f1
        fmadd.s f5, f21, f28, f5
        fmadd.s f9, f24, f28, f9
        fmadd.s f13, f27, f28, f13
        flw     f16, 12(t3)
        flw     f17, 16(t3)
        flw     f18, 20(t3)
        flw     f19, 12(t4)
        flw     f20, 16(t4)
        flw     f21, 20(t4)
        flw     f22, 12(t5)
        flw     f23, 16(t5)
        flw     f24, 20(t5)
        flw     f25, 12(t6)
        flw     f26, 16(t6)
        flw     f27, 20(t6)
        flw     f29, 0(t1)
        fmadd.s f0, f16, f29, f0
        fmadd.s f4, f19, f29, f4
        fmadd.s f8, f22, f29, f8
        fmadd.s f12, f25, f29, f12
        flw     f30, 4(t1)
        fmadd.s f1, f16, f30, f1
        fmadd.s f5, f19, f30, f5
        fmadd.s f9, f22, f30, f9
        fmadd.s f13, f25, f30, f13
        fmadd.s f0, f17, f30, f0
        fmadd.s f4, f20, f30, f4
        fmadd.s f8, f23, f30, f8
        fmadd.s f12, f26, f30, f12
        flw     f28, 8(t1)
        fmadd.s f1, f17, f28, f1
        fmadd.s f5, f20, f28, f5
        fmadd.s f9, f23, f28, f9
        fmadd.s f13, f26, f28, f13
        fmadd.s f0, f18, f28, f0
        fmadd.s f4, f21, f28, f4
        fmadd.s f8, f24, f28, f8
        fmadd.s f12, f27, f28, f12
        flw     f29, 12(t1)
        fmadd.s f1, f18, f29, f1
        fmadd.s f5, f21, f29, f5
        fmadd.s f9, f24, f29, f9
        fmadd.s f13, f27, f29, f13
        flw     f16, 24(t3)
        flw     f17, 28(t3)
        flw     f18, 32(t3)
        flw     f19, 24(t4)
        flw     f20, 28(t4)
        flw     f21, 32(t4)
        flw     f22, 24(t5)
        flw     f23, 28(t5)
        flw     f24, 32(t5)
        flw     f25, 24(t6)
        flw     f26, 28(t6)
        flw     f27, 32(t6)
        flw     f30, 0(t2)
        fmadd.s f0, f16, f30, f0
        fmadd.s f4, f19, f30, f4
        fmadd.s f8, f22, f30, f8
        fmadd.s f12, f25, f30, f12
        flw     f28, 4(t2)
        fmadd.s f1, f16, f28, f1
        fmadd.s f5, f19, f28, f5
        fmadd.s f9, f22, f28, f9
        fmadd.s f13, f25, f28, f13
        fmadd.s f0, f17, f28, f0
        fmadd.s f4, f20, f28, f4
        fmadd.s f8, f23, f28, f8
        fmadd.s f12, f26, f28, f12
        flw     f29, 8(t2)
        fmadd.s f1, f17, f29, f1
        fmadd.s f5, f20, f29, f5
        fmadd.s f9, f23, f29, f9
        fmadd.s f13, f26, f29, f13
        fmadd.s f0, f18, f29, f0
        fmadd.s f4, f21, f29, f4
        fmadd.s f8, f24, f29, f8
        fmadd.s f12, f27, f29, f12
        flw     f30, 12(t2)
        fmadd.s f1, f18, f30, f1
        fmadd.s f5, f21, f30, f5
        fmadd.s f9, f24, f30, f9
        fmadd.s f13, f27, f30, f13
        beqz    s11, cb_t2_bn
cb_t2_ci:
        add     t0, t0, s3
        add     t1, t1, s3
        add     t2, t2, s3
        addi    t3, t3, 36
        addi    t4, t4, 36
        addi    t5, t5, 36
        addi    t6, t6, 36
        flw     f16, 0(t3)
        flw     f17, 4(t3)
        flw     f18, 8(t3)
        flw     f19, 0(t4)
        flw     f20, 4(t4)
        flw     f21, 8(t4)
        flw     f22, 0(t5)
        flw     f23, 4(t5)
        flw     f24, 8(t5)
        flw     f25, 0(t6)
        flw     f26, 4(t6)
        flw     f27, 8(t6)
        flw     f28, 0(t0)
        fmadd.s f0, f16, f28, f0
        fmadd.s f4, f19, f28, f4
        fmadd.s f8, f22, f28, f8
        fmadd.s f12, f25, f28, f12
        flw     f29, 4(t0)
        fmadd.s f1, f16, f29, f1
        fmadd.s f5, f19, f29, f5
        fmadd.s f9, f22, f29, f9
        fmadd.s f13, f25, f29, f13
        fmadd.s f0, f17, f29, f0
        fmadd.s f4, f20, f29, f4
        fmadd.s f8, f23, f29, f8
        fmadd.s f12, f26, f29, f12
        flw     f30, 8(t0)
        fmadd.s f1, f17, f30, f1
        fmadd.s f5, f20, f30, f5
        fmadd.s f9, f23, f30, f9
        fmadd.s f13, f26, f30, f13
        fmadd.s f0, f18, f30, f0
        fmadd.s f4, f21, f30, f4
        fmadd.s f8, f24, f30, f8
        fmadd.s f12, f27, f30, f12
        flw     f28, 12(t0)
        fmadd.s f1, f18, f28, f1
        fmadd.s f5, f21, f28, f5
        fmadd.s f9, f24, f28, f9
        fmadd.s f13, f27, f28, f13
        flw     f16, 12(t3)
        flw     f17, 16(t3)
        flw     f18, 20(t3)
        flw     f19, 12(t4)
        flw     f20, 16(t4)
        flw     f21, 20(t4)
        flw     f22, 12(t5)
        flw     f23, 16(t5)
        flw     f24, 20(t5)
        flw     f25, 12(t6)
        flw     f26, 16(t6)
        flw     f27, 20(t6)
        flw     f29, 0(t1)
        fmadd.s f0, f16, f29, f0
        fmadd.s f4, f19, f29, f4
        fmadd.s f8, f22, f29, f8
        fmadd.s f12, f25, f29, f12
        flw     f30, 4(t1)
        fmadd.s f1, f16, f30, f1
        fmadd.s f5, f19, f30, f5
        fmadd.s f9, f22, f30, f9
        fmadd.s f13, f25, f30, f13
        fmadd.s f0, f17, f30, f0
        fmadd.s f4, f20, f30, f4
        fmadd.s f8, f23, f30, f8
        fmadd.s f12, f26, f30, f12
        flw     f28, 8(t1)
        fmadd.s f1, f17, f28, f1
        fmadd.s f5, f20, f28, f5
        fmadd.s f9, f23, f28, f9
        fmadd.s f13, f26, f28, f13
        fmadd.s f0, f18, f28, f0
        fmadd.s f4, f21, f28, f4
        fmadd.s f8, f24, f28, f8
        fmadd.s f12, f27, f28, f12
        flw     f29, 12(t1)
        fmadd.s f1, f18, f29, f1
        fmadd.s f5, f21, f29, f5
        fmadd.s f9, f24, f29, f9
        fmadd.s f13, f27, f29, f13
        flw     f16, 24(t3)
        flw     f17, 28(t3)
        flw     f18, 32(t3)
        flw     f19, 24(t4)
        flw     f20, 28(t4)
        flw     f21, 32(t4)
        flw     f22, 24(t5)
        flw     f23, 28(t5)
        flw     f24, 32(t5)
        flw     f25, 24(t6)
        flw     f26, 28(t6)
        flw     f27, 32(t6)
        flw     f30, 0(t2)
        fmadd.s f0, f16, f30, f0
        fmadd.s f4, f19, f30, f4
        fmadd.s f8, f22, f30, f8
        fmadd.s f12, f25, f30, f12
        flw     f28, 4(t2)
        fmadd.s f1, f16, f28, f1
        fmadd.s f5, f19, f28, f5
        fmadd.s f9, f22, f28, f9
        fmadd.s f13, f25, f28, f13
        fmadd.s f0, f17, f28, f0
        fmadd.s f4, f20, f28, f4
        fmadd.s f8, f23, f28, f8
        fmadd.s f12, f26, f28, f12
        flw     f29, 8(t2)
        fmadd.s f1, f17, f29, f1
        fmadd.s f5, f20, f29, f5
        fmadd.s f9, f23, f29, f9
        fmadd.s f13, f26, f29, f13
        fmadd.s f0, f18, f29, f0
        fmadd.s f4, f21, f29, f4
        fmadd.s f8, f24, f29, f8
        fmadd.s f12, f27, f29, f12
        flw     f30, 12(t2)
        fmadd.s f1, f18, f30, f1
        fmadd.s f5, f21, f30, f5
        fmadd.s f9, f24, f30, f9
        fmadd.s f13, f27, f30, f13
        addi    s11, s11, -1
        bnez    s11, cb_t2_ci
cb_t2_bn:                               # y = max(acc * bn[0, co] + bn[1, co], 0)
        mul     t0, s7, s1
        add     t0, t0, s8
        slli    t0, t0, 2
        add     t0, t0, s10             # y[co0, oh, ow0]
        slli    t1, s6, 2
        add     t1, t1, a2              # bn[0, co0]
        slli    t2, a5, 2
        add     t2, t2, t1              # bn[1, co0]
        flw     f16, 0(t1)
        flw     f17, 0(t2)
        flw     f19, 4(t1)
        flw     f20, 4(t2)
        flw     f22, 8(t1)
        flw     f23, 8(t2)
        flw     f25, 12(t1)
        flw     f26, 12(t2)
        fmadd.s f0, f0, f16, f17
        fmadd.s f1, f1, f16, f17
        fmadd.s f4, f4, f19, f20
        fmadd.s f5, f5, f19, f20
        fmadd.s f8, f8, f22, f23
        fmadd.s f9, f9, f22, f23
        fmadd.s f12, f12, f25, f26
        fmadd.s f13, f13, f25, f26
        fmax.s  f0, f0, f31
        fmax.s  f1, f1, f31
        fmax.s  f4, f4, f31
        fmax.s  f5, f5, f31
        fmax.s  f8, f8, f31
        fmax.s  f9, f9, f31
        fmax.s  f12, f12, f31
        fmax.s  f13, f13, f31
        fsw     f0, 0(t0)
        fsw     f1, 4(t0)
        add     t0, t0, s5
        fsw     f4, 0(t0)
        fsw     f5, 4(t0)
        add     t0, t0, s5
        fsw     f8, 0(t0)
        fsw     f9, 4(t0)
        add     t0, t0, s5
        fsw     f12, 0(t0)
        fsw     f13, 4(t0)
        addi    s8, s8, 2
        j       cb_ow
cb_row:
        addi    s7, s7, 1
        blt     s7, s0, cb_oh
        addi    s6, s6, 4
        slli    t0, s4, 2
        add     s9, s9, t0              # w[co0 + 4]
        slli    t0, s5, 2
        add     s10, s10, t0            # y[co0 + 4]
        blt     s6, a5, cb_co
        ld      s0, 0(sp)
        ld      s1, 8(sp)
        ld      s2, 16(sp)
        ld      s3, 24(sp)
        ld      s4, 32(sp)
        ld      s5, 40(sp)
        ld      s6, 48(sp)
        ld      s7, 56(sp)
        ld      s8, 64(sp)
        ld      s9, 72(sp)
        ld      s10, 80(sp)
        ld      s11, 88(sp)
        fld     fs0, 96(sp)
        fld     fs1, 104(sp)
        fld     fs2, 112(sp)
        fld     fs3, 120(sp)
        fld     fs4, 128(sp)
        fld     fs5, 136(sp)
        fld     fs6, 144(sp)
        fld     fs7, 152(sp)
        fld     fs8, 160(sp)
        fld     fs9, 168(sp)
        fld     fs10, 176(sp)
        fld     fs11, 184(sp)
        addi    sp, sp, 192
        ret
