; isa: toy16
; expect: 3:22: 'rol' is not a valid sh (one of: lsl, lsr, asr, ror.w)
    shift r1, r2, 3, rol
