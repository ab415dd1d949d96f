// isa: plena_mini
// expect: 3:5: directives are not allowed in this assembly dialect ('.word')
    .word 1
