# relu on coral (RV32IMF + Zbb + Zve32x, VLEN = 128): y[i] = max(x[i], 0), f32.
#
# Entry: a0 = x, a1 = y, a2 = N.
#
# Algorithm: the vector unit has no floating point (Zve32x), but relu needs none: read as a signed
# 32-bit integer, a float is negative exactly when its sign bit is set, and max(bits, 0) gives the
# bits of relu(x) (-0.0 becomes +0.0, which relu allows). So the bulk runs as integer vectors:
# vle32 / vmax.vx / vse32 on 32 lanes (e32 m8), bound by the vector load/store unit (one 128-bit
# register per cycle: 16 cycles per 32 elements). The scalar load/store unit is a separate port, so
# each 32-lane block also carries 8 more elements through the scalar pipe (lw, Zbb max, sw), placed
# between the vector instructions so that the in-order issue never waits: 40 elements per ~16
# cycles. The last N mod 40 elements are strip-mined with vsetvli.
        .text
        .globl relu
relu:
        li      t0, 40
        li      t1, 32
        blt     a2, t0, 2f
        vsetvli zero, t1, e32, m8, ta, ma
1:      vle32.v v0, (a0)                # elements 0..31: vector
        lw      t2, 128(a0)             # elements 32..39: scalar, beside the vector port
        lw      t3, 132(a0)
        lw      t4, 136(a0)
        lw      t5, 140(a0)
        max     t2, t2, zero
        max     t3, t3, zero
        max     t4, t4, zero
        max     t5, t5, zero
        sw      t2, 128(a1)
        sw      t3, 132(a1)
        sw      t4, 136(a1)
        sw      t5, 140(a1)
        vmax.vx v0, v0, zero
        vse32.v v0, (a1)
        lw      t2, 144(a0)
        lw      t3, 148(a0)
        lw      t4, 152(a0)
        lw      t5, 156(a0)
        max     t2, t2, zero
        max     t3, t3, zero
        max     t4, t4, zero
        max     t5, t5, zero
        sw      t2, 144(a1)
        sw      t3, 148(a1)
        sw      t4, 152(a1)
        sw      t5, 156(a1)
        addi    a0, a0, 160
        addi    a1, a1, 160
        addi    a2, a2, -40
        bge     a2, t0, 1b
2:      beqz    a2, 4f
3:      vsetvli t1, a2, e32, m8, ta, ma
        vle32.v v0, (a0)
        vmax.vx v0, v0, zero
        vse32.v v0, (a1)
        slli    t2, t1, 2
        add     a0, a0, t2
        add     a1, a1, t2
        sub     a2, a2, t1
        bnez    a2, 3b
4:      ret
