// isa: vliw_mini
// expect: 4:18: slot conflict: mov and done both need the alu slot
// (an assembler bug this case found is fixed)
    mov r4, #1 ; done
