// isa: plena_mini
// expect: 4:19: 'V_ADD_VV' expects 3 to 4 operand groups, got 2 (syntax: V_ADD_VV {rd:gp}, {rs1:gp}, {rs2:gp}, {rmask:u4=0})
// (an assembler bug this case found is fixed)
    V_ADD_VV gp1, gp2
