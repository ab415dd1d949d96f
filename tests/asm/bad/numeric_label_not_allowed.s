// isa: vliw_mini
// expect: 3:1: numeric local label '1:' is not allowed in this assembly dialect
1:
    done
