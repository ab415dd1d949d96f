// isa: vliw_mini
// expect: 3:14: 'r0' is a register of r; ptr needs a register of p
    lda r1, [r0, #4]
