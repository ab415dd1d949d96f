// isa: vliw_mini
// expect: 5:14: .p2align 31: section .data would grow to 2147483648 bytes and the program image to at least 2147483648 bytes from 0x0, more than the 65536 bytes of memory dm from there (0x0..0xffff)
    .data
    .byte 1
    .p2align 31
