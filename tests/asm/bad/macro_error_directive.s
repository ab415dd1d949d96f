# isa: rv32i_mini
# expect: 4:5: define N before including this kernel
    .ifndef N
    .error "define N before including this kernel"
    .endif
