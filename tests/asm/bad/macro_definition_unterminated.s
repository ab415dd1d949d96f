# isa: rv32i_mini
# expect: 3:5: .macro is never closed with .endm
    .macro bump reg
    addi \reg, \reg, 1
    nop
