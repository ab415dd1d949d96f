// isa: vliw_mini
// expect: 3:14: branch offset 524288 (target 0x80000) is out of range for target: i20 takes -524288..524287
    jnz r1, #0x80000
