# isa: rv32i_mini
# expect: 3:12: missing operand rs1
    add a0, , a2
