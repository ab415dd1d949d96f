# isa: rv32i_mini
# expect: 5:1: duplicate label 'here' (first defined at line 3)
here:
    nop
here:
    nop
