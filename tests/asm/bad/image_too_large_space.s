# isa: rv32i_mini
# expect: 5:12: .space 2000000000: section .data would grow to 2000000000 bytes and the program image to at least 2000000004 bytes from 0x0, more than the 65536 bytes of memory ram from there (0x0..0xffff)
    nop
    .data
    .space 2000000000
