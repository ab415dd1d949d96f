# linear on coral (RV32IMF + Zve32x, VLEN = 128): y[M, N] = x[M, K] @ w[N, K]^T + bias[N], int8 x and w,
# int32 bias, int8 output requantised from the exact int32 sums plus bias (as TFLite's int8 layers):
# y = clamp((acc + 2^(s-1)) >> s, -128, 127) with s = 7 + (log2(K) + 1) / 2 (tasks/level1/linear.yaml).
#
# Entry: a0 = x, a1 = w, a2 = bias, a3 = y, a4 = M, a5 = K, a6 = N. M must be even and K a multiple
# of 4 (every configuration's are).
#
# Algorithm: transpose w once, then outer products as in gemm.
#  1. wT[K, N] = w^T on the stack, four columns of w at a time: a strided vlse32 (stride K) reads
#     w[n, k..k+3] for 32 rows n as 32-bit elements, vse32 writes them to a 128-byte buffer, and a
#     segment load vlseg4e8 splits each 4-byte element into its bytes: field f = w[n, k+f] =
#     wT[k+f, n], stored with vse8. About 0.45 cycles a byte (a vlse8 per column would take one).
#  2. y = x @ wT + bias: two rows of y, 32 columns wide, live in two int32 register groups (e32 m8)
#     that start from bias (vle32); one k step loads wT[k, n0:n0+32] once (vle8, e8 m2), multiplies it by
#     the scalars x[m, k], x[m+1, k] (lb) into int16 products (vwmul.vx, exact) and widens them
#     into the accumulators (vwadd.wv at e16 m4; int16 cannot hold even two products of
#     -128 * -128). The vector multiplier bounds it: 64 multiply-adds per 8 cycles. The k loop is
#     unrolled by two with the next step's scalar loads between the two multiplies.
#  3. Requantisation, once per two rows of 32 sums, in the vector unit: vnclip.wx narrows int32 to
#     int16 shifting right by s with the rounding of vxrm = 0 (rnu: adds the last bit shifted out,
#     exactly round half up) and saturating; vnclip.wi by 0 then saturates int16 to int8. The two
#     narrowings keep SEW/LMUL (e32 m8 -> e16 m4 -> e8 m2), so vl carries over.
        .text
        .globl linear
linear:
        csrwi   vxrm, 0                 # fixed-point rounding: round to nearest, half up (rnu)
        addi    sp, sp, -32
        sw      s4, 16(sp)
        sw      s5, 20(sp)
        sw      s0, 0(sp)
        sw      s1, 4(sp)
        sw      s2, 8(sp)
        sw      s3, 12(sp)
        sw      s6, 24(sp)
        sw      s7, 28(sp)
        clz     s7, a5
        li      t0, 32
        sub     s7, t0, s7              # log2(K) + 1 = 32 - clz(K)
        srli    s7, s7, 1
        addi    s7, s7, 7               # s7 = s = 7 + (log2(K) + 1) / 2
        mul     t0, a5, a6              # K*N bytes of wT
        addi    t0, t0, 128+15          # and a 128-byte transpose buffer
        andi    t0, t0, -16
        sub     sp, sp, t0
        mv      s6, t0                  # s6 = the frame to pop
        mv      a7, sp                  # a7 = wT
        mul     t0, a5, a6
        add     s0, a7, t0              # s0 = the transpose buffer
        mv      t0, zero                # t0 = k
2:      mv      t1, zero                # t1 = n0
3:      sub     t3, a6, t1
        vsetvli t3, t3, e32, m8, ta, ma # vl = min(32, N - n0)
        mul     t4, t1, a5
        add     t4, t4, t0
        add     t4, t4, a1              # &w[n0, k]
        vlse32.v v0, (t4), a5           # w[n0 + i, k..k+3] as one 32-bit element each
        vse32.v v0, (s0)
        vsetvli zero, t3, e8, m2, ta, ma
        vlseg4e8.v v8, (s0)             # field f (v8, v10, v12, v14) = w[n0 + i, k + f]
        mul     t4, t0, a6
        add     t4, t4, t1
        add     t4, t4, a7              # &wT[k, n0]
        vse8.v  v8, (t4)
        add     t4, t4, a6
        vse8.v  v10, (t4)
        add     t4, t4, a6
        vse8.v  v12, (t4)
        add     t4, t4, a6
        vse8.v  v14, (t4)
        add     t1, t1, t3
        blt     t1, a6, 3b
        addi    t0, t0, 4
        blt     t0, a5, 2b
        mv      a1, a7                  # b = wT
        mv      s2, a6                  # s2 = N: a row of y (int8)
        mv      s3, zero                # s3 = n0
