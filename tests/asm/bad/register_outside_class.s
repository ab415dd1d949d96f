; isa: toy16
; expect: 3:10: 'r4' is not allowed here: a takes r0..r3
    cmpi r4, r0, 1
