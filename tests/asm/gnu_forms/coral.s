# coral only (rv32, Zbb, Zve32x); the forms of common.s are probed too.
li a0, 0xffffffff
li a0, 0x80000000
lla a0, 0xffffffff
la a0, -1
rdcycleh a0
rdtimeh a0
rdinstreth a0
csrr a0, cycleh
csrr a0, vlenb
csrr a0, vl
csrr a0, vtype
csrw vstart, a0
csrwi vxrm, 2
csrr a0, vcsr
csrr a0, vxsat
csrr a0, mstatus
csrr a0, mhartid
# ---- Zbb
zext.h a0, a1
sext.b a0, a1
sext.h a0, a1
rev8 a0, a1
orc.b a0, a1
ror a0, a1, 3
rori a0, a1, 3
rol a0, a1, a2
andn a0, a1, a2
cpop a0, a1
# ---- vector
vsetvli a0, a1, e8, m1, ta, ma
vsetvli a0, a1, e8, ta
vsetvli a0, a1, e32, m2
vsetvli a0, a1, e16
vsetvli a0, a1, e8, mf2, tu, mu
vsetvli a0, a1, e8, m4, ta, mu
vsetivli a0, 7, e32, m1, ta, ma
vsetivli a0, 7, e8
vsetvl a0, a1, a2
vle8.v v1, (a0)
vle8.v v1, (a0), v0.t
vse32.v v2, (a1)
vle32.v v1, 0(a0)
vlse16.v v1, (a0), a1
vluxei8.v v1, (a0), v2
vlm.v v1, (a0)
vle1.v v1, (a0)
vsm.v v1, (a0)
vse1.v v1, (a0)
vl1r.v v1, (a0)
vl1re8.v v1, (a0)
vs1r.v v1, (a0)
vadd.vv v1, v2, v3
vadd.vx v1, v2, a0, v0.t
vadd.vi v1, v2, -16
vneg.v v1, v2
vnot.v v1, v2
vwcvt.x.x.v v2, v4
vwcvtu.x.x.v v2, v4
vncvt.x.x.w v1, v2
vmsgt.vv v1, v2, v3
vmsgtu.vv v1, v2, v3
vmsge.vv v1, v2, v3
vmsgeu.vv v1, v2, v3
vmslt.vi v1, v2, 5
vmsltu.vi v1, v2, 5
vmsge.vi v1, v2, 5
vmsgeu.vi v1, v2, 5
vmsge.vx v1, v2, a0
vmsgeu.vx v1, v2, a0
vmsge.vx v1, v2, a0, v0.t
vmsge.vx v0, v2, a0, v0.t, v3
vmsge.vx v1, v2, a0, v0.t, v3
vmmv.m v1, v2
vmcpy.m v1, v2
vmnot.m v1, v2
vmclr.m v1
vmset.m v1
vpopc.m a0, v1
vcpop.m a0, v1
vmandnot.mm v1, v2, v3
vmornot.mm v1, v2, v3
vmv.v.v v1, v2
vmv1r.v v1, v2
vmerge.vvm v1, v2, v3, v0
vrsub.vx v1, v2, a0
