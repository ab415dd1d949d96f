# isa: rv32i_mini
# expect: 3:17: unknown register 'a22'; did you mean 'a2'?
    add a0, a1, a22
