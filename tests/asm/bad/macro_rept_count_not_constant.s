# isa: rv32i_mini
# expect: 3:11: a .rept count must be a constant known here; 'later' is not
    .rept later - 1
    nop
    .endr
later:
