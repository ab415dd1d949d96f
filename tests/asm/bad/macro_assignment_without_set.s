; isa: plena_mini
; expect: 3:5: 'count = ...' defines a symbol as .set does, and this dialect has no .set or .equ
    count = 3
