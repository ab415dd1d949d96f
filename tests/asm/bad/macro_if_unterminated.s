# isa: rv32i_mini
# expect: 3:5: this .if is never closed with .endif
    .if 1
    nop
    .else
    addi a0, a0, 1
