// isa: plena_mini
// expect: 3:1: labels are not allowed in this assembly dialect
start:
    C_BREAK
