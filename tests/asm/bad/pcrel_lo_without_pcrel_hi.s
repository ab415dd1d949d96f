# isa: rv32i_mini
# expect: 5:18: %pcrel_lo must name a label on an instruction that uses %pcrel_hi
site:
    lui a0, %hi(data)
    addi a0, a0, %pcrel_lo(site)
data:
    .word 1
