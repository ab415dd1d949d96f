# isa: rv32i_mini
# expect: 5:5: .err encountered
    .equ N, 3
    .if N > 2
    .err
    .endif
