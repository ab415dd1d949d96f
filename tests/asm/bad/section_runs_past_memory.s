# isa: rv32i_mini
# expect: 6:11: section .data (30 bytes at 0xfff0..0x1000d) runs past the end of memory ram (65536 bytes at 0x0..0xffff)
    .zero 65505
    .data
    .byte 1
    .zero 29
