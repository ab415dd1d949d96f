# isa: rv32i_mini
# expect: 4:13: 'add' expects 3 operand groups, got 2 (syntax: add {rd:x}, {rs1:x}, {rs2:x})
# (an assembler bug this case found is fixed)
    add a0, a1
