// isa: plena_mini
// expect: 3:29: immediate 16 is out of range for rmask: u4 takes 0..15
    V_ADD_VV gp1, gp2, gp3, 16
