# isa: rv32i_mini
# expect: 4:11: value -32769 does not fit in 2 bytes
    .data
    .half -32769
