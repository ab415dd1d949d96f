# isa: rv32i_mini
# expect: 5:5: .endif without .if
    .if 1
    .endif
    .endif
