# isa: rv32i_mini
# expect: 6:5: .exitm outside a macro
# note: 4:5: in the .rept repeated here
    .rept 2
    nop
    .exitm
    .endr
