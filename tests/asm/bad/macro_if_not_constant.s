# isa: rv32i_mini
# expect: 3:9: the condition of .if must be a constant known here; 'undefined_size' is not
    .if undefined_size > 4
    nop
    .endif
