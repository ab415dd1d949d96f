// isa: vliw_mini
// expect: 5:5: unknown instruction 'ADD'; did you mean 'add'?
// (an assembler bug this case found is fixed)
    mov r1, #1
    ADD r1, r1, r1
