# isa: rv32i_mini
# expect: 3:13: unknown relocation operator %hix; did you mean 'hi'?
    lui a0, %hix(data)
data:
    .word 1
