// isa: vliw_mini
// expect: 4:22: slot conflict: add and mov both need the alu slot
// (an assembler bug this case found is fixed)
    add r1, r2, r3 ; mov r4, #1
