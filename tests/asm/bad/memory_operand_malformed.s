# isa: rv32i_mini
# expect: 3:12: expected {off}({rs1}), got '4(a1'
    lw a0, 4(a1
