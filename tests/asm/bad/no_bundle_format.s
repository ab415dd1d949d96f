// isa: vliw_mini
// expect: 3:5: no bundle format holds the slots ld, lng together
    lda r1, [p0, #4] ; movxm r2, #1
