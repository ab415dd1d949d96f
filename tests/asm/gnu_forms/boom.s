# boom only (rv64, D); the forms of common.s are probed too.
li a0, 0xffffffff
li a0, 0x80000000
li a0, 0xffffffffffffffff
li a0, 0x8000000000000000
li a0, 0x123456789abcdef0
li a0, -0x8000000000000000
lla a0, 0x7ffff800
la a0, 2047
lla a0, -1
lla a0, 0
negw a0, a1
sext.w a0, a1
addw a0, a1, 5
sllw a0, a1, 3
srlw a0, a1, 3
sraw a0, a1, 3
ld a0, dat
lwu a0, dat
sd a0, dat, t0
csrr a0, cycleh
zext.w a0, a1
zext.h a0, a1
sext.b a0, a1
sext.h a0, a1
fmv.d fa0, fa1
fabs.d fa0, fa1
fneg.d fa0, fa1
fgt.d a0, fa0, fa1
fge.d a0, fa0, fa1
fld fa0, dat, t0
fsd fa0, dat, t0
fcvt.d.w fa0, a0
fcvt.d.s fa0, fa1
fcvt.l.d a0, fa0, rtz
fmv.x.d a0, fa0
