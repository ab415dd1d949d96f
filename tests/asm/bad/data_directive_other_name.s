# isa: rv32i_mini
# expect: 4:5: unknown directive '.hword'; did you mean '.half'?
    .data
    .hword 5
