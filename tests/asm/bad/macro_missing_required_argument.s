# isa: rv32i_mini
# expect: 7:5: missing value for required parameter 'dst' of macro 'load'
    .macro load dst:req, src=sp
    lw \dst, 0(\src)
    .endm
    load a0
    load src=a1
