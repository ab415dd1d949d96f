; isa: toy16
; expect: 3:11: branch offset 600 (target 0x35a) is out of range for target: i10 takes -512..511
    b eq, 600
