# isa: rv32i_mini
# expect: 7:10: unknown register 'a9'
# note: 12:5: in macro 'clear' invoked here
# note: 11:5: in the .irp repeated here
# note: 10:5: in the .rept repeated here
    .macro clear reg
    addi \reg, zero, 0
    .endm
    nop
    .rept 2
    .irp r, a0, a9
    clear \r
    .endr
    .endr
