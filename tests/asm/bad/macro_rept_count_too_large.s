# isa: rv32i_mini
# expect: 3:5: .rept 1000000000 would expand to 1000000000 lines, past the assembler's limit of 262144 expanded lines
    .rept 1000000000
    nop
    .endr
