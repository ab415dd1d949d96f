// isa: vliw_mini
// expect: 3:13: expected #{imm}, got '5'
    mov r1, 5
