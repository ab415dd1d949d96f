# isa: rv32i_mini
# expect: 4:5: unknown instruction 'addd'; did you mean 'add'?
start:
    addd a0, a1, a2
