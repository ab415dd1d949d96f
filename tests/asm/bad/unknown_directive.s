# isa: rv32i_mini
# expect: 3:5: unknown directive '.wrod'; did you mean '.word'?
    .wrod 5
