# batch_matmul on boom (RV64IMFD, out of order): c[B, M, N] = a[B, M, K] @ b[B, K, N] per batch,
# f32, row-major.
#
# Entry: a0 = a, a1 = b, a2 = c, a3 = B, a4 = M, a5 = K, a6 = N. M and N must be multiples of 4
# (every configuration's are), K >= 1.
#
# Algorithm: for each batch, the gemm kernel's register blocking. Each 4x4 tile of c lives in 16 FP
# registers for the whole k loop; one k step loads a[i..i+3, k] and b[k, j..j+3] and issues 16
# independent fmadd.s, so the one FP pipe never waits on an FMA chain and the 8 loads use half the
# memory port: about one FMA per cycle, the FP roofline. The first k step multiplies (fmul.s)
# instead of zeroing the tile. After (K - 1) % 4 single steps the k loop takes four steps at a
# time (a at offsets 4..16, rows k+1..k+4 of b through a0..a3): a quarter of the pointer updates
# and loop branches, the same FMAs in the same order. Accumulation is in f32 in k order.

        .text
        .globl batch_matmul
batch_matmul:
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
        mv      s0, a0
        mv      s1, a1
        mv      s2, a2
        mv      s10, a3                 # s10 = batches left
        mv      s3, a4
        mv      s4, a5
        mv      s5, a6
        mul     s11, a5, a6
        slli    s11, s11, 2             # s11 = K*N*4: one b matrix
bm_batch:
        slli    s6, s5, 2               # s6 = N*4: row stride of b and c
        slli    s7, s4, 2               # s7 = K*4: row stride of a
        slli    s8, s7, 2               # s8 = 4 rows of a
        slli    s9, s6, 2               # s9 = 4 rows of c
        mv      a6, s3                  # a6 = rows left
bm_i:
        mv      a7, zero                # a7 = column j*4 (bytes)
bm_j:
        mv      t0, s0                  # t0..t3: rows i..i+3 of a, at k
        add     t1, t0, s7
        add     t2, t1, s7
        add     t3, t2, s7
        add     t4, s1, a7              # t4: b[k, j]
        addi    t5, s4, -1              # t5 = K - 1 steps after the first
        flw     ft0, 0(t0)
        flw     ft1, 0(t1)
        flw     ft2, 0(t2)
        flw     ft3, 0(t3)
        flw     ft4, 0(t4)
        flw     ft5, 4(t4)
        flw     ft6, 8(t4)
        flw     ft7, 12(t4)
        fmul.s  fs0, ft0, ft4
        fmul.s  fs1, ft0, ft5
        fmul.s  fs2, ft0, ft6
        fmul.s  fs3, ft0, ft7
        fmul.s  fs4, ft1, ft4
        fmul.s  fs5, ft1, ft5
        fmul.s  fs6, ft1, ft6
        fmul.s  fs7, ft1, ft7
        fmul.s  fs8, ft2, ft4
        fmul.s  fs9, ft2, ft5
        fmul.s  fs10, ft2, ft6
        fmul.s  fs11, ft2, ft7
        fmul.s  ft8, ft3, ft4
        fmul.s  ft9, ft3, ft5
        fmul.s  ft10, ft3, ft6
        fmul.s  ft11, ft3, ft7
        andi    t6, t5, 3               # t6 = (K - 1) % 4 single steps first
        srli    t5, t5, 2               # t5 = (K - 1) / 4 steps of four
        beqz    t6, bm_k4
