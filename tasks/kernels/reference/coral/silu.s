# silu on coral (RV32IMF + Zbb, in-order, scalar F unit): y[i] = x[i] / (1 + exp(-x[i])) = x[i] * sigmoid(x[i]).
#
# Entry: a0 = x, a1 = y, a2 = N.
#
# Algorithm: sigmoid by table-driven piecewise polynomials, with no exp and no division. The range
# [-17.0, 17.0) is cut into 136 intervals of width h = 0.25; on each, sigmoid is a degree-3
# polynomial in u = x - center (Chebyshev interpolation, coefficients rounded to f32). Entry 0 is
# the constant 0 (x < -17.0: sigmoid < 4.2e-8) and entry 136+1 the constant 1 (x >= 17.0). The entry
# is j = clamp(fcvt.w.s(x/h + 1 - lo/h), 0, 136+1) (rtz; Zbb max / minu clamp it), then
# y = x * p(u) by Horner. Measured error of p against sigmoid over x in [-300, 300], f32
# evaluation: at most 2.0e-07 absolute (|y - silu(x)| <= 8.8e-07), far inside the f32 tolerance.
# Cost per element: 7 FP operations (scale, convert, u, 3 FMAs, product) and 7 loads/stores (x, 5
# table words, y), so the FPU and the load/store port are both the bound. The core issues in order,
# so the loop is software-pipelined by modulo scheduling (computed offline from the
# latencies: load 2, FP 3, ALU 1): one element enters every 7 cycles, its 7 FP operations and 7
# memory operations on distinct slots of the 7-cycle period, 7 elements (registers rotate) per
# 49-cycle loop step, no instruction waiting for an operand. N mod 7 leftovers take a
# one-element loop.

        .text
        .globl silu
silu:
        addi    sp, sp, -40
        fsw     f8, 0(sp)
        fsw     f9, 4(sp)
        fsw     f18, 8(sp)
        fsw     f19, 12(sp)
        fsw     f20, 16(sp)
        fsw     f21, 20(sp)
        fsw     f22, 24(sp)
        fsw     f23, 28(sp)
        fsw     f24, 32(sp)
        fsw     f25, 36(sp)
        li      t0, 0x40800000
        fmv.w.x f24, t0                 # 1/h
        li      t0, 0x428a0000
        fmv.w.x f25, t0                 # 1 - lo/h
        li      a4, 137                  # a4 = the last table entry
        la      a5, silu_tab
        li      a3, 7
        divu    a6, a2, a3              # a6 = groups of 7
        remu    a2, a2, a3              # a2 = leftovers
        beqz    a6, 5f
        # 7 elements a step, software-pipelined: one element enters every 7 cycles
        # prologue step 0
        flw     f0, 0(a0)
        fmadd.s f7, f0, f24, f25
        flw     f1, 4(a0)
        fcvt.w.s t0, f7, rtz
        max     t0, t0, zero
        minu    t0, t0, a4
        fmadd.s f10, f1, f24, f25
        slli    t0, t0, 5
        add     t0, t0, a5
        flw     f2, 8(a0)
        fcvt.w.s t1, f10, rtz
        flw     f9, 0(t0)
        flw     f16, 16(t0)
        fsub.s  f7, f0, f9
        max     t1, t1, zero
        flw     f9, 12(t0)
        minu    t1, t1, a4
        fmadd.s f11, f2, f24, f25
        slli    t1, t1, 5
        fmadd.s f16, f16, f7, f9
        add     t1, t1, a5
        flw     f3, 12(a0)
        flw     f9, 8(t0)
        fcvt.w.s t2, f11, rtz
        flw     f18, 0(t1)
        fmadd.s f16, f16, f7, f9
        flw     f17, 16(t1)
        flw     f9, 4(t0)
        fsub.s  f10, f1, f18
        max     t2, t2, zero
        flw     f18, 12(t1)
        minu    t2, t2, a4
        fmadd.s f12, f3, f24, f25
        fmadd.s f16, f16, f7, f9
        slli    t2, t2, 5
        fmadd.s f17, f17, f10, f18
        add     t2, t2, a5
        flw     f4, 16(a0)
        flw     f18, 8(t1)
        fcvt.w.s t3, f12, rtz
        fmul.s  f16, f0, f16
        flw     f19, 0(t2)
        fmadd.s f17, f17, f10, f18
        flw     f28, 16(t2)
        flw     f18, 4(t1)
        fsub.s  f11, f2, f19
        max     t3, t3, zero
        flw     f19, 12(t2)
        minu    t3, t3, a4
        fmadd.s f13, f4, f24, f25
        fsw     f16, 0(a1)
        fmadd.s f17, f17, f10, f18
        slli    t3, t3, 5
        fmadd.s f28, f28, f11, f19
        add     t3, t3, a5
        flw     f5, 20(a0)
        flw     f19, 8(t2)
        fcvt.w.s t4, f13, rtz
        fmul.s  f17, f1, f17
        flw     f20, 0(t3)
        fmadd.s f28, f28, f11, f19
        flw     f29, 16(t3)
        flw     f19, 4(t2)
        fsub.s  f12, f3, f20
        max     t4, t4, zero
        flw     f20, 12(t3)
        minu    t4, t4, a4
        fmadd.s f14, f5, f24, f25
        fsw     f17, 4(a1)
        fmadd.s f28, f28, f11, f19
        slli    t4, t4, 5
        fmadd.s f29, f29, f12, f20
        add     t4, t4, a5
        flw     f6, 24(a0)
        flw     f20, 8(t3)
        fcvt.w.s t5, f14, rtz
        fmul.s  f28, f2, f28
        flw     f21, 0(t4)
        fmadd.s f29, f29, f12, f20
        flw     f30, 16(t4)
        flw     f20, 4(t3)
        fsub.s  f13, f4, f21
        max     t5, t5, zero
        flw     f21, 12(t4)
        minu    t5, t5, a4
        fmadd.s f15, f6, f24, f25
        fsw     f28, 8(a1)
        fmadd.s f29, f29, f12, f20
        slli    t5, t5, 5
        addi    a0, a0, 28
        addi    a1, a1, 28
        addi    a6, a6, -1
        beqz    a6, silu_loop_epi
