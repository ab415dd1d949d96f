# isa: rv32i_mini
# expect: 6:17: macro 'bump' takes 2 arguments, got more
    .macro bump reg, amount=1
    addi \reg, \reg, \amount
    .endm
    bump a0, 1, 2
