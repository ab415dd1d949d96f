// isa: vliw_mini
// expect: 3:5: unknown directive '.zero'; this dialect's data directives are .byte, .short, .long
    .zero 4
