# isa: rv32i_mini
# expect: 6:18: macro 'bump' has no parameter named 'amonut' (its parameters: reg, amount)
    .macro bump reg, amount=1
    addi \reg, \reg, \amount
    .endm
    bump reg=a0, amonut=2
