# isa: rv32i_mini
# expect: 5:1: duplicate label 'again' (first defined at line 5)
# note: 4:5: in the .rept repeated here
    .rept 2
again:
    addi a0, a0, 1
    .endr
