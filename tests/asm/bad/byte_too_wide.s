# isa: rv32i_mini
# expect: 4:17: value 256 does not fit in 1 byte
    .data
    .byte 1, 2, 256
