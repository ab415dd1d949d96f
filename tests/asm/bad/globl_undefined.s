# isa: rv32i_mini
# expect: 5:12: .globl names undefined symbol 'mian'; did you mean 'main'?
# (an assembler bug this case found is fixed)
# (an assembler bug this case found is fixed)
    .globl mian
main:
    ebreak
