// isa: vliw_mini
// expect: 3:18: immediate 64 is out of range for imm: i7 takes -64..63
    add r1, r2, #64
