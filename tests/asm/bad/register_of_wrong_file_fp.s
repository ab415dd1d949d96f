// isa: plena_mini
// expect: 3:18: 'gp1' is a register of gp; rs1 needs a register of f
    S_ADD_FP f1, gp1, f2
