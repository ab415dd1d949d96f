# linear on coral (RV32IMF + Zve32x, VLEN = 128): y[M, N] = x[M, K] @ w[N, K]^T + bias[N], int8 inputs
# (bias too), int32 output.
#
# Entry: a0 = x, a1 = w, a2 = bias, a3 = y, a4 = M, a5 = K, a6 = N. N must be even (every
# configuration's is).
#
# Algorithm: both operands are contiguous along k, so every output is a dot product on the vector
# unit. Two outputs y[m, n], y[m, n+1] are computed together, sharing each chunk of x[m, :]: a chunk
# is 32 columns (vl = min(32, K - k0), e8 m2); w's rows are multiplied elementwise by x's chunk
# (vwmul.vv, exact int16 products) and widened into one int32 accumulator each (vwadd.wv at e16 m4;
# int16 cannot hold even two products of -128 * -128), the first chunk with vwadd.vx (+0) instead of
# clearing. The 32 partial sums are folded in halves with vadd.vv (16, 8, 4 lanes) and finished by
# one vredsum.vs over 4 lanes; the bias is added in the scalar unit. The vector multiplier bounds
# the chunk loop (two vwmul of 4 cycles for 64 multiply-adds).
        .text
        .globl linear
linear:
        addi    sp, sp, -16
        sw      s0, 0(sp)
        sw      s1, 4(sp)
        vsetivli zero, 1, e32, m1, ta, ma
        vmv.s.x v30, zero               # v30[0] = 0: the reductions' start value
li_m:
        mv      t0, a1                  # t0 = w[n, 0]
        mv      s0, a2                  # s0 = bias[n]
        mv      s1, a6                  # outputs left in this row
li_n:
        add     t1, t0, a5              # t1 = w[n+1, 0]
        mv      t2, a0                  # t2 = x[m, k0]
        mv      t3, a5                  # t3 = columns left
        vsetvli t4, t3, e8, m2, ta, ma
        vle8.v  v24, (t2)
        vle8.v  v26, (t0)
        vwmul.vv v16, v26, v24
        vle8.v  v28, (t1)               # loads while the multiplier works (the core issues in order)
        vwmul.vv v20, v28, v24
        vsetvli zero, zero, e16, m4, ta, ma
        vwadd.vx v0, v16, zero          # acc = widen(product): no clearing pass
        vwadd.vx v8, v20, zero
        mv      t5, t4                  # t5 = lanes in use (the first chunk's vl)
        j       2f
1:      vsetvli t4, t3, e8, m2, ta, ma
        vle8.v  v24, (t2)
        vle8.v  v26, (t0)
        vwmul.vv v16, v26, v24
        vle8.v  v28, (t1)
        vwmul.vv v20, v28, v24
        vsetvli zero, zero, e16, m4, ta, ma
        vwadd.wv v0, v0, v16
        vwadd.wv v8, v8, v20
2:      add     t0, t0, t4
        add     t1, t1, t4
        add     t2, t2, t4
        sub     t3, t3, t4
        bnez    t3, 1b
        li      t6, 32
        bne     t5, t6, 3f              # fewer than 32 lanes: reduce them directly
        vsetivli zero, 16, e32, m4, ta, ma
        vadd.vv v0, v0, v4
        vadd.vv v8, v8, v12
        vsetivli zero, 8, e32, m2, ta, ma
        vadd.vv v0, v0, v2
        vadd.vv v8, v8, v10
        vsetivli zero, 4, e32, m1, ta, ma
        vadd.vv v0, v0, v1
        vadd.vv v8, v8, v9
        j       4f
3:      vsetvli zero, t5, e32, m8, ta, ma
4:      vredsum.vs v16, v0, v30
        vredsum.vs v17, v8, v30
        lb      t5, 0(s0)
        lb      t6, 1(s0)
        vmv.x.s t4, v16
        vsetivli zero, 1, e32, m1, ta, ma
        add     t5, t5, t4
        vmv.x.s t4, v17
        add     t6, t6, t4
        sw      t5, 0(a3)
        sw      t6, 4(a3)
        addi    a3, a3, 8
        addi    s0, s0, 2
        mv      t0, t1                  # t1 ended at w[n+2, 0]
        addi    s1, s1, -2
        bnez    s1, li_n
        add     a0, a0, a5              # next row of x
        addi    a4, a4, -1
        bnez    a4, li_m
        lw      s0, 0(sp)
        lw      s1, 4(sp)
        addi    sp, sp, 16
        ret
