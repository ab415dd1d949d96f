# batch_matmul on coral (RV32IMF + Zve32x, VLEN = 128): c[B, M, N] = a[B, M, K] @ b[B, K, N] per batch,
# int8 inputs, int8 output requantised from the exact int32 sums: c = clamp((acc + 2^(s-1)) >> s,
# -128, 127) with s = 7 + (log2(K) + 1) / 2 (tasks/level1/batch_matmul.yaml).
#
# Entry: a0 = a, a1 = b, a2 = c, a3 = B, a4 = M, a5 = K, a6 = N. M must be even (every configuration's is).
#
# Algorithm: per batch, the gemm kernel's outer products on the vector unit. Two rows of c, 32
# columns wide (vl = min(32, N - n0)), live in two int32 register groups (e32, m8: v0-v7, v8-v15)
# for the whole k loop. One k step loads b[k, n0:n0+32] once (vle8, e8 m2), multiplies it by the
# scalars a[m, k], a[m+1, k] (lb) into int16 products (vwmul.vx, exact) and widens them into the
# int32 accumulators (vwadd.wv at e16 m4; int16 cannot hold even two products of -128 * -128). The
# first step widens with vwadd.vx (+0) instead of clearing the accumulators. The vector multiplier
# is the bound: 64 multiply-adds per 8 cycles, the widening adds run on the two vector ALUs. The k
# loop is unrolled by two, with the next step's scalar loads between the two multiplies.
# Requantisation, once per two rows of 32 sums, in the vector unit: vnclip.wx narrows int32 to int16
# shifting right by s with the rounding of vxrm = 0 (rnu: adds the last bit shifted out, which is
# exactly round half up) and saturating; vnclip.wi by 0 then saturates int16 to int8. The two
# narrowings keep SEW/LMUL (e32 m8 -> e16 m4 -> e8 m2), so vl carries over through vsetvli zero, zero.
        .text
        .globl batch_matmul
batch_matmul:
        csrwi   vxrm, 0                 # fixed-point rounding: round to nearest, half up (rnu)
        addi    sp, sp, -32
        sw      s4, 16(sp)
        sw      s5, 20(sp)
        sw      s0, 0(sp)
        sw      s1, 4(sp)
        sw      s2, 8(sp)
        sw      s3, 12(sp)
        sw      s6, 24(sp)
        clz     s6, a5
        li      t0, 32
        sub     s6, t0, s6              # log2(K) + 1 = 32 - clz(K)
        srli    s6, s6, 1
        addi    s6, s6, 7               # s6 = s = 7 + (log2(K) + 1) / 2
        mul     a7, a5, a6              # a7 = K*N: one b matrix
bm_b:
        mv      s2, a6                  # s2 = N: a row of c (int8)
        mv      s3, zero                # s3 = n0
bm_n:
        sub     t6, a6, s3             # columns left: vl = min(32, N - n0)
        mv      t0, a0                 # t0 = a[m, 0]
        add     t1, a2, s3              # t1 = c[m, n0]
        mv      t2, a4                 # rows left
bm_m:
        add     t3, t0, a5             # t3 = a[m+1, 0]
        add     t4, a1, s3            # t4 = b[0, n0]
        lb      s0, 0(t0)
        lb      s1, 0(t3)
        vsetvli zero, t6, e8, m2, ta, ma
        vle8.v  v24, (t4)
        vwmul.vx v16, v24, s0
        vwmul.vx v20, v24, s1
        vsetvli zero, zero, e16, m4, ta, ma
        vwadd.vx v0, v16, zero          # first step: acc = widen(product)
        vwadd.vx v8, v20, zero
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
        vnclip.wx v16, v0, s6           # int32 -> int16: (acc + 2^(s-1)) >> s, saturated
        vnclip.wx v20, v8, s6
        vsetvli zero, zero, e8, m2, ta, ma
        vnclip.wi v16, v16, 0           # int16 -> int8: saturate to [-128, 127]
        vnclip.wi v20, v20, 0
        vse8.v  v16, (t1)
        add     t1, t1, s2
        vse8.v  v20, (t1)
        add     t1, t1, s2
        addi    t0, t3, 1               # a[m+2, 0]
        addi    t2, t2, -2
        bnez    t2, bm_m
        addi    s3, s3, 32
        blt     s3, a6, bm_n
        mul     t0, a4, a5
        add     a0, a0, t0            # past this a
        mul     t0, a4, s2
        add     a2, a2, t0          # past this c
        add     a1, a1, a7
        addi    a3, a3, -1
        bnez    a3, bm_b
        lw      s0, 0(sp)
        lw      s1, 4(sp)
        lw      s2, 8(sp)
        lw      s3, 12(sp)
        lw      s4, 16(sp)
        lw      s5, 20(sp)
        lw      s6, 24(sp)
        addi    sp, sp, 32
        ret
