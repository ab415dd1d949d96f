# isa: rv32i_mini
# expect: 3:10: expected NAME, VALUE
    .equ N
