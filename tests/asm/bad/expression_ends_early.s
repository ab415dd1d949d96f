# isa: rv32i_mini
# expect: 3:21: expression ends too early
    addi a0, a1, 1 +
