# isa: rv32i_mini
# expect: 4:5: .endm without .macro
    nop
    .endm
