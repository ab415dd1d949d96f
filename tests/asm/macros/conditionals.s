# The .if family, .elseif/.else, nesting (also inside skipped branches), symbols set by
# .set/.equ/=, comparison and logical operators (true is -1 for comparisons, 1 for && ||)
    .text
    .set count, 3
    .equ limit, 10
    half = limit / 2
    .if count == 3
    addi a0, a0, 1
    .else
    addi a0, a0, 2
    .endif
    .if count > 5
    addi a1, a1, 1
    .elseif count > 2
    addi a1, a1, 2
    .elseif count > 1
    addi a1, a1, 3
    .else
    addi a1, a1, 4
    .endif
    .if 0
    .if 1
    addi a2, a2, 1
    .else
    addi a2, a2, 2
    .endif
    .elseif 1
    addi a2, a2, 3
    .endif
    .ifdef count
    addi a3, a3, 1
    .endif
    .ifndef missing
    addi a3, a3, 2
    .endif
    .ifnotdef count
    addi a3, a3, 4
    .endif
here:
    .ifdef here
    addi a3, a3, 8
    .endif
    .ifdef later
    addi a3, a3, 16
    .endif
later:
    .ifeq count - 3
    addi a4, a4, 1
    .endif
    .ifne count - 3
    addi a4, a4, 2
    .endif
    .ifge count - 4
    addi a4, a4, 4
    .endif
    .ifgt count - 2
    addi a4, a4, 8
    .endif
    .ifle 0
    addi a4, a4, 16
    .endif
    .iflt -1
    addi a4, a4, 32
    .endif
    .ifb
    addi a5, a5, 1
    .endif
    .ifnb x
    addi a5, a5, 2
    .endif
    .ifc abc, abc
    addi a5, a5, 4
    .endif
    .ifc abc,abcd
    addi a5, a5, 8
    .endif
    .ifnc abc, abd
    addi a5, a5, 16
    .endif
    .ifeqs "xy", "xy"
    addi a5, a5, 32
    .endif
    .ifnes "xy", "xz"
    addi a5, a5, 64
    .endif
    .if count >= 3 && limit <= 10 || 0
    addi a6, a6, 1
    .endif
    .if !(count <> 3)
    addi a6, a6, 2
    .endif
    addi a7, zero, (count == 3)
    addi a7, a7, (count != 3) + (1 && 2) + (0 || 5) + !7 + !0
    addi t0, zero, 1 + 2 == 3
    addi t1, zero, half
    .set i, 0
    .rept 6
    .if i % 2
    addi t2, t2, i
    .elseif i == 4
    addi t3, t3, i
    .else
    addi t4, t4, i
    .endif
    .set i, i + 1
    .endr
    .set count, count + 1
    addi t5, zero, count
    count = 40
    addi t6, zero, count
    .warning "a warning does not stop the assembly"
