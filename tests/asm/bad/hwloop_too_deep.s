// isa: plena_mini
// expect: 7:5: hardware loops nest 5 deep; this machine supports 4
    C_LOOP_START gp1, 2
    C_LOOP_START gp2, 2
    C_LOOP_START gp3, 2
    C_LOOP_START gp4, 2
    C_LOOP_START gp5, 2
    C_LOOP_END gp5
    C_LOOP_END gp4
    C_LOOP_END gp3
    C_LOOP_END gp2
    C_LOOP_END gp1
