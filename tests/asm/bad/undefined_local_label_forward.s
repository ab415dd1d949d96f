# isa: rv32i_mini
# expect: 5:17: local label 1f has no later '1:' definition
1:
    addi a0, a0, 1
    bne a0, a1, 1f
