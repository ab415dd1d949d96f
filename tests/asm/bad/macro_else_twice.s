# isa: rv32i_mini
# expect: 7:5: .else after .else (line 5) of the same .if
    .if 0
    nop
    .else
    nop
    .else
    nop
    .endif