bm_k:
        addi    t0, t0, 4
        addi    t1, t1, 4
        addi    t2, t2, 4
        addi    t3, t3, 4
        add     t4, t4, s6
        flw     ft0, 0(t0)
        flw     ft1, 0(t1)
        flw     ft2, 0(t2)
        flw     ft3, 0(t3)
        flw     ft4, 0(t4)
        flw     ft5, 4(t4)
        flw     ft6, 8(t4)
        flw     ft7, 12(t4)
        fmadd.s fs0, ft0, ft4, fs0
        fmadd.s fs1, ft0, ft5, fs1
        fmadd.s fs2, ft0, ft6, fs2
        fmadd.s fs3, ft0, ft7, fs3
        fmadd.s fs4, ft1, ft4, fs4
        fmadd.s fs5, ft1, ft5, fs5
        fmadd.s fs6, ft1, ft6, fs6
        fmadd.s fs7, ft1, ft7, fs7
        fmadd.s fs8, ft2, ft4, fs8
        fmadd.s fs9, ft2, ft5, fs9
        fmadd.s fs10, ft2, ft6, fs10
        fmadd.s fs11, ft2, ft7, fs11
        fmadd.s ft8, ft3, ft4, ft8
        fmadd.s ft9, ft3, ft5, ft9
        fmadd.s ft10, ft3, ft6, ft10
        fmadd.s ft11, ft3, ft7, ft11
        addi    t6, t6, -1
        bnez    t6, bm_k
bm_k4:
        beqz    t5, bm_st
        add     a0, t4, s6              # a0..a3: rows k+1..k+4 of b, at column j
        add     a1, a0, s6
        add     a2, a1, s6
        add     a3, a2, s6
        slli    a4, s6, 2               # a4 = 4 rows of b
