# .rept, .irp and .irpc, nested, with labels and local labels in the bodies
    .text
start:
    .rept 3
    addi a0, a0, 1
    .endr
    .rept 0
    addi a0, a0, 99
    .endr
    .rept 2                 # nested: 2 x 3
    .rept 3
    xor a1, a1, a2
    .endr
    addi a1, a1, -1
    .endr
    .irp reg, a3, a4, a5, t0
    addi \reg, \reg, 8
    .endr
    .irp n 1 2 3            # blanks separate values too
    slli a6, a6, \n
    .endr
    .irp r,                 # no values: the body once, the symbol empty
    addi a0, a0, 2\r
    .endr
    .irpc c, 1234
    addi x\c, x\c, \c
    .endr
    .irp base, 0, 16
    .irpc k, 048
    lw t1, \base+\k(sp)
    .endr
    .endr
loop: .rept 2               # a label before the directive
1:  addi t2, t2, -1
    bnez t2, 1b
    .endr
    .irp op, add, sub, and, or
    \op a7, a7, s1
    .endr
    .rept 2*2-1
    nop
    .endr
    j start
    .data
table:
    .irp v, 10, 20, 30
    .word \v, \v*2
    .endr
    .rept 3
    .byte 0xaa
    .endr
