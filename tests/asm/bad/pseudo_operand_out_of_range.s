# isa: rv32i_mini
# expect: 3:12: immediate 4294967296 is out of range for imm: i32 takes -2147483648..2147483647
    li a0, 0x100000000
