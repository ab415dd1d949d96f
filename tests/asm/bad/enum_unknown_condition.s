; isa: toy16
; expect: 3:7: 'xx' is not a valid cond (one of: eq, ne, lt, ge)
    b xx, 2
