# isa: rv32i_mini
# expect: 3:12: .error takes a "quoted" message
    .error N is too large
