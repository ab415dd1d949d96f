# isa: rv32i_mini
# expect: 3:23: macro 'add3' has two parameters named 'a'
    .macro add3 a, b, a
    add \a, \a, \b
    .endm
