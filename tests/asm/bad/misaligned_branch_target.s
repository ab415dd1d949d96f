# isa: rv32i_mini
# expect: 3:17: misaligned branch target: target = 5 is not a multiple of 2
    beq a0, a1, odd
    .byte 0
odd:
    ebreak
