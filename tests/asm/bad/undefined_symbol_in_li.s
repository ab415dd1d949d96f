# isa: rv32i_mini
# expect: 5:12: undefined symbol 'foo'
# (an assembler bug this case found is fixed)
# (an assembler bug this case found is fixed)
    li a0, foo
