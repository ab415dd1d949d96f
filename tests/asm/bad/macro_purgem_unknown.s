# isa: rv32i_mini
# expect: 6:13: .purgem: no macro named 'twcie'
    .macro twice
    nop
    .endm
    .purgem twcie
