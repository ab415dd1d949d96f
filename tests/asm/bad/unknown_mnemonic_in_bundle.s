// isa: vliw_mini
// expect: 3:22: unknown instruction 'ldx'; did you mean 'lda'?
    add r1, r2, r3 ; ldx r1, [p0, #4]