li_n:
        sub     t6, a6, s3             # columns left: vl = min(32, N - n0)
        mv      t0, a0                 # t0 = a[m, 0]
        add     t1, a3, s3              # t1 = y[m, n0]
        mv      t2, a4                 # rows left
li_m:
        add     t3, t0, a5             # t3 = a[m+1, 0]
        add     t4, a1, s3            # t4 = b[0, n0]
        lb      s0, 0(t0)
        lb      s1, 0(t3)
        slli    a7, s3, 2
        add     a7, a7, a2
        vsetvli zero, t6, e32, m8, ta, ma
        vle32.v v0, (a7)                # the accumulators start from the bias
        vle32.v v8, (a7)
        vsetvli zero, zero, e8, m2, ta, ma
        vle8.v  v24, (t4)
        vwmul.vx v16, v24, s0
        vwmul.vx v20, v24, s1
        vsetvli zero, zero, e16, m4, ta, ma
        vwadd.wv v0, v0, v16
        vwadd.wv v8, v8, v20
        addi    t5, a5, -1             # steps left after the first
        andi    s0, t5, 1
        beqz    s0, 3f                  # an odd count: one single step first
        addi    t0, t0, 1
        addi    t3, t3, 1
        add     t4, t4, a6
        lb      s0, 0(t0)
        lb      s1, 0(t3)
        vsetvli zero, zero, e8, m2, ta, ma
        vle8.v  v24, (t4)
        vwmul.vx v16, v24, s0
        vwmul.vx v20, v24, s1
        vsetvli zero, zero, e16, m4, ta, ma
        vwadd.wv v0, v0, v16
        vwadd.wv v8, v8, v20
        addi    t5, t5, -1
3:      beqz    t5, 2f
        lb      s0, 1(t0)
        lb      s1, 1(t3)
1:      add     t4, t4, a6
        vsetvli zero, zero, e8, m2, ta, ma
        vle8.v  v24, (t4)
        add     t4, t4, a6
        vwmul.vx v16, v24, s0
        lb      s4, 2(t0)               # the next step's scalars while the multiplier is busy
        lb      s5, 2(t3)
        vwmul.vx v20, v24, s1
        vle8.v  v26, (t4)
        vsetvli zero, zero, e16, m4, ta, ma
        vwadd.wv v0, v0, v16
        vwadd.wv v8, v8, v20
        vsetvli zero, zero, e8, m2, ta, ma
        vwmul.vx v16, v26, s4
        lb      s0, 3(t0)               # the next iteration's scalars
        lb      s1, 3(t3)
        vwmul.vx v20, v26, s5
        addi    t0, t0, 2
        addi    t3, t3, 2
        vsetvli zero, zero, e16, m4, ta, ma
        vwadd.wv v0, v0, v16
        vwadd.wv v8, v8, v20
        addi    t5, t5, -2
        bnez    t5, 1b
2:      vsetvli zero, zero, e16, m4, ta, ma
        vnclip.wx v16, v0, s7           # int32 -> int16: (acc + 2^(s-1)) >> s, saturated
        vnclip.wx v20, v8, s7
        vsetvli zero, zero, e8, m2, ta, ma
        vnclip.wi v16, v16, 0           # int16 -> int8: saturate to [-128, 127]
        vnclip.wi v20, v20, 0
        vse8.v  v16, (t1)
        add     t1, t1, s2
        vse8.v  v20, (t1)
        add     t1, t1, s2
        addi    t0, t3, 1               # a[m+2, 0]
        addi    t2, t2, -2
        bnez    t2, li_m
        addi    s3, s3, 32
        blt     s3, a6, li_n
        mul     t0, a4, a5
        add     a0, a0, t0            # past this a
        mul     t0, a4, s2
        add     a3, a3, t0          # past this c
        add     sp, sp, s6
        lw      s0, 0(sp)
        lw      s1, 4(sp)
        lw      s2, 8(sp)
        lw      s3, 12(sp)
        lw      s4, 16(sp)
        lw      s5, 20(sp)
        lw      s6, 24(sp)
        lw      s7, 28(sp)
        addi    sp, sp, 32
        ret
