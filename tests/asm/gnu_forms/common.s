# GNU as forms of the base ISA, M, F, Zicsr and Zifencei that coral and boom share, one a line
# (riscv-opc.c's entries, the RISC-V assembly programmer's manual's pseudo-instructions). `foo`
# is a label in .text after the probes, `dat` a word in .data.
# ---- RV32I aliases and macros
nop
li a0, 5
li a0, -2048
li a0, 0x12345fff
li a0, 0x7ffff800
li a0, 0x80000
li a0, 0
mv a0, a1
move a0, a1
not a0, a1
neg a0, a1
seqz a0, a1
snez a0, a1
sltz a0, a1
sgtz a0, a1
sgt a0, a1, a2
sgtu a0, a1, a2
zext.b a0, a1
add a0, a1, 12
and a0, a1, -3
or a0, a1, 7
xor a0, a1, -1
slt a0, a1, 9
sltu a0, a1, 9
sll a0, a1, 3
srl a0, a1, 3
sra a0, a1, 3
beqz a0, foo
bnez a0, foo
blez a0, foo
bgez a0, foo
bltz a0, foo
bgtz a0, foo
bgt a0, a1, foo
ble a0, a1, foo
bgtu a0, a1, foo
bleu a0, a1, foo
j foo
jal foo
jal a0, foo
jr a1
jr 8(a1)
jr a1, 8
jalr a1
jalr 8(a1)
jalr a1, 8
jalr a0, a1
jalr a0, 8(a1)
jalr a0, a1, 8
jalr a0, (a1)
ret
call foo
call a0, foo
call ra, foo
tail foo
jump foo, t0
la a0, foo
lla a0, foo
la a0, dat
lla a0, dat
lla s0, 2047
lla s0, -2048
la a0, 0x12345
lla a0, 0x12345000
lb a0, dat
lbu a0, dat
lh a0, dat
lhu a0, dat
lw a0, dat
lw a0, foo
sb a0, dat, t0
sh a0, dat, t0
sw a0, dat, t0
lw a0, (a1)
sw a0, (a1)
lw a0, %lo(dat)(a1)
fence
fence rw, rw
fence r, w
fence iorw, iorw
fence.tso
fence.i
ecall
scall
ebreak
sbreak
unimp
rdcycle a0
rdtime a0
rdinstret a0
# ---- Zicsr
csrr a0, 0x3
csrr a0, fcsr
csrr a0, 0xfff
csrw fcsr, a0
csrw 0x3, a0
csrs fflags, a0
csrc fflags, a0
csrwi frm, 3
csrsi fflags, 1
csrci fflags, 1
csrw frm, 3
csrs fflags, 4
csrc fflags, 4
csrrw x6, fcsr, s8
csrrw a0, 0x2, a1
csrrs a0, fflags, a1
csrrc a0, fflags, a1
csrrwi a0, frm, 3
csrrsi a0, fflags, 1
csrrci a0, fflags, 1
csrrw a0, frm, 3
csrrs a0, fflags, 5
csrrc a0, fflags, 5
csrr a0, cycle
csrr a0, time
csrr a0, instret
# ---- M
mul a0, a1, a2
mulh a0, a1, a2
div a0, a1, a2
remu a0, a1, a2
# ---- F
frcsr a0
fscsr a1
fscsr a0, a1
frrm a0
fsrm a1
fsrm a0, a1
fsrmi 3
fsrmi a0, 3
frflags a0
fsflags a1
fsflags a0, a1
fsflagsi 3
fsflagsi a0, 3
fmv.s fa0, fa1
fabs.s fa0, fa1
fneg.s fa0, fa1
fgt.s a0, fa0, fa1
fge.s a0, fa0, fa1
fmv.x.s a0, fa0
fmv.s.x fa0, a0
flw fa0, dat, t0
fsw fa0, dat, t0
flw fa0, (a1)
fadd.s fa0, fa1, fa2
fadd.s fa0, fa1, fa2, rtz
fcvt.w.s a0, fa0
fcvt.w.s a0, fa0, rtz
fcvt.s.w fa0, a0
fcvt.s.w fa0, a0, rne
fsqrt.s fa0, fa1
fmadd.s fa0, fa1, fa2, fa3
fmadd.s fa0, fa1, fa2, fa3, rup
