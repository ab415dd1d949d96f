# isa: rv32i_mini
# expect: 3:18: unbalanced '('
    addi a0, a1, (5
