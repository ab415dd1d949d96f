# isa: rv32i_mini
# expect: 3:17: expected a register of x, got '5'
    add a0, a1, 5
