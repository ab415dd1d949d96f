// isa: plena_mini
// expect: 3:26: immediate -1 is out of range for imm: u18 takes 0..262143
    S_ADDI_INT gp1, gp0, -1
