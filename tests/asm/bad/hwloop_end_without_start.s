// isa: plena_mini
// expect: 4:5: C_LOOP_END without a matching C_LOOP_START
    S_ADDI_INT gp2, gp2, 1
    C_LOOP_END gp1
