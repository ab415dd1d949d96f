# isa: rv32i_mini
# expect: 3:12: an alignment must be a constant known here; 'later' is not
    .align later
    .equ later, 2
