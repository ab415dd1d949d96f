# isa: rv32i_mini
# expect: 3:17: local label 1b has no earlier '1:' definition
    bne a0, a1, 1b
1:
    ebreak
