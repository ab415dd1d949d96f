# isa: rv32i_mini
# expect: 7:11: .zero 30000: section .data would grow to 90000 bytes and the program image to at least 90004 bytes from 0x0, more than the 65536 bytes of memory ram from there (0x0..0xffff)
    nop
    .data
    .zero 30000
    .zero 30000
    .zero 30000
    .zero 30000
