# isa: rv32i_mini
# expect: 3:13: %hi needs an argument in parentheses: %hi(symbol)
    lui a0, %hi
