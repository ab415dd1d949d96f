# isa: rv32i_mini
# expect: 3:11: .ifdef needs a symbol name
    .ifdef
    nop
    .endif
