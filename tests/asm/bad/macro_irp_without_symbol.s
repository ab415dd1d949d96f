# isa: rv32i_mini
# expect: 3:10: .irp needs a symbol name first: .irp NAME, VALUES
    .irp , a0, a1
    addi a0, a0, 1
    .endr