silu_loop:
        flw     f0, 0(a0)
        fmadd.s f30, f30, f13, f21
        add     t5, t5, a5
        flw     f21, 8(t4)
        fcvt.w.s t6, f15, rtz
        fmul.s  f29, f3, f29
        flw     f22, 0(t5)
        fmadd.s f30, f30, f13, f21
        flw     f31, 16(t5)
        flw     f21, 4(t4)
        fsub.s  f14, f5, f22
        max     t6, t6, zero
        fmadd.s f7, f0, f24, f25
        flw     f22, 12(t5)
        minu    t6, t6, a4
        fsw     f29, -16(a1)
        fmadd.s f30, f30, f13, f21
        slli    t6, t6, 5
        flw     f1, 4(a0)
        fmadd.s f31, f31, f14, f22
        add     t6, t6, a5
        fcvt.w.s t0, f7, rtz
        flw     f22, 8(t5)
        fmul.s  f30, f4, f30
        flw     f23, 0(t6)
        fmadd.s f31, f31, f14, f22
        flw     f8, 16(t6)
        max     t0, t0, zero
        flw     f22, 4(t5)
        fsub.s  f15, f6, f23
        minu    t0, t0, a4
        fmadd.s f10, f1, f24, f25
        flw     f23, 12(t6)
        slli    t0, t0, 5
        fsw     f30, -12(a1)
        fmadd.s f31, f31, f14, f22
        add     t0, t0, a5
        flw     f2, 8(a0)
        fmadd.s f8, f8, f15, f23
        fcvt.w.s t1, f10, rtz
        flw     f23, 8(t6)
        flw     f9, 0(t0)
        fmul.s  f31, f5, f31
        flw     f16, 16(t0)
        fmadd.s f8, f8, f15, f23
        fsub.s  f7, f0, f9
        max     t1, t1, zero
        flw     f23, 4(t6)
        flw     f9, 12(t0)
        minu    t1, t1, a4
        fmadd.s f11, f2, f24, f25
        slli    t1, t1, 5
        fsw     f31, -8(a1)
        fmadd.s f8, f8, f15, f23
        fmadd.s f16, f16, f7, f9
        add     t1, t1, a5
        flw     f3, 12(a0)
        flw     f9, 8(t0)
        fcvt.w.s t2, f11, rtz
        flw     f18, 0(t1)
        fmul.s  f8, f6, f8
        fmadd.s f16, f16, f7, f9
        flw     f17, 16(t1)
        flw     f9, 4(t0)
        fsub.s  f10, f1, f18
        max     t2, t2, zero
        flw     f18, 12(t1)
        minu    t2, t2, a4
        fmadd.s f12, f3, f24, f25
        fmadd.s f16, f16, f7, f9
        slli    t2, t2, 5
        fsw     f8, -4(a1)
        fmadd.s f17, f17, f10, f18
        add     t2, t2, a5
        flw     f4, 16(a0)
        flw     f18, 8(t1)
        fcvt.w.s t3, f12, rtz
        fmul.s  f16, f0, f16
        flw     f19, 0(t2)
        fmadd.s f17, f17, f10, f18
        flw     f28, 16(t2)
        flw     f18, 4(t1)
        fsub.s  f11, f2, f19
        max     t3, t3, zero
        flw     f19, 12(t2)
        minu    t3, t3, a4
        fmadd.s f13, f4, f24, f25
        fsw     f16, 0(a1)
        fmadd.s f17, f17, f10, f18
        slli    t3, t3, 5
        fmadd.s f28, f28, f11, f19
        add     t3, t3, a5
        flw     f5, 20(a0)
        flw     f19, 8(t2)
        fcvt.w.s t4, f13, rtz
        fmul.s  f17, f1, f17
        flw     f20, 0(t3)
        fmadd.s f28, f28, f11, f19
        flw     f29, 16(t3)
        flw     f19, 4(t2)
        fsub.s  f12, f3, f20
        max     t4, t4, zero
        flw     f20, 12(t3)
        minu    t4, t4, a4
        fmadd.s f14, f5, f24, f25
        fsw     f17, 4(a1)
        fmadd.s f28, f28, f11, f19
        slli    t4, t4, 5
        fmadd.s f29, f29, f12, f20
        add     t4, t4, a5
        flw     f6, 24(a0)
        flw     f20, 8(t3)
        fcvt.w.s t5, f14, rtz
        fmul.s  f28, f2, f28
        flw     f21, 0(t4)
        fmadd.s f29, f29, f12, f20
        flw     f30, 16(t4)
        flw     f20, 4(t3)
        fsub.s  f13, f4, f21
        max     t5, t5, zero
        flw     f21, 12(t4)
        minu    t5, t5, a4
        fmadd.s f15, f6, f24, f25
        fsw     f28, 8(a1)
        fmadd.s f29, f29, f12, f20
        slli    t5, t5, 5
        addi    a0, a0, 28
        addi    a1, a1, 28
        addi    a6, a6, -1
        bnez    a6, silu_loop
