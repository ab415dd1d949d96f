; isa: toy16
; expect: 3:13: misaligned immediate: off = 3 is not a multiple of 2
    ldh r1, 3(r2)
