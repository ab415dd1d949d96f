# isa: rv32i_mini
# expect: 3:18: immediate 32 is out of range for shamt: u5 takes 0..31
    slli a0, a0, 32
