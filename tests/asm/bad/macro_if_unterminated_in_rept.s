# isa: rv32i_mini
# expect: 5:5: this .if is not closed with .endif before the end of its repeated body
# note: 4:5: in the .rept repeated here
    .rept 2
    .if 1
    nop
    .endr