silu_loop_epi:
        # epilogue step 1
        fmadd.s f30, f30, f13, f21
        add     t5, t5, a5
        flw     f21, 8(t4)
        fcvt.w.s t6, f15, rtz
        fmul.s  f29, f3, f29
        flw     f22, 0(t5)
        fmadd.s f30, f30, f13, f21
        flw     f31, 16(t5)
        flw     f21, 4(t4)
        fsub.s  f14, f5, f22
        max     t6, t6, zero
        flw     f22, 12(t5)
        minu    t6, t6, a4
        fsw     f29, -16(a1)
        fmadd.s f30, f30, f13, f21
        slli    t6, t6, 5
        fmadd.s f31, f31, f14, f22
        add     t6, t6, a5
        flw     f22, 8(t5)
        fmul.s  f30, f4, f30
        flw     f23, 0(t6)
        fmadd.s f31, f31, f14, f22
        flw     f8, 16(t6)
        flw     f22, 4(t5)
        fsub.s  f15, f6, f23
        flw     f23, 12(t6)
        fsw     f30, -12(a1)
        fmadd.s f31, f31, f14, f22
        fmadd.s f8, f8, f15, f23
        flw     f23, 8(t6)
        fmul.s  f31, f5, f31
        fmadd.s f8, f8, f15, f23
        flw     f23, 4(t6)
        fsw     f31, -8(a1)
        fmadd.s f8, f8, f15, f23
        fmul.s  f8, f6, f8
        fsw     f8, -4(a1)
        addi    a0, a0, 28
        addi    a1, a1, 28
        addi    a0, a0, -28
        addi    a1, a1, -28
5:      beqz    a2, 9f                  # the N mod 7 leftovers, one at a time
6:
        flw     f0, 0(a0)
        fmadd.s f7, f0, f24, f25
        fcvt.w.s t0, f7, rtz
        max     t0, t0, zero
        minu    t0, t0, a4
        slli    t0, t0, 5
        add     t0, t0, a5
        flw     f9, 0(t0)
        fsub.s  f7, f0, f9
        flw     f16, 16(t0)
        flw     f9, 12(t0)
        fmadd.s f16, f16, f7, f9
        flw     f9, 8(t0)
        fmadd.s f16, f16, f7, f9
        flw     f9, 4(t0)
        fmadd.s f16, f16, f7, f9
        fmul.s  f16, f0, f16
        fsw     f16, 0(a1)
        addi    a0, a0, 4
        addi    a1, a1, 4
        addi    a2, a2, -1
        bnez    a2, 6b
9:      flw     f8, 0(sp)
        flw     f9, 4(sp)
        flw     f18, 8(sp)
        flw     f19, 12(sp)
        flw     f20, 16(sp)
        flw     f21, 20(sp)
        flw     f22, 24(sp)
        flw     f23, 28(sp)
        flw     f24, 32(sp)
        flw     f25, 36(sp)
        addi    sp, sp, 40
        ret

        .section .rodata
        .p2align 5
