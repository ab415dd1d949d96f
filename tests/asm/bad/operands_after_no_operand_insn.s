# isa: rv32i_mini
# expect: 4:12: 'ebreak' expects 0 operand groups, got 1 (syntax: ebreak)
    nop
    ebreak now
