# isa: rv32i_mini
# expect: 3:11: .rept count -1 is negative
    .rept -1
    nop
    .endr
