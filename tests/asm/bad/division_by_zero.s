# isa: rv32i_mini
# expect: 3:20: division by zero
    addi a0, a1, 1 / 0