bm_q:  # four k steps: a at offsets 4..16, b rows from a0..a3
        flw     ft0, 4(t0)
        flw     ft1, 4(t1)
        flw     ft2, 4(t2)
        flw     ft3, 4(t3)
        flw     ft4, 0(a0)
        flw     ft5, 4(a0)
        flw     ft6, 8(a0)
        flw     ft7, 12(a0)
        fmadd.s fs0, ft0, ft4, fs0
        fmadd.s fs1, ft0, ft5, fs1
        fmadd.s fs2, ft0, ft6, fs2
        fmadd.s fs3, ft0, ft7, fs3
        fmadd.s fs4, ft1, ft4, fs4
        fmadd.s fs5, ft1, ft5, fs5
        fmadd.s fs6, ft1, ft6, fs6
        fmadd.s fs7, ft1, ft7, fs7
        fmadd.s fs8, ft2, ft4, fs8
        fmadd.s fs9, ft2, ft5, fs9
        fmadd.s fs10, ft2, ft6, fs10
        fmadd.s fs11, ft2, ft7, fs11
        fmadd.s ft8, ft3, ft4, ft8
        fmadd.s ft9, ft3, ft5, ft9
        fmadd.s ft10, ft3, ft6, ft10
        fmadd.s ft11, ft3, ft7, ft11
        flw     ft0, 8(t0)
        flw     ft1, 8(t1)
        flw     ft2, 8(t2)
        flw     ft3, 8(t3)
        flw     ft4, 0(a1)
        flw     ft5, 4(a1)
        flw     ft6, 8(a1)
        flw     ft7, 12(a1)
        fmadd.s fs0, ft0, ft4, fs0
        fmadd.s fs1, ft0, ft5, fs1
        fmadd.s fs2, ft0, ft6, fs2
        fmadd.s fs3, ft0, ft7, fs3
        fmadd.s fs4, ft1, ft4, fs4
        fmadd.s fs5, ft1, ft5, fs5
        fmadd.s fs6, ft1, ft6, fs6
        fmadd.s fs7, ft1, ft7, fs7
        fmadd.s fs8, ft2, ft4, fs8
        fmadd.s fs9, ft2, ft5, fs9
        fmadd.s fs10, ft2, ft6, fs10
        fmadd.s fs11, ft2, ft7, fs11
        fmadd.s ft8, ft3, ft4, ft8
        fmadd.s ft9, ft3, ft5, ft9
        fmadd.s ft10, ft3, ft6, ft10
        fmadd.s ft11, ft3, ft7, ft11
        flw     ft0, 12(t0)
        flw     ft1, 12(t1)
        flw     ft2, 12(t2)
        flw     ft3, 12(t3)
        flw     ft4, 0(a2)
        flw     ft5, 4(a2)
        flw     ft6, 8(a2)
        flw     ft7, 12(a2)
        fmadd.s fs0, ft0, ft4, fs0
        fmadd.s fs1, ft0, ft5, fs1
        fmadd.s fs2, ft0, ft6, fs2
        fmadd.s fs3, ft0, ft7, fs3
        fmadd.s fs4, ft1, ft4, fs4
        fmadd.s fs5, ft1, ft5, fs5
        fmadd.s fs6, ft1, ft6, fs6
        fmadd.s fs7, ft1, ft7, fs7
        fmadd.s fs8, ft2, ft4, fs8
        fmadd.s fs9, ft2, ft5, fs9
        fmadd.s fs10, ft2, ft6, fs10
        fmadd.s fs11, ft2, ft7, fs11
        fmadd.s ft8, ft3, ft4, ft8
        fmadd.s ft9, ft3, ft5, ft9
        fmadd.s ft10, ft3, ft6, ft10
        fmadd.s ft11, ft3, ft7, ft11
        flw     ft0, 16(t0)
        flw     ft1, 16(t1)
        flw     ft2, 16(t2)
        flw     ft3, 16(t3)
        flw     ft4, 0(a3)
        flw     ft5, 4(a3)
        flw     ft6, 8(a3)
        flw     ft7, 12(a3)
        fmadd.s fs0, ft0, ft4, fs0
        fmadd.s fs1, ft0, ft5, fs1
        fmadd.s fs2, ft0, ft6, fs2
        fmadd.s fs3, ft0, ft7, fs3
        fmadd.s fs4, ft1, ft4, fs4
        fmadd.s fs5, ft1, ft5, fs5
        fmadd.s fs6, ft1, ft6, fs6
        fmadd.s fs7, ft1, ft7, fs7
        fmadd.s fs8, ft2, ft4, fs8
        fmadd.s fs9, ft2, ft5, fs9
        fmadd.s fs10, ft2, ft6, fs10
        fmadd.s fs11, ft2, ft7, fs11
        fmadd.s ft8, ft3, ft4, ft8
        fmadd.s ft9, ft3, ft5, ft9
        fmadd.s ft10, ft3, ft6, ft10
        fmadd.s ft11, ft3, ft7, ft11
        addi    t0, t0, 16
        addi    t1, t1, 16
        addi    t2, t2, 16
        addi    t3, t3, 16
        add     a0, a0, a4
        add     a1, a1, a4
        add     a2, a2, a4
        add     a3, a3, a4
        addi    t5, t5, -1
        bnez    t5, bm_q
bm_st:
        add     t0, s2, a7              # c[i, j]
        fsw     fs0, 0(t0)
        fsw     fs1, 4(t0)
        fsw     fs2, 8(t0)
        fsw     fs3, 12(t0)
        add     t0, t0, s6
        fsw     fs4, 0(t0)
        fsw     fs5, 4(t0)
        fsw     fs6, 8(t0)
        fsw     fs7, 12(t0)
        add     t0, t0, s6
        fsw     fs8, 0(t0)
        fsw     fs9, 4(t0)
        fsw     fs10, 8(t0)
        fsw     fs11, 12(t0)
        add     t0, t0, s6
        fsw     ft8, 0(t0)
        fsw     ft9, 4(t0)
        fsw     ft10, 8(t0)
        fsw     ft11, 12(t0)
        addi    a7, a7, 16
        bltu    a7, s6, bm_j
        add     s0, s0, s8
        add     s2, s2, s9
        addi    a6, a6, -4
        bnez    a6, bm_i
        add     s1, s1, s11             # next b
        addi    s10, s10, -1
        bnez    s10, bm_batch
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
