// isa: vliw_mini
// expect: 3:5: unknown directive '.zero'; did you mean '.size'?
    .zero 4
