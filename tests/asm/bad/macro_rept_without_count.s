# isa: rv32i_mini
# expect: 3:10: .rept needs a count
    .rept
    nop
    .endr
