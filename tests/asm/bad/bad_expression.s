# isa: rv32i_mini
# expect: 3:21: unexpected '*' in expression
    addi a0, a1, 1 +* 2
