# isa: rv32i_mini
# expect: 3:18: immediate 2048 is out of range for imm: i12 takes -2048..2047
    addi a0, a1, 2048
