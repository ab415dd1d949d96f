# isa: rv32i_mini
# expect: 4:12: .float needs a floating-point number, got 'abc'
    .data
    .float abc
