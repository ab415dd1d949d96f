# isa: rv32i_mini
# expect: 4:12: negative size -1
    .data
    .space -1
