# isa: rv32i_mini
# expect: 3:1: 'a0' is a register or mnemonic and cannot be a label
a0:
    nop
