# conv2d on boom (RV64IMFD, out of order): y[CO, OH, OW] = sum over ci, ky, kx of
# x[ci, oy+ky, ox+kx] * w[co, ci, ky, kx], stride 1, no padding, OH = H-K+1, OW = W-K+1, f32.
#
# Entry: a0 = x, a1 = w, a2 = y, a3 = CI, a4 = CO, a5 = H, a6 = W, a7 = K. CO must be a multiple
# of 4 and OW at least 4 (every configuration's are).
#
# Algorithm: a register-blocked direct convolution. The reduction index j = (ci, ky, kx) runs over
# J = CI*K*K terms; two tables are built on the stack first: off[j], the byte offset of
# x[ci, ky, kx] from x[0, 0, 0], and the weights repacked as wp[co/4][j][4] (the four output
# channels of a block side by side). A tile of 4 output channels x 4 adjacent output columns
# lives in 16 FP registers; one j step loads 4 inputs x[ci, oy+ky, ox+kx .. +3] (one address from
# the table, immediate offsets) and the 4 packed weights, then issues 16 independent fmadd.s, so the
# one FP pipe runs about one FMA per cycle (the roofline) while the memory port is 60% busy. The
# next table offset is loaded one step ahead so no load waits for its address. Rows whose width is
# not a multiple of 4 end with a tile shifted left to OW-4 (it recomputes a few outputs with the
# same values). The first j step multiplies instead of zeroing the tile; sums are f32 in j order.

        .text
        .globl conv2d
conv2d:
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
        sub     s0, a5, a7
        addi    s0, s0, 1               # s0 = OH
        sub     s1, a6, a7
        addi    s1, s1, 1               # s1 = OW
        mul     s2, a7, a7              # s2 = K*K
        mul     s3, a3, s2              # s3 = J = CI*K*K
        addi    t0, a4, 1
        mul     t0, t0, s3
        slli    t0, t0, 2               # (J + CO*J) * 4 bytes of tables
        addi    t0, t0, 15
        andi    t0, t0, -16
        sub     sp, sp, t0
        mv      s4, t0                  # s4 = table bytes (to pop)
        mv      s7, sp                  # s7 = off[]
        slli    t0, s3, 2
        add     s8, sp, t0              # s8 = wp[]
        add     s9, s7, t0              # s9 = end of off[]
        slli    s5, a6, 2               # s5 = W*4
        mul     t1, a5, s5              # t1 = H*W*4: one input channel
        mv      t2, s7                  # t2 = write pointer
        mv      t3, zero                # t3 = ci*H*W*4
        mv      t4, a3                  # ci left
cv_t_ci:
        mv      t5, t3                  # t5 = ci*H*W*4 + ky*W*4
        mv      t6, a7                  # ky left
cv_t_ky:
        mv      a5, t5                  # a5 = ... + kx*4
        mv      a6, a7                  # kx left
cv_t_kx:
        sw      a5, 0(t2)
        addi    t2, t2, 4
        addi    a5, a5, 4
        addi    a6, a6, -1
        bnez    a6, cv_t_kx
        add     t5, t5, s5
        addi    t6, t6, -1
        bnez    t6, cv_t_ky
        add     t3, t3, t1
        addi    t4, t4, -1
        bnez    t4, cv_t_ci
        slli    t1, s3, 2               # t1 = J*4: one output channel of w
        mv      t2, s8                  # t2 = write pointer
        mv      t3, a1                  # t3 = w[cb*4, 0]
        srli    t4, a4, 2               # blocks left
cv_w_cb:
        mv      t5, t3
        mv      t6, s3                  # j left
cv_w_j:
        add     a5, t5, t1
        add     a6, a5, t1
        add     a7, a6, t1
        flw     ft0, 0(t5)
        flw     ft1, 0(a5)
        flw     ft2, 0(a6)
        flw     ft3, 0(a7)
        fsw     ft0, 0(t2)
        fsw     ft1, 4(t2)
        fsw     ft2, 8(t2)
        fsw     ft3, 12(t2)
        addi    t2, t2, 16
        addi    t5, t5, 4
        addi    t6, t6, -1
        bnez    t6, cv_w_j
        slli    a5, t1, 2
        add     t3, t3, a5
        addi    t4, t4, -1
        bnez    t4, cv_w_cb
        mul     s6, s0, s1
        slli    s6, s6, 2               # s6 = OH*OW*4: one output channel
        slli    a3, s6, 2               # a3 = 4 output channels
        srli    a4, a4, 2               # a4 = channel blocks left
        addi    a5, s1, -4              # a5 = OW-4: the last tile's column
        slli    a6, s1, 2               # a6 = OW*4
