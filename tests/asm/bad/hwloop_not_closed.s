// isa: plena_mini
// expect: 3:5: hardware loop opened here is never closed with C_LOOP_END
    C_LOOP_START gp1, 4
    S_ADDI_INT gp2, gp2, 1