silu_tab:
        # 138 entries of 8 words: center, c0..c3, padding
        .word   0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000
        .word   0xc1870000, 0x33497bd3, 0x33497be0, 0x32c9bf13, 0x32066d75, 0x00000000, 0x00000000, 0x00000000
        .word   0xc1850000, 0x33815ae7, 0x33815aef, 0x33018614, 0x322c9bbf, 0x00000000, 0x00000000, 0x00000000
        .word   0xc1830000, 0x33a61860, 0x33a6186b, 0x33264fd0, 0x325da22f, 0x00000000, 0x00000000, 0x00000000
        .word   0xc1810000, 0x33d5453e, 0x33d5454b, 0x33558c6b, 0x328e4aa1, 0x00000000, 0x00000000, 0x00000000
        .word   0xc17e0000, 0x3408ec1f, 0x3408ec27, 0x338919d1, 0x32b6b4b5, 0x00000000, 0x00000000, 0x00000000
        .word   0xc17a0000, 0x342fcfd1, 0x342fcfdb, 0x33b00a7b, 0x32ea9953, 0x00000000, 0x00000000, 0x00000000
        .word   0xc1760000, 0x3461bf2d, 0x3461bf39, 0x33e20a7f, 0x33169d8d, 0x00000000, 0x00000000, 0x00000000
        .word   0xc1720000, 0x3490eeab, 0x3490eeb2, 0x34111f04, 0x334164da, 0x00000000, 0x00000000, 0x00000000
        .word   0xc16e0000, 0x34ba18c4, 0x34ba18cc, 0x343a56d6, 0x33785296, 0x00000000, 0x00000000, 0x00000000
        .word   0xc16a0000, 0x34eef3f2, 0x34eef3fb, 0x346f43a1, 0x339f6d18, 0x00000000, 0x00000000, 0x00000000
        .word   0xc1660000, 0x35196929, 0x3519692e, 0x34999c4e, 0x33ccb4ff, 0x00000000, 0x00000000, 0x00000000
        .word   0xc1620000, 0x3544fbbb, 0x3544fbbe, 0x34c53d60, 0x34036ca1, 0x00000000, 0x00000000, 0x00000000
        .word   0xc15e0000, 0x357cee79, 0x357cee7a, 0x34fd42b8, 0x3428c07d, 0x00000000, 0x00000000, 0x00000000
        .word   0xc15a0000, 0x35a2629e, 0x35a2629c, 0x352298ab, 0x3458ae67, 0x00000000, 0x00000000, 0x00000000
        .word   0xc1560000, 0x35d081b5, 0x35d081ae, 0x3550c70f, 0x348b1c9b, 0x00000000, 0x00000000, 0x00000000
        .word   0xc1520000, 0x3605dd27, 0x3605dd1e, 0x358609a2, 0x34b29f54, 0x00000000, 0x00000000, 0x00000000
        .word   0xc14e0000, 0x362be270, 0x362be25f, 0x35ac1b79, 0x34e55ac9, 0x00000000, 0x00000000, 0x00000000
        .word   0xc14a0000, 0x365cb435, 0x365cb414, 0x35dcfd52, 0x35133f6b, 0x00000000, 0x00000000, 0x00000000
        .word   0xc1460000, 0x368db1d1, 0x368db1b3, 0x360de0a7, 0x353d1184, 0x00000000, 0x00000000, 0x00000000
        .word   0xc1420000, 0x36b5f072, 0x36b5f03e, 0x36362c6b, 0x3572c42d, 0x00000000, 0x00000000, 0x00000000
        .word   0xc13e0000, 0x36e99d40, 0x36e99ce5, 0x3669e9fa, 0x359bdb6d, 0x00000000, 0x00000000, 0x00000000
        .word   0xc13a0000, 0x3715fba8, 0x3715fb5a, 0x36962caf, 0x35c81f11, 0x00000000, 0x00000000, 0x00000000
        .word   0xc1360000, 0x374094df, 0x3740945b, 0x36c0d373, 0x36007a53, 0x00000000, 0x00000000, 0x00000000
        .word   0xc1320000, 0x3777475d, 0x3777467f, 0x36f79718, 0x3624f6e9, 0x00000000, 0x00000000, 0x00000000
        .word   0xc12e0000, 0x379ec165, 0x379ec0ab, 0x371ef411, 0x3653cfbe, 0x00000000, 0x00000000, 0x00000000
        .word   0xc12a0000, 0x37cbd84e, 0x37cbd717, 0x374c1885, 0x3687fad4, 0x00000000, 0x00000000, 0x00000000
        .word   0xc1260000, 0x3802dec1, 0x3802ddbe, 0x37830749, 0x36ae9784, 0x00000000, 0x00000000, 0x00000000
        .word   0xc1220000, 0x38280a02, 0x38280854, 0x37a83ce6, 0x36e02a1a, 0x00000000, 0x00000000, 0x00000000
        .word   0xc11e0000, 0x3857c396, 0x3857c0cd, 0x37d80308, 0x370fe73e, 0x00000000, 0x00000000, 0x00000000
        .word   0xc11a0000, 0x388a856e, 0x388a8320, 0x380aac99, 0x3738c0fc, 0x00000000, 0x00000000, 0x00000000
        .word   0xc1160000, 0x38b1dc86, 0x38b1d8b5, 0x38320c3c, 0x376d3164, 0x00000000, 0x00000000, 0x00000000
        .word   0xc1120000, 0x38e45f82, 0x38e45934, 0x38649885, 0x37984060, 0x00000000, 0x00000000, 0x00000000
        .word   0xc10e0000, 0x39129d28, 0x391297f2, 0x3892be40, 0x37c3723e, 0x00000000, 0x00000000, 0x00000000
        .word   0xc10a0000, 0x393c3f9c, 0x393c3702, 0x38bc6454, 0x37fae0c6, 0x00000000, 0x00000000, 0x00000000
        .word   0xc1060000, 0x3971b419, 0x3971a5e6, 0x38f1d9b9, 0x38210042, 0x00000000, 0x00000000, 0x00000000
        .word   0xc1020000, 0x399b2aa4, 0x399b1eed, 0x391b3af2, 0x384e9eee, 0x00000000, 0x00000000, 0x00000000
        .word   0xc0fc0000, 0x39c73898, 0x39c72544, 0x39474098, 0x38849052, 0x00000000, 0x00000000, 0x00000000
        .word   0xc0f40000, 0x39ffc6fe, 0x39ffa71d, 0x397fbbf2, 0x38aa115e, 0x00000000, 0x00000000, 0x00000000
        .word   0xc0ec0000, 0x3a243085, 0x3a24163d, 0x39a417de, 0x38da20ef, 0x00000000, 0x00000000, 0x00000000
        .word   0xc0e40000, 0x3a52c93a, 0x3a529de4, 0x39d28ca4, 0x390bd768, 0x00000000, 0x00000000, 0x00000000
        .word   0xc0dc0000, 0x3a874be2, 0x3a87282a, 0x3a070d2a, 0x39333b14, 0x00000000, 0x00000000, 0x00000000
        .word   0xc0d40000, 0x3aadac52, 0x3aad7174, 0x3a2d3491, 0x39659859, 0x00000000, 0x00000000, 0x00000000
        .word   0xc0cc0000, 0x3adeeab4, 0x3ade89b5, 0x3a5e1064, 0x3992f518, 0x00000000, 0x00000000, 0x00000000
        .word   0xc0c40000, 0x3b0f0bdc, 0x3b0ebbf7, 0x3a8e4a9d, 0x39bbf6ea, 0x00000000, 0x00000000, 0x00000000
        .word   0xc0bc0000, 0x3b378fb3, 0x3b370c20, 0x3ab6404c, 0x39f025e3, 0x00000000, 0x00000000, 0x00000000
        .word   0xc0b40000, 0x3b6b8293, 0x3b6aa9f9, 0x3ae94492, 0x3a1930e1, 0x00000000, 0x00000000, 0x00000000
        .word   0xc0ac0000, 0x3b970bd9, 0x3b9659a5, 0x3b1525bf, 0x3a431565, 0x00000000, 0x00000000, 0x00000000
        .word   0xc0a40000, 0x3bc1b195, 0x3bc08c86, 0x3b3e80c3, 0x3a77d8b3, 0x00000000, 0x00000000, 0x00000000
        .word   0xc09c0000, 0x3bf84a6f, 0x3bf668de, 0x3b72f689, 0x3a9cf628, 0x00000000, 0x00000000, 0x00000000
        .word   0xc0940000, 0x3c1f1042, 0x3c1d84f6, 0x3b9aa38a, 0x3ac6076f, 0x00000000, 0x00000000, 0x00000000
        .word   0xc08c0000, 0x3c4bae12, 0x3c4925e7, 0x3bc45d5c, 0x3af893d3, 0x00000000, 0x00000000, 0x00000000
        .word   0xc0840000, 0x3c824e17, 0x3c803b82, 0x3bf89196, 0x3b1afe43, 0x00000000, 0x00000000, 0x00000000
        .word   0xc0780000, 0x3ca68fff, 0x3ca32d0f, 0x3c1cb215, 0x3b3fa462, 0x00000000, 0x00000000, 0x00000000
        .word   0xc0680000, 0x3cd4a47b, 0x3ccf1f7e, 0x3c448c62, 0x3b6a568f, 0x00000000, 0x00000000, 0x00000000
        .word   0xc0580000, 0x3d078523, 0x3d03094e, 0x3c74ed55, 0x3b8d337e, 0x00000000, 0x00000000, 0x00000000
        .word   0xc0480000, 0x3d2c6428, 0x3d2522c2, 0x3c975644, 0x3ba6eac6, 0x00000000, 0x00000000, 0x00000000
        .word   0xc0380000, 0x3d5abd6d, 0x3d4f0f01, 0x3cb909b8, 0x3bc04bc0, 0x00000000, 0x00000000, 0x00000000
        .word   0xc0280000, 0x3d8a55e9, 0x3d80fdd4, 0x3cdf33b5, 0x3bd5e01b, 0x00000000, 0x00000000, 0x00000000
        .word   0xc0180000, 0x3dae4868, 0x3d9f739a, 0x3d04530c, 0x3be25ee8, 0x00000000, 0x00000000, 0x00000000
        .word   0xc0080000, 0x3dda809b, 0x3dc330b3, 0x3d1982ec, 0x3bde8b56, 0x00000000, 0x00000000, 0x00000000
        .word   0xbff00000, 0x3e0827ca, 0x3dec1a6d, 0x3d2d3adf, 0x3bc1ada4, 0x00000000, 0x00000000, 0x00000000
        .word   0xbfd00000, 0x3e287706, 0x3e0cbfe9, 0x3d3cb78a, 0x3b83160c, 0x00000000, 0x00000000, 0x00000000
        .word   0xbfb00000, 0x3e4ea828, 0x3e24f362, 0x3d448169, 0x3a67c497, 0x00000000, 0x00000000, 0x00000000
        .word   0xbf900000, 0x3e7af79b, 0x3e3d7575, 0x3d40e07a, 0xbb5f37d7, 0x00000000, 0x00000000, 0x00000000
        .word   0xbf600000, 0x3e96a35e, 0x3e54a2dd, 0x3d2eb097, 0xbc0b7723, 0x00000000, 0x00000000, 0x00000000
        .word   0xbf200000, 0x3eb281a3, 0x3e688ab9, 0x3d0c783b, 0xbc60a3bf, 0x00000000, 0x00000000, 0x00000000
        .word   0xbec00000, 0x3ed08e04, 0x3e7734ee, 0x3cb6cf88, 0xbc93a105, 0x00000000, 0x00000000, 0x00000000
        .word   0xbe000000, 0x3ef00555, 0x3e7f00a6, 0x3bfe0355, 0xbca7c1d5, 0x00000000, 0x00000000, 0x00000000
        .word   0x3e000000, 0x3f07fd56, 0x3e7f00a6, 0xbbfe0355, 0xbca7c1d5, 0x00000000, 0x00000000, 0x00000000
        .word   0x3ec00000, 0x3f17b8fe, 0x3e7734ee, 0xbcb6cf88, 0xbc93a105, 0x00000000, 0x00000000, 0x00000000
        .word   0x3f200000, 0x3f26bf2f, 0x3e688ab9, 0xbd0c783b, 0xbc60a3bf, 0x00000000, 0x00000000, 0x00000000
        .word   0x3f600000, 0x3f34ae51, 0x3e54a2dd, 0xbd2eb097, 0xbc0b7723, 0x00000000, 0x00000000, 0x00000000
        .word   0x3f900000, 0x3f414219, 0x3e3d7575, 0xbd40e07a, 0xbb5f37d7, 0x00000000, 0x00000000, 0x00000000
        .word   0x3fb00000, 0x3f4c55f6, 0x3e24f362, 0xbd448169, 0x3a67c497, 0x00000000, 0x00000000, 0x00000000
        .word   0x3fd00000, 0x3f55e23e, 0x3e0cbfe9, 0xbd3cb78a, 0x3b83160c, 0x00000000, 0x00000000, 0x00000000
        .word   0x3ff00000, 0x3f5df60e, 0x3dec1a6d, 0xbd2d3adf, 0x3bc1ada4, 0x00000000, 0x00000000, 0x00000000
        .word   0x40080000, 0x3f64afed, 0x3dc330b3, 0xbd1982ec, 0x3bde8b56, 0x00000000, 0x00000000, 0x00000000
        .word   0x40180000, 0x3f6a36f3, 0x3d9f739a, 0xbd04530c, 0x3be25ee8, 0x00000000, 0x00000000, 0x00000000
        .word   0x40280000, 0x3f6eb543, 0x3d80fdd4, 0xbcdf33b5, 0x3bd5e01b, 0x00000000, 0x00000000, 0x00000000
        .word   0x40380000, 0x3f725429, 0x3d4f0f01, 0xbcb909b8, 0x3bc04bc0, 0x00000000, 0x00000000, 0x00000000
        .word   0x40480000, 0x3f7539be, 0x3d2522c2, 0xbc975644, 0x3ba6eac6, 0x00000000, 0x00000000, 0x00000000
        .word   0x40580000, 0x3f7787ae, 0x3d03094e, 0xbc74ed55, 0x3b8d337e, 0x00000000, 0x00000000, 0x00000000
        .word   0x40680000, 0x3f795adc, 0x3ccf1f7e, 0xbc448c62, 0x3b6a568f, 0x00000000, 0x00000000, 0x00000000
        .word   0x40780000, 0x3f7acb80, 0x3ca32d0f, 0xbc1cb215, 0x3b3fa462, 0x00000000, 0x00000000, 0x00000000
        .word   0x40840000, 0x3f7bed8f, 0x3c803b82, 0xbbf89196, 0x3b1afe43, 0x00000000, 0x00000000, 0x00000000
        .word   0x408c0000, 0x3f7cd148, 0x3c4925e7, 0xbbc45d5c, 0x3af893d3, 0x00000000, 0x00000000, 0x00000000
        .word   0x40940000, 0x3f7d83bf, 0x3c1d84f6, 0xbb9aa38a, 0x3ac6076f, 0x00000000, 0x00000000, 0x00000000
        .word   0x409c0000, 0x3f7e0f6b, 0x3bf668de, 0xbb72f689, 0x3a9cf628, 0x00000000, 0x00000000, 0x00000000
        .word   0x40a40000, 0x3f7e7c9d, 0x3bc08c86, 0xbb3e80c3, 0x3a77d8b3, 0x00000000, 0x00000000, 0x00000000
        .word   0x40ac0000, 0x3f7ed1e8, 0x3b9659a5, 0xbb1525bf, 0x3a431565, 0x00000000, 0x00000000, 0x00000000
        .word   0x40b40000, 0x3f7f147d, 0x3b6aa9f9, 0xbae94492, 0x3a1930e1, 0x00000000, 0x00000000, 0x00000000
        .word   0x40bc0000, 0x3f7f4870, 0x3b370c20, 0xbab6404c, 0x39f025e3, 0x00000000, 0x00000000, 0x00000000
        .word   0x40c40000, 0x3f7f70f4, 0x3b0ebbf7, 0xba8e4a9d, 0x39bbf6ea, 0x00000000, 0x00000000, 0x00000000
        .word   0x40cc0000, 0x3f7f908b, 0x3ade89b5, 0xba5e1064, 0x3992f518, 0x00000000, 0x00000000, 0x00000000
        .word   0x40d40000, 0x3f7fa92a, 0x3aad7174, 0xba2d3491, 0x39659859, 0x00000000, 0x00000000, 0x00000000
        .word   0x40dc0000, 0x3f7fbc5a, 0x3a87282a, 0xba070d2a, 0x39333b14, 0x00000000, 0x00000000, 0x00000000
        .word   0x40e40000, 0x3f7fcb4e, 0x3a529de4, 0xb9d28ca4, 0x390bd768, 0x00000000, 0x00000000, 0x00000000
        .word   0x40ec0000, 0x3f7fd6f4, 0x3a24163d, 0xb9a417de, 0x38da20ef, 0x00000000, 0x00000000, 0x00000000
        .word   0x40f40000, 0x3f7fe007, 0x39ffa71d, 0xb97fbbf2, 0x38aa115e, 0x00000000, 0x00000000, 0x00000000
        .word   0x40fc0000, 0x3f7fe719, 0x39c72544, 0xb9474098, 0x38849052, 0x00000000, 0x00000000, 0x00000000
        .word   0x41020000, 0x3f7fec9b, 0x399b1eed, 0xb91b3af2, 0x384e9eee, 0x00000000, 0x00000000, 0x00000000
        .word   0x41060000, 0x3f7ff0e5, 0x3971a5e6, 0xb8f1d9b9, 0x38210042, 0x00000000, 0x00000000, 0x00000000
        .word   0x410a0000, 0x3f7ff43c, 0x393c3702, 0xb8bc6454, 0x37fae0c6, 0x00000000, 0x00000000, 0x00000000
        .word   0x410e0000, 0x3f7ff6d6, 0x391297f2, 0xb892be40, 0x37c3723e, 0x00000000, 0x00000000, 0x00000000
        .word   0x41120000, 0x3f7ff8dd, 0x38e45934, 0xb8649885, 0x37984060, 0x00000000, 0x00000000, 0x00000000
        .word   0x41160000, 0x3f7ffa71, 0x38b1d8b5, 0xb8320c3c, 0x376d3164, 0x00000000, 0x00000000, 0x00000000
        .word   0x411a0000, 0x3f7ffbac, 0x388a8320, 0xb80aac99, 0x3738c0fc, 0x00000000, 0x00000000, 0x00000000
        .word   0x411e0000, 0x3f7ffca1, 0x3857c0cd, 0xb7d80308, 0x370fe73f, 0x00000000, 0x00000000, 0x00000000
        .word   0x41220000, 0x3f7ffd60, 0x38280854, 0xb7a83ce6, 0x36e02a19, 0x00000000, 0x00000000, 0x00000000
        .word   0x41260000, 0x3f7ffdf5, 0x3802ddbe, 0xb7830749, 0x36ae9785, 0x00000000, 0x00000000, 0x00000000
        .word   0x412a0000, 0x3f7ffe68, 0x37cbd717, 0xb74c1885, 0x3687fad4, 0x00000000, 0x00000000, 0x00000000
        .word   0x412e0000, 0x3f7ffec2, 0x379ec0ab, 0xb71ef411, 0x3653cfbd, 0x00000000, 0x00000000, 0x00000000
        .word   0x41320000, 0x3f7fff09, 0x3777467f, 0xb6f79718, 0x3624f6e9, 0x00000000, 0x00000000, 0x00000000
        .word   0x41360000, 0x3f7fff3f, 0x3740945b, 0xb6c0d373, 0x36007a52, 0x00000000, 0x00000000, 0x00000000
        .word   0x413a0000, 0x3f7fff6a, 0x3715fb5a, 0xb6962caf, 0x35c81f11, 0x00000000, 0x00000000, 0x00000000
        .word   0x413e0000, 0x3f7fff8b, 0x36e99ce5, 0xb669e9fa, 0x359bdb6c, 0x00000000, 0x00000000, 0x00000000
        .word   0x41420000, 0x3f7fffa5, 0x36b5f03e, 0xb6362c6b, 0x3572c428, 0x00000000, 0x00000000, 0x00000000
        .word   0x41460000, 0x3f7fffb9, 0x368db1b3, 0xb60de0a7, 0x353d1184, 0x00000000, 0x00000000, 0x00000000
        .word   0x414a0000, 0x3f7fffc9, 0x365cb414, 0xb5dcfd52, 0x35133f69, 0x00000000, 0x00000000, 0x00000000
        .word   0x414e0000, 0x3f7fffd5, 0x362be25f, 0xb5ac1b79, 0x34e55ac9, 0x00000000, 0x00000000, 0x00000000
        .word   0x41520000, 0x3f7fffdf, 0x3605dd1e, 0xb58609a2, 0x34b29f59, 0x00000000, 0x00000000, 0x00000000
        .word   0x41560000, 0x3f7fffe6, 0x35d081ae, 0xb550c710, 0x348b1c96, 0x00000000, 0x00000000, 0x00000000
        .word   0x415a0000, 0x3f7fffec, 0x35a2629c, 0xb52298ac, 0x3458ae5c, 0x00000000, 0x00000000, 0x00000000
        .word   0x415e0000, 0x3f7ffff0, 0x357cee7a, 0xb4fd42b9, 0x3428c06c, 0x00000000, 0x00000000, 0x00000000
        .word   0x41620000, 0x3f7ffff4, 0x3544fbbe, 0xb4c53d60, 0x34036ca5, 0x00000000, 0x00000000, 0x00000000
        .word   0x41660000, 0x3f7ffff6, 0x3519692e, 0xb4999c4e, 0x33ccb505, 0x00000000, 0x00000000, 0x00000000
        .word   0x416a0000, 0x3f7ffff9, 0x34eef3fb, 0xb46f43a2, 0x339f6ce9, 0x00000000, 0x00000000, 0x00000000
        .word   0x416e0000, 0x3f7ffffa, 0x34ba18cc, 0xb43a56d8, 0x33785240, 0x00000000, 0x00000000, 0x00000000
        .word   0x41720000, 0x3f7ffffb, 0x3490eeb2, 0xb4111f04, 0x334164db, 0x00000000, 0x00000000, 0x00000000
        .word   0x41760000, 0x3f7ffffc, 0x3461bf39, 0xb3e20a83, 0x33169d62, 0x00000000, 0x00000000, 0x00000000
        .word   0x417a0000, 0x3f7ffffd, 0x342fcfda, 0xb3b00a7c, 0x32ea992b, 0x00000000, 0x00000000, 0x00000000
        .word   0x417e0000, 0x3f7ffffe, 0x3408ec27, 0xb38919d0, 0x32b6b4ba, 0x00000000, 0x00000000, 0x00000000
        .word   0x41810000, 0x3f7ffffe, 0x33d5454b, 0xb3558c6a, 0x328e4a7c, 0x00000000, 0x00000000, 0x00000000
        .word   0x41830000, 0x3f7fffff, 0x33a6186b, 0xb3264fd4, 0x325da1cb, 0x00000000, 0x00000000, 0x00000000
        .word   0x41850000, 0x3f7fffff, 0x33815af0, 0xb301861a, 0x322c9a83, 0x00000000, 0x00000000, 0x00000000
        .word   0x41870000, 0x3f7fffff, 0x33497be0, 0xb2c9bf22, 0x32066ddf, 0x00000000, 0x00000000, 0x00000000
        .word   0x00000000, 0x3f800000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000
