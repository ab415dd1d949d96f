# isa: rv32i_mini
# expect: 7:12: macro 'twice' is already defined (line 3)
    .macro twice
    nop
    nop
    .endm
    .macro twice
    nop
    .endm
