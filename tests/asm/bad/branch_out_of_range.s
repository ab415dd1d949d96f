# isa: rv32i_mini
# expect: 3:17: branch offset 4096 (target 0x1000) is out of range for target: i13 takes -4096..4095
    beq a0, a1, far
    .zero 4092
far:
    ebreak
