# .macro: positional, keyword and blank-separated arguments, defaults, :req, :vararg,
# \() separators, \@, .exitm, .purgem, macros that define and invoke macros, recursion
    .text
    .macro bump reg, amount=1
    addi \reg, \reg, \amount
    .endm
    bump a0
    bump a0, 5
    bump a1 7
    bump amount=3, reg=a2
    bump a3,
    bump a4, 1 + 2          # one argument: blanks next to operators do not separate
    bump a5 , -4
    .macro pair first:req, second=zero
    add \first, \first, \second
    .endm
    pair t0
    pair t1, t2
    .macro words label:req, values:vararg
\label\()_start:
    .word \values
    .endm
    .macro store_all base, regs:vararg
    .irp r, \regs
    sw \r, 0(\base)
    .endr
    .endm
    store_all sp, a0, a1, a2
    .macro uniq
    addi s2, s2, \@
    .endm
    uniq
    uniq
    .rept 2
    uniq
    .endr
    .macro early n
    .if \n > 2
    addi s3, s3, \n
    .exitm
    .endif
    addi s4, s4, \n
    .endm
    early 1
    early 5
    .macro sum n
    .if \n
    addi s5, s5, \n
    sum \n-1
    .endif
    .endm
    sum 4
    .macro outer name
    .macro \name\()_inc r
    addi \r, \r, 11
    .endm
    .endm
    outer fast
    fast_inc s6
    .purgem bump
    .macro bump reg
    addi \reg, \reg, 100
    .endm
    bump s7
    .macro Shout
    addi s8, s8, 1
    .endm
    SHOUT
    shout
    .macro ldpair dst, src
    lw \dst, 4(\src)
    .endm
    ldpair a0, sp
    ldpair a1 sp
    .macro nothing
    .endm
    nothing
    .macro countdown
loop\@: addi t0, t0, -1
    bnez t0, loop\@
    .endm
    countdown
    countdown
entry: countdown            # a label before an invocation
    j entry
    .macro nop              # a macro takes precedence over an instruction of its name
    addi s9, s9, 1
    .endm
    nop
    .purgem nop
    nop
    .REPT 2                 # directive and macro names in any case
    .Irp R, a0
    addi \R, \R, 3
    .ENDR
    .ENDR
    .Macro Twice
    addi s10, s10, 2
    .ENDM
    twice
    .data
    words tbl, 1, 2, 3
    words empty
