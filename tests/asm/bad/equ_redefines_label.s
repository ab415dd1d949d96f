# isa: rv32i_mini
# expect: 5:10: 'x' is already a label (line 3)
x:
    nop
    .equ x, 5
