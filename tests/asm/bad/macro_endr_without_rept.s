# isa: rv32i_mini
# expect: 4:5: .endr without .rept, .irp or .irpc
    nop
    .endr
