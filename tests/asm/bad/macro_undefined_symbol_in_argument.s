# isa: rv32i_mini
# expect: 6:7: undefined symbol 'far_away'
# note: 9:5: in macro 'jump_to' invoked here
    .macro jump_to target
    nop
    j \target
    .endm
    nop
    jump_to far_away
