# isa: rv32i_mini
# expect: 4:7: branch offset 1048576 (target 0x100000) is out of range for target: i21 takes -1048576..1048575
# (an assembler bug this case found is fixed)
    j 0x100000
