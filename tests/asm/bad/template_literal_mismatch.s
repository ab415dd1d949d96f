// isa: plena_mini
// expect: 3:10: expected 0, got '1'
    M_MM 1, gp0, gp0
