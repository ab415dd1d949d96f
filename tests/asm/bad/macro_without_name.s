# isa: rv32i_mini
# expect: 3:11: .macro needs a name: .macro NAME [PARAMETER[=DEFAULT][:req|:vararg], ...]
    .macro
    nop
    .endm
