// isa: plena_mini
// expect: 3:16: unknown register 'gp16'; did you mean 'gp6'?
    S_ADDI_INT gp16, gp0, 1
