# isa: rv32i_mini
# expect: 5:5: .elseif after .else (line 4) of the same .if
    .if 0
    .else
    .elseif 1
    .endif