cv_cb:
        mv      s10, zero               # s10 = oy
        mv      a7, a2                  # a7 = y[cb*4, oy, 0]
        mv      a1, a0                  # a1 = x[0, oy, 0]
cv_oy:
        mv      s11, zero               # s11 = ox
cv_ox:
        ble     s11, a5, 1f
        mv      s11, a5
1:      slli    t0, s11, 2
        add     t0, t0, a1              # t0 = x[0, oy, ox]
        mv      t1, s7                  # t1 = off[j]
        mv      t2, s8                  # t2 = wp[cb][j]
        lw      t4, 0(t1)
        addi    t1, t1, 4
        add     t3, t0, t4
        lw      t4, 0(t1)
        flw     ft0, 0(t3)
        flw     ft1, 4(t3)
        flw     ft2, 8(t3)
        flw     ft3, 12(t3)
        flw     ft4, 0(t2)
        flw     ft5, 4(t2)
        flw     ft6, 8(t2)
        flw     ft7, 12(t2)
        fmul.s  fs0, ft4, ft0
        fmul.s  fs1, ft4, ft1
        fmul.s  fs2, ft4, ft2
        fmul.s  fs3, ft4, ft3
        fmul.s  fs4, ft5, ft0
        fmul.s  fs5, ft5, ft1
        fmul.s  fs6, ft5, ft2
        fmul.s  fs7, ft5, ft3
        fmul.s  fs8, ft6, ft0
        fmul.s  fs9, ft6, ft1
        fmul.s  fs10, ft6, ft2
        fmul.s  fs11, ft6, ft3
        fmul.s  ft8, ft7, ft0
        fmul.s  ft9, ft7, ft1
        fmul.s  ft10, ft7, ft2
        fmul.s  ft11, ft7, ft3
        addi    t2, t2, 16
        bgeu    t1, s9, cv_st
cv_j:
        addi    t1, t1, 4
        add     t3, t0, t4
        lw      t4, 0(t1)               # the next step's offset (one past the end: harmless)
        flw     ft0, 0(t3)
        flw     ft1, 4(t3)
        flw     ft2, 8(t3)
        flw     ft3, 12(t3)
        flw     ft4, 0(t2)
        flw     ft5, 4(t2)
        flw     ft6, 8(t2)
        flw     ft7, 12(t2)
        fmadd.s fs0, ft4, ft0, fs0
        fmadd.s fs1, ft4, ft1, fs1
        fmadd.s fs2, ft4, ft2, fs2
        fmadd.s fs3, ft4, ft3, fs3
        fmadd.s fs4, ft5, ft0, fs4
        fmadd.s fs5, ft5, ft1, fs5
        fmadd.s fs6, ft5, ft2, fs6
        fmadd.s fs7, ft5, ft3, fs7
        fmadd.s fs8, ft6, ft0, fs8
        fmadd.s fs9, ft6, ft1, fs9
        fmadd.s fs10, ft6, ft2, fs10
        fmadd.s fs11, ft6, ft3, fs11
        fmadd.s ft8, ft7, ft0, ft8
        fmadd.s ft9, ft7, ft1, ft9
        fmadd.s ft10, ft7, ft2, ft10
        fmadd.s ft11, ft7, ft3, ft11
        addi    t2, t2, 16
        bltu    t1, s9, cv_j
cv_st:
        slli    t5, s11, 2
        add     t5, t5, a7              # y[cb*4, oy, ox]
        fsw     fs0, 0(t5)
        fsw     fs1, 4(t5)
        fsw     fs2, 8(t5)
        fsw     fs3, 12(t5)
        add     t5, t5, s6
        fsw     fs4, 0(t5)
        fsw     fs5, 4(t5)
        fsw     fs6, 8(t5)
        fsw     fs7, 12(t5)
        add     t5, t5, s6
        fsw     fs8, 0(t5)
        fsw     fs9, 4(t5)
        fsw     fs10, 8(t5)
        fsw     fs11, 12(t5)
        add     t5, t5, s6
        fsw     ft8, 0(t5)
        fsw     ft9, 4(t5)
        fsw     ft10, 8(t5)
        fsw     ft11, 12(t5)
        addi    s11, s11, 4
        blt     s11, s1, cv_ox
        add     a7, a7, a6
        add     a1, a1, s5
        addi    s10, s10, 1
        blt     s10, s0, cv_oy
        add     a2, a2, a3
        slli    t0, s3, 4
        add     s8, s8, t0              # next block of packed weights
        addi    a4, a4, -1
        bnez    a4, cv_cb
        add     sp, sp, s4
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
