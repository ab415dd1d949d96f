# isa: rv32i_mini
# expect: 13:5: macros nested too deeply: more than 100 expansions open (a macro that invokes itself without end?)
# note: 13:5: in macro 'down' invoked here
# note: 13:5: in macro 'down' invoked here
# note: 13:5: in macro 'down' invoked here
# note: 13:5: in macro 'down' invoked here
# note: 13:5: in macro 'down' invoked here
# note: 13:5: in macro 'down' invoked here
# note: 13:5: in macro 'down' invoked here
# note: 15:5: in macro 'down' invoked here (the outermost; 92 expansion levels between are not shown)
    .macro down n
    addi a0, a0, \n
    down \n-1
    .endm
    down 3
