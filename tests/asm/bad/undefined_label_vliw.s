// isa: vliw_mini
// expect: 3:14: undefined symbol 'nowhere'
    jnz r1, #nowhere
