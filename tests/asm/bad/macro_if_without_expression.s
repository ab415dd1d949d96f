# isa: rv32i_mini
# expect: 3:8: .if needs an expression
    .if
    nop
    .endif
