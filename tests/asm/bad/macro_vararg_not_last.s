# isa: rv32i_mini
# expect: 3:37: the :vararg parameter 'regs' of macro 'store' must be the last
    .macro store base, regs:vararg, offset
    .endm
