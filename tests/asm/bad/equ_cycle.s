# isa: rv32i_mini
# expect: 4:10: symbol 'a' is defined in terms of itself
# (an assembler bug this case found is fixed)
    .equ a, b + 1
    .equ b, a + 1
    li a0, a
