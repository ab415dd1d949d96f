// isa: vliw_mini
// expect: 3:13: 'p2' is a register of p; rs1 needs a register of r
    add r1, p2, r3
