# isa: rv32i_mini
# expect: 3:12: .align 40: the power of two must be between 0 and 31
    .align 40
