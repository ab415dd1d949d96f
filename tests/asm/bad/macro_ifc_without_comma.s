# isa: rv32i_mini
# expect: 3:13: .ifc needs two strings separated by a comma
    .ifc abc
    nop
    .endif
