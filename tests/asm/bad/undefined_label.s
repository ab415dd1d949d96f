# isa: rv32i_mini
# expect: 5:19: undefined symbol 'lop'; did you mean 'loop'?
loop:
    addi a0, a0, -1
    bne a0, zero, lop
