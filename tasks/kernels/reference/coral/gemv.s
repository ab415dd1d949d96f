# gemv on coral (RV32IMF + Zve32x, VLEN = 128): y[M] = a[M, K] @ x[K], int8 inputs, int8 output
# requantised from the exact int32 sums: y = clamp((acc + 2^(s-1)) >> s, -128, 127) with
# s = 7 + (log2(K) + 1) / 2 (tasks/level1/gemv.yaml).
#
# Entry: a0 = a, a1 = x, a2 = y, a3 = M, a4 = K. M must be even (every configuration's is).
#
# Algorithm: dot products on the vector unit, two rows at a time so every chunk of x is loaded once
# for both. A chunk is 32 columns (vl = min(32, K - k0), e8 m2): the rows' chunks are multiplied
# elementwise by x's (vwmul.vv, exact int16 products) and widened into one int32 accumulator per
# row (vwadd.wv at e16 m4; int16 cannot hold even two products of -128 * -128); the first chunk
# widens with vwadd.vx (+0) instead of clearing the accumulators. The 32 partial sums of a row are
# folded in halves with vadd.vv (16, 8, then 4 lanes: cheap on the two vector ALUs) and finished
# by one vredsum.vs over 4 lanes, so the reduction unit never holds up the in-order issue. Per chunk
# the vector multiplier is the bound (two vwmul of 4 cycles for 64 multiply-adds); the loads of the
# next chunk are software-pipelined into the current one, each right after the last use of its
# register, so the in-order issue never waits on the load/store unit.
# Requantisation of the pair in the vector unit: the two sums are put side by side (vredsum into v16
# and v18, vslideup), vnclip.wx narrows them int32 -> int16 shifting right by s with the rounding of
# vxrm = 0 (rnu: adds the last bit shifted out, exactly round half up) and saturating, vnclip.wi by 0
# saturates int16 -> int8, and one vse8 stores both bytes.
        .text
        .globl gemv
gemv:
        csrwi   vxrm, 0                 # fixed-point rounding: round to nearest, half up (rnu)
        clz     a5, a4
        li      t0, 32
        sub     a5, t0, a5              # log2(K) + 1 = 32 - clz(K)
        srli    a5, a5, 1
        addi    a5, a5, 7               # a5 = s = 7 + (log2(K) + 1) / 2
        vsetivli zero, 1, e32, m1, ta, ma
        vmv.s.x v30, zero               # v30[0] = 0: the reductions' start value
        mv      t0, a0                  # t0 = a[m, 0]
gv_m:
        add     t1, t0, a4              # t1 = a[m+1, 0]
        mv      t2, a1                  # t2 = x[k0]
        vsetvli t4, a4, e8, m2, ta, ma
        mv      t5, t4                  # t5 = lanes in use (the first chunk's vl)
        vle8.v  v24, (t2)
        vle8.v  v26, (t0)
        vle8.v  v28, (t1)
        add     t0, t0, t4
        add     t1, t1, t4
        add     t2, t2, t4
        sub     t3, a4, t4              # t3 = columns after this chunk
        vwmul.vv v16, v26, v24
        vle8.v  v26, (t0)               # the next chunk's loads, each after its register's last use
        vwmul.vv v20, v28, v24
        vle8.v  v28, (t1)
        vsetvli zero, zero, e16, m4, ta, ma
        vwadd.vx v0, v16, zero          # acc = widen(product): no clearing pass
        vwadd.vx v8, v20, zero
        vle8.v  v24, (t2)
        beqz    t3, 2f
1:      vsetvli t4, t3, e8, m2, ta, ma
        add     t0, t0, t4
        add     t1, t1, t4
        add     t2, t2, t4
        sub     t3, t3, t4
        vwmul.vv v16, v26, v24
        vle8.v  v26, (t0)               # (one chunk past the last: harmless reads)
        vwmul.vv v20, v28, v24
        vle8.v  v28, (t1)
        vsetvli zero, zero, e16, m4, ta, ma
        vwadd.wv v0, v0, v16
        vwadd.wv v8, v8, v20
        vle8.v  v24, (t2)
        bnez    t3, 1b
2:
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
4:      vredsum.vs v16, v0, v30         # v16[0] = row m's sum
        vredsum.vs v18, v8, v30         # v18[0] = row m+1's
        vsetivli zero, 2, e32, m1, ta, ma
        vslideup.vi v16, v18, 1         # v16[0..1] = both sums
        vsetvli zero, zero, e16, m1, ta, ma
        vnclip.wx v16, v16, a5          # int32 -> int16: (acc + 2^(s-1)) >> s, saturated
        vsetvli zero, zero, e8, m1, ta, ma
        vnclip.wi v16, v16, 0           # int16 -> int8: saturate to [-128, 127]
        vse8.v  v16, (a2)
        addi    a2, a2, 2
        mv      t0, t1                  # t1 ended at a[m+2, 0]
        addi    a3, a3, -2
        bnez    a3, gv_m
        ret
