; isa: toy16
; expect: 5:10: .align 20: section .text would grow to 1048576 bytes and the program image to at least 1048576 bytes from 0x100, more than the 65280 bytes of memory ram from there (0x100..0xffff)
  .equ big, 20
  .byte 1
  .align big
