// isa: vliw_mini
// expect: 3:11: 'padda' expects 2 operand groups, got 1 (syntax: padda [{ptr:p}], #{imm:i15})
    padda [p1, #-16]
