# isa: rv32i_mini
# expect: 4:5: .rept is never closed with .endr
    nop
    .rept 3
    addi a0, a0, 1
