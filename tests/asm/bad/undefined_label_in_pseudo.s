# isa: rv32i_mini
# expect: 5:7: undefined symbol 'elsewhere'
# (an assembler bug this case found is fixed)
    li a0, 1
    j elsewhere
