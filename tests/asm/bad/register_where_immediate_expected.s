# isa: rv32i_mini
# expect: 3:18: expected an immediate for imm, got register 'a2'
    addi a0, a1, a2
