# isa: rv32i_mini
# expect: 4:14: .word needs a value
    .data
    .word 1, , 2
