"""Random vector programs for coral (RV32 Zve32x, VLEN 128), checked against qemu-riscv32.

A program is a list of assembly lines drawn from a seeded random.Random: vsetvli/vsetivli/vsetvl
with every legal SEW/LMUL, both tail and mask policies, AVLs below, at and above VLMAX (and 0),
then vector instructions of every kind coral implements, each with operands RVV allows for the
current vtype (register groups aligned to their EMUL, no overlap RVV forbids, no masked
destination on v0), masked or not, and random vxrm/vxsat. The state after the program (x, f and
v registers, vl, vtype, vxsat, vxrm, vstart, the data memory) is compared between qemu and both
of our simulators (the C simulator and the Python reference).

Tail and mask policies: our simulators leave tail and masked-off elements undisturbed, which RVV
1.0 allows for both policies (section 3.4.3: an agnostic element may be left undisturbed or set
to all ones). qemu 7.2 does the same unless started with rvv_ta_all_1s/rvv_ma_all_1s; the
comparison runs qemu with both options off, so every element, defined or not, is compared.

Offline use (many seeds, with the shrinker for each difference):
    PYTHONPATH=. python -m tests.targets.coral_vector_programs --seeds 0:3000 [--shrink]
"""
from __future__ import annotations

import argparse
import random
import re
import sys
import tempfile
from pathlib import Path

VLEN = 128
ELEN = 32
SEWS = (8, 16, 32)
LMUL_NAMES = {-3: "mf8", -2: "mf4", -1: "mf2", 0: "m1", 1: "m2", 2: "m4", 3: "m8"}
LMUL_CODES = {0: 0, 1: 1, 2: 2, 3: 3, -3: 5, -2: 6, -1: 7}
X_REGS = [1, 2] + list(range(5, 31))  # the registers the harness initialises (gp, tp: buffer pointers)
DATA, DUMP = 512, 2048  # buffer offsets: memory operands start at DATA; stores stay below DUMP

OPI = ["vadd", "vsub", "vminu", "vmin", "vmaxu", "vmax", "vand", "vor", "vxor", "vsll", "vsrl", "vsra",
       "vsaddu", "vsadd", "vssubu", "vssub", "vssrl", "vssra", "vsmul"]
OPI_IMM = {"vadd", "vand", "vor", "vxor", "vsll", "vsrl", "vsra", "vsaddu", "vsadd", "vssrl", "vssra"}
UIMM = {"vsll", "vsrl", "vsra", "vssrl", "vssra"}  # shift amounts are unsigned immediates
OPM = ["vaaddu", "vaadd", "vasubu", "vasub", "vmul", "vmulh", "vmulhu", "vmulhsu", "vdivu", "vdiv", "vremu", "vrem"]
MACC = ["vmacc", "vnmsac", "vmadd", "vnmsub"]
WIDE_VV = ["vwaddu", "vwadd", "vwsubu", "vwsub", "vwmulu", "vwmulsu", "vwmul"]
WIDE_W = ["vwaddu", "vwadd", "vwsubu", "vwsub"]
WMACC = ["vwmaccu", "vwmacc", "vwmaccsu"]
NARROW = ["vnsrl", "vnsra", "vnclipu", "vnclip"]
CMP_VV = ["vmseq", "vmsne", "vmsltu", "vmslt", "vmsleu", "vmsle"]
CMP_VX = CMP_VV + ["vmsgtu", "vmsgt"]
CMP_VI = ["vmseq", "vmsne", "vmsleu", "vmsle", "vmsgtu", "vmsgt"]
MASK_LOGIC = ["vmandn", "vmand", "vmor", "vmxor", "vmorn", "vmnand", "vmnor", "vmxnor"]
RED = ["vredsum", "vredand", "vredor", "vredxor", "vredminu", "vredmin", "vredmaxu", "vredmax"]


def regs_of(lg: int) -> int:
    """Registers in a group of EMUL = 2**lg (fractional: one)."""
    return 1 << lg if lg > 0 else 1


def emul_ok(eew: int, lg: int) -> bool:
    """EMUL = 2**lg is usable for elements of eew bits: 1/4..8 and at least eew/ELEN."""
    return -2 <= lg <= 3 and (1 << (lg + 3)) >= eew * 8 // ELEN


class Gen:
    """Draws one program; self.lines collects its assembly."""

    def __init__(self, rng: random.Random):
        self.r = rng
        self.lines: list[str] = []
        self.sew = None  # current SEW, LMUL (log2), VLMAX; None until the first vsetvli
        self.lg = 0

    # ---- draws -------------------------------------------------------------------------------
    def pick(self, seq):
        return self.r.choice(list(seq))

    def xs(self) -> str:
        """A scalar source: any initialised register, sometimes x0 or a freshly loaded small value."""
        k = self.r.random()
        if k < 0.1:
            return "x0"
        if k < 0.35:
            reg = self.pick(X_REGS[2:-2])
            self.lines.append(f"li x{reg}, {self.pick([0, 1, 2, 3, 7, 8, 15, 16, 31, 32, 33, -1, -2, -128, 127, 255, 0x7fff, -32768, 0x7fffffff, -2**31])}")
            return f"x{reg}"
        return f"x{self.pick(X_REGS)}"

    def xd(self) -> str:
        return f"x{self.pick(X_REGS[2:-2])}"  # t4, t5 stay free for addresses

    def group(self, n: int, avoid=(), masked=False):
        """An aligned group of n registers overlapping neither `avoid` nor (when masked) v0."""
        bad = set(avoid) | ({0} if masked else set())
        ok = [r for r in range(0, 32, n) if not set(range(r, r + n)) & bad]
        return self.pick(ok) if ok else None

    @staticmethod
    def span(r, n):
        return set(range(r, r + n))

    # ---- configuration --------------------------------------------------------------------------
    def vlmax(self, sew=None, lg=None):
        sew, lg = sew or self.sew, self.lg if lg is None else lg
        return (VLEN << lg) // sew if lg >= 0 else (VLEN >> -lg) // sew

    def legal_vtypes(self):
        return [(s, lg) for s in SEWS for lg in range(-2, 4) if emul_ok(s, lg)]

    def vset(self):
        sew, lg = self.pick(self.legal_vtypes())
        ta, ma = self.r.randint(0, 1), self.r.randint(0, 1)
        vlmax = self.vlmax(sew, lg)
        avl = self.pick([0, 1, 2, vlmax - 1, vlmax, vlmax + 1, 2 * vlmax, self.r.randint(0, 2 * vlmax),
                         self.r.randint(0, 2 ** 32 - 1)])
        avl = max(avl, 0)
        pol = f"{'ta' if ta else 'tu'}, {'ma' if ma else 'mu'}"
        form = self.r.randint(0, 5)
        same_ratio = self.sew is not None and self.vlmax() == vlmax
        if form == 0:
            self.lines.append(f"vsetivli {self.xd() if self.r.random() < 0.7 else 'x0'}, {min(avl, 31)}, e{sew}, {LMUL_NAMES[lg]}, {pol}")
        elif form == 1:
            self.lines.append(f"li t3, {avl}")
            self.lines.append(f"vsetvli {self.xd() if self.r.random() < 0.7 else 'x0'}, t3, e{sew}, {LMUL_NAMES[lg]}, {pol}")
        elif form == 2:  # AVL = VLMAX
            self.lines.append(f"vsetvli {self.xd()}, x0, e{sew}, {LMUL_NAMES[lg]}, {pol}")
        elif form == 3 and same_ratio:  # keep vl: only legal when VLMAX does not change
            self.lines.append(f"vsetvli x0, x0, e{sew}, {LMUL_NAMES[lg]}, {pol}")
        else:
            vt = (ma << 7) | (ta << 6) | ({8: 0, 16: 1, 32: 2}[sew] << 3) | LMUL_CODES[lg]
            self.lines += [f"li t3, {avl}", f"li t2, {vt}", f"vsetvl {self.xd()}, t3, t2"]
        self.sew, self.lg = sew, lg
        if self.r.random() < 0.5:
            self.lines.append(f"csrwi vxrm, {self.r.randint(0, 3)}")
        k = self.r.random()
        if k < 0.1:
            self.lines.append("csrwi vxsat, 0")
        elif k < 0.2:
            self.lines.append(f"csrwi vcsr, {self.r.randint(0, 7)}")

    # ---- one vector instruction -------------------------------------------------------------------
    def insn(self):
        kinds = ["opi", "opi", "opm", "macc", "cmp", "mlogic", "mscalar", "viota", "red", "merge", "mv",
                 "xs", "wholemv", "slide", "gather", "compress", "ld", "st", "strided", "indexed", "segment",
                 "whole", "maskmem", "ext", "carry", "setfirst", "seg_strided", "seg_indexed"]
        if self.sew < 32 and self.lg < 3:
            kinds += ["wide", "wide", "narrow", "wred"]
        k = self.pick(kinds)
        getattr(self, "k_" + k)()

    def masked(self):
        return self.r.random() < 0.4

    def k_opi(self):
        g, m = regs_of(self.lg), self.masked()
        vd, a, b = self.group(g, masked=m), self.group(g), self.group(g)
        op = self.pick(OPI + ["vrsub"])
        forms = ["vx", "vi"] if op == "vrsub" else ["vv", "vx"] + (["vi"] if op in OPI_IMM else [])
        f = self.pick(forms)
        last = {"vv": lambda: f"v{b}", "vx": self.xs,
                "vi": lambda: str(self.r.randint(0, 31) if op in UIMM else self.r.randint(-16, 15))}[f]()
        self.lines.append(f"{op}.{f} v{vd}, v{a}, {last}{', v0.t' if m else ''}")

    def k_opm(self):
        g, m = regs_of(self.lg), self.masked()
        vd, a, b = self.group(g, masked=m), self.group(g), self.group(g)
        op = self.pick(OPM)
        last = f"v{b}" if self.r.random() < 0.5 else self.xs()
        self.lines.append(f"{op}.{'vv' if last.startswith('v') else 'vx'} v{vd}, v{a}, {last}{', v0.t' if m else ''}")

    def k_macc(self):
        g, m = regs_of(self.lg), self.masked()
        vd, a, b = self.group(g, masked=m), self.group(g), self.group(g)
        op = self.pick(MACC)
        if self.r.random() < 0.5:
            self.lines.append(f"{op}.vv v{vd}, v{a}, v{b}{', v0.t' if m else ''}")
        else:
            self.lines.append(f"{op}.vx v{vd}, {self.xs()}, v{b}{', v0.t' if m else ''}")

    def k_cmp(self):
        g, m = regs_of(self.lg), self.masked()
        a, b = self.group(g), self.group(g)
        vd = self.group(1, avoid=self.span(a, g) | self.span(b, g))
        if self.r.random() < 0.25:  # a mask result may overwrite the lowest register of a source (5.2)
            vd = a
        if vd is None:
            return
        f = self.pick(["vv", "vx", "vi"])
        op = self.pick({"vv": CMP_VV, "vx": CMP_VX, "vi": CMP_VI}[f])
        last = {"vv": lambda: f"v{b}", "vx": self.xs, "vi": lambda: str(self.r.randint(-16, 15))}[f]()
        self.lines.append(f"{op}.{f} v{vd}, v{a}, {last}{', v0.t' if m else ''}")

    def k_mlogic(self):
        self.lines.append(f"{self.pick(MASK_LOGIC)}.mm v{self.r.randint(0, 31)}, v{self.r.randint(0, 31)}, v{self.r.randint(0, 31)}")

    def k_mscalar(self):
        m = ", v0.t" if self.masked() else ""
        self.lines.append(f"{self.pick(['vcpop.m', 'vfirst.m'])} {self.xd()}, v{self.r.randint(0, 31)}{m}")

    def k_carry(self):
        """vadc/vsbc (v0 holds the carries: vd must not be v0), vmadc/vmsbc (a mask result, with or
        without carry-in; it may overwrite the lowest register of a source, 5.2)."""
        g = regs_of(self.lg)
        a, b = self.group(g), self.group(g)
        op = self.pick(["vadc", "vsbc", "vmadc", "vmsbc"])
        forms = ["v", "x"] + (["i"] if op in ("vadc", "vmadc") else [])
        f = self.pick(forms)
        last = {"v": lambda: f"v{b}", "x": self.xs, "i": lambda: str(self.r.randint(-16, 15))}[f]()
        if op in ("vadc", "vsbc"):
            vd = self.group(g, masked=True)
            self.lines.append(f"{op}.v{f}m v{vd}, v{a}, {last}, v0")
            return
        srcs = self.span(a, g) | (self.span(b, g) if f == "v" else set())
        vd = a if self.r.random() < 0.25 else self.group(1, avoid=srcs)
        if vd is None:
            return
        carry_in = self.r.random() < 0.6
        self.lines.append(f"{op}.v{f}{'m' if carry_in else ''} v{vd}, v{a}, {last}{', v0' if carry_in else ''}")

    def k_setfirst(self):
        """vmsbf/vmsif/vmsof: vd overlaps neither the source nor, when masked, v0."""
        m = self.masked()
        s = self.r.randint(0, 31)
        vd = self.group(1, avoid={s}, masked=m)
        self.lines.append(f"{self.pick(['vmsbf', 'vmsif', 'vmsof'])}.m v{vd}, v{s}{', v0.t' if m else ''}")

    def k_viota(self):
        g, m = regs_of(self.lg), self.masked()
        if self.r.random() < 0.5:
            vd = self.group(g, masked=m)
            self.lines.append(f"vid.v v{vd}{', v0.t' if m else ''}")
            return
        s = self.r.randint(0, 31)
        vd = self.group(g, avoid={s}, masked=m)
        if vd is not None:
            self.lines.append(f"viota.m v{vd}, v{s}{', v0.t' if m else ''}")

    def k_red(self):
        g, m = regs_of(self.lg), self.masked()
        self.lines.append(f"{self.pick(RED)}.vs v{self.r.randint(0, 31)}, v{self.group(g)}, v{self.r.randint(0, 31)}{', v0.t' if m else ''}")

    def k_wred(self):
        g, m = regs_of(self.lg), self.masked()
        self.lines.append(f"{self.pick(['vwredsum', 'vwredsumu'])}.vs v{self.r.randint(0, 31)}, v{self.group(g)}, v{self.r.randint(0, 31)}{', v0.t' if m else ''}")

    def k_merge(self):
        g = regs_of(self.lg)
        vd, a, b = self.group(g, masked=True), self.group(g), self.group(g)
        last = self.pick([f"v{b}", "X", str(self.r.randint(-16, 15))])
        if last == "X":
            last = self.xs()
        f = "vvm" if last.startswith("v") else "vxm" if last.startswith("x") else "vim"
        self.lines.append(f"vmerge.{f} v{vd}, v{a}, {last}, v0")

    def k_mv(self):
        g = regs_of(self.lg)
        vd, a = self.group(g), self.group(g)
        self.lines.append(self.pick([f"vmv.v.v v{vd}, v{a}", f"vmv.v.x v{vd}, {self.xs()}", f"vmv.v.i v{vd}, {self.r.randint(-16, 15)}"]))

    def k_xs(self):
        if self.r.random() < 0.5:
            self.lines.append(f"vmv.x.s {self.xd()}, v{self.r.randint(0, 31)}")
        else:
            self.lines.append(f"vmv.s.x v{self.r.randint(0, 31)}, {self.xs()}")

    def k_wholemv(self):
        n = self.pick([1, 2, 4, 8])
        self.lines.append(f"vmv{n}r.v v{self.group(n)}, v{self.group(n)}")

    def k_slide(self):
        g, m = regs_of(self.lg), self.masked()
        vd = self.group(g, masked=m)
        a = self.group(g, avoid=self.span(vd, g))
        mm = ", v0.t" if m else ""
        self.lines.append(self.pick([
            f"vslideup.vx v{vd}, v{a}, {self.xs()}{mm}", f"vslideup.vi v{vd}, v{a}, {self.r.randint(0, 31)}{mm}",
            f"vslidedown.vx v{vd}, v{a}, {self.xs()}{mm}", f"vslidedown.vi v{vd}, v{a}, {self.r.randint(0, 31)}{mm}",
            f"vslide1up.vx v{vd}, v{a}, {self.xs()}{mm}", f"vslide1down.vx v{vd}, v{a}, {self.xs()}{mm}"]))

    def k_gather(self):
        g, m = regs_of(self.lg), self.masked()
        vd = self.group(g, masked=m)
        a, b = self.group(g, avoid=self.span(vd, g)), self.group(g, avoid=self.span(vd, g))
        mm = ", v0.t" if m else ""
        forms = [f"vrgather.vv v{vd}, v{a}, v{b}{mm}", f"vrgather.vx v{vd}, v{a}, {self.xs()}{mm}",
                 f"vrgather.vi v{vd}, v{a}, {self.r.randint(0, 31)}{mm}"]
        ilg = self.lg + 4 - {8: 3, 16: 4, 32: 5}[self.sew]  # EMUL of the 16-bit indices
        if emul_ok(16, ilg):
            ni = regs_of(ilg)
            c = self.group(ni, avoid=self.span(vd, g))
            if c is not None:
                forms.append(f"vrgatherei16.vv v{vd}, v{a}, v{c}{mm}")
        self.lines.append(self.pick(forms))

    def k_compress(self):
        g = regs_of(self.lg)
        s1 = self.r.randint(0, 31)
        vd = self.group(g, avoid={s1})
        if vd is None:
            return
        a = self.group(g, avoid=self.span(vd, g))
        self.lines.append(f"vcompress.vm v{vd}, v{a}, v{s1}")

    def k_ext(self):
        g, m = regs_of(self.lg), self.masked()
        forms = []
        for f in (2, 4):
            src_lg = self.lg - (1 if f == 2 else 2)
            if emul_ok(self.sew // f, src_lg) and self.sew // f >= 8:
                forms.append((f, src_lg))
        if not forms:
            return
        f, src_lg = self.pick(forms)
        vd = self.group(g, masked=m)
        s = self.group(regs_of(src_lg), avoid=self.span(vd, g))
        if s is not None:
            self.lines.append(f"{self.pick(['vzext', 'vsext'])}.vf{f} v{vd}, v{s}{', v0.t' if m else ''}")

    def k_wide(self):
        g, m = regs_of(self.lg), self.masked()
        w = regs_of(self.lg + 1)
        a, b = self.group(g), self.group(g)
        vd = self.group(w, avoid=self.span(a, g) | self.span(b, g), masked=m)
        if self.lg >= 0 and self.r.random() < 0.25:
            # RVV 1.0 5.2: a source of EMUL >= 1 may overlap the highest-numbered half of vd
            vd = self.group(w, masked=m)
            a = b = vd + g
        if vd is None:
            return
        mm = ", v0.t" if m else ""
        k = self.r.randint(0, 3)
        if k == 0:
            op = self.pick(WIDE_VV)
            last = f"v{b}" if self.r.random() < 0.5 else self.xs()
            self.lines.append(f"{op}.{'vv' if last.startswith('v') else 'vx'} v{vd}, v{a}, {last}{mm}")
        elif k == 1:  # the wide source may be vd itself
            ws = self.group(w) if self.r.random() < 0.5 else vd
            last = f"v{b}" if self.r.random() < 0.5 else self.xs()
            self.lines.append(f"{self.pick(WIDE_W)}.{'wv' if last.startswith('v') else 'wx'} v{vd}, v{ws}, {last}{mm}")
        elif k == 2:
            op = self.pick(WMACC)
            if self.r.random() < 0.5:
                self.lines.append(f"{op}.vv v{vd}, v{a}, v{b}{mm}")
            else:
                self.lines.append(f"{op}.vx v{vd}, {self.xs()}, v{b}{mm}")
        else:
            self.lines.append(f"vwmaccus.vx v{vd}, {self.xs()}, v{b}{mm}")

    def k_narrow(self):
        g, m = regs_of(self.lg), self.masked()
        w = regs_of(self.lg + 1)
        vd = self.group(g, masked=m)
        s2 = self.group(w, avoid=self.span(vd, g))
        if self.r.random() < 0.25:  # RVV 1.0 5.2: vd may be the lowest-numbered part of the wide source
            s2 = self.group(w, masked=m)
            vd = s2
        if s2 is None:
            return
        f = self.pick(["wv", "wx", "wi"])
        last = {"wv": lambda: f"v{self.group(g)}", "wx": self.xs, "wi": lambda: str(self.r.randint(0, 31))}[f]()
        self.lines.append(f"{self.pick(NARROW)}.{f} v{vd}, v{s2}, {last}{', v0.t' if m else ''}")

    # ---- memory ------------------------------------------------------------------------------------
    def addr(self, span: int, store: bool) -> None:
        """t5 = an address whose `span` bytes lie in the buffer (stores: in the compared area)."""
        lo, hi = (DATA, DUMP - span) if store else (0, DUMP - span)
        self.lines.append(f"addi t5, tp, {self.r.randint(lo, max(lo, hi))}")

    def eew_emul(self, eew):
        lg = self.lg + {8: 3, 16: 4, 32: 5}[eew] - {8: 3, 16: 4, 32: 5}[self.sew]
        return lg if emul_ok(eew, lg) else None

    def vl_bound(self):
        return self.vlmax()

    def k_ld(self, store=False):
        eew = self.pick(SEWS)
        lg = self.eew_emul(eew)
        if lg is None:
            return
        m = self.masked()
        vd = self.group(regs_of(lg), masked=m and not store)
        self.addr(self.vl_bound() * eew // 8, store)
        op = f"vse{eew}.v" if store else self.pick([f"vle{eew}.v", f"vle{eew}ff.v"])
        self.lines.append(f"{op} v{vd}, (t5){', v0.t' if m else ''}")

    def k_st(self):
        self.k_ld(store=True)

    def k_strided(self):
        eew = self.pick(SEWS)
        lg = self.eew_emul(eew)
        if lg is None:
            return
        store, m = self.r.random() < 0.5, self.masked()
        vd = self.group(regs_of(lg), masked=m and not store)
        stride = self.pick([0, eew // 8, -(eew // 8), 2 * eew // 8, 3 * eew // 8, -4 * eew // 8, 12])
        n = self.vl_bound()
        self.lines.append(f"li t4, {stride}")
        lo = DATA + max(0, -stride) * n
        hi = DUMP - max(0, stride) * n - eew // 8
        self.lines.append(f"addi t5, tp, {self.r.randint(lo, max(lo, hi)) // (eew // 8) * (eew // 8)}")
        self.lines.append(f"{'vsse' if store else 'vlse'}{eew}.v v{vd}, (t5), t4{', v0.t' if m else ''}")

    def k_indexed(self):
        ieew = self.pick(SEWS)
        ilg = self.eew_emul(ieew)
        if ilg is None:
            return
        g, ni = regs_of(self.lg), regs_of(ilg)
        store, m = self.r.random() < 0.5, self.masked()
        idx = self.group(ni)
        vd = self.group(g, avoid=self.span(idx, ni), masked=m and not store)
        if vd is None:
            return
        self.small_offsets(ieew, ilg, idx)
        self.lines.append(f"addi t5, tp, {DATA}")
        op = self.pick(["vsuxei", "vsoxei"] if store else ["vluxei", "vloxei"])
        self.lines.append(f"{op}{ieew}.v v{vd}, (t5), v{idx}{', v0.t' if m else ''}")

    def small_offsets(self, ieew, ilg, idx):
        """Make the index group's byte offsets small (<= 1023) and SEW-aligned; the same SEW/LMUL
        ratio keeps vl."""
        if ieew > 8:  # make the offsets small and aligned: same SEW/LMUL ratio keeps vl
            limit = 1023 & ~(self.sew // 8 - 1)
            self.lines += [f"vsetvli x0, x0, e{ieew}, {LMUL_NAMES[ilg]}, tu, mu", f"li t4, {limit}",
                           f"vand.vx v{idx}, v{idx}, t4",
                           f"vsetvli x0, x0, e{self.sew}, {LMUL_NAMES[self.lg]}, {self.pick(['tu', 'ta'])}, {self.pick(['mu', 'ma'])}"]
        elif self.sew > 8:
            self.lines += [f"vsetvli x0, x0, e8, {LMUL_NAMES[ilg]}, tu, mu", f"li t4, {-(self.sew // 8)}",
                           f"vand.vx v{idx}, v{idx}, t4",
                           f"vsetvli x0, x0, e{self.sew}, {LMUL_NAMES[self.lg]}, {self.pick(['tu', 'ta'])}, {self.pick(['mu', 'ma'])}"]

    def k_segment(self):
        eew = self.pick(SEWS)
        lg = self.eew_emul(eew)
        if lg is None:
            return
        n = regs_of(lg)
        nfs = [f for f in range(2, 9) if f * n <= 8]
        if not nfs:
            return
        nf = self.pick(nfs)
        store, m = self.r.random() < 0.5, self.masked()
        ok = [r for r in range(0, 32, n) if r + nf * n <= 32 and not (m and not store and r == 0)]
        vd = self.pick(ok)
        self.addr(self.vl_bound() * nf * eew // 8, store)
        self.lines.append(f"{'vsseg' if store else 'vlseg'}{nf}e{eew}.v v{vd}, (t5){', v0.t' if m else ''}")

    def segment_base(self, n, store, masked, avoid=()):
        """The first register of nf groups of n registers (nf * n <= 8, RVV 1.0 7.8), clear of
        `avoid` and, for a masked load, of v0; None when there is none."""
        nfs = [f for f in range(2, 9) if f * n <= 8]
        if not nfs:
            return None, None
        nf = self.pick(nfs)
        ok = [r for r in range(0, 32, n) if r + nf * n <= 32 and not (masked and not store and r == 0)
              and not self.span(r, nf * n) & set(avoid)]
        return (self.pick(ok), nf) if ok else (None, None)

    def k_seg_strided(self):
        eew = self.pick(SEWS)
        lg = self.eew_emul(eew)
        if lg is None:
            return
        store, m = self.r.random() < 0.5, self.masked()
        vd, nf = self.segment_base(regs_of(lg), store, m)
        if vd is None:
            return
        seg = nf * eew // 8
        stride = self.pick([0, seg, -seg, seg + eew // 8, 2 * seg, -3 * eew // 8, 4 * eew // 8])
        n = self.vl_bound()
        lo = DATA + max(0, -stride) * n
        hi = DUMP - max(0, stride) * n - seg
        self.lines.append(f"li t4, {stride}")
        self.lines.append(f"addi t5, tp, {self.r.randint(lo, max(lo, hi)) // (eew // 8) * (eew // 8)}")
        self.lines.append(f"{'vssseg' if store else 'vlsseg'}{nf}e{eew}.v v{vd}, (t5), t4{', v0.t' if m else ''}")

    def k_seg_indexed(self):
        """Indexed segment accesses: data EMUL = LMUL, fields at offset + f * SEW / 8; a load's
        destination groups must not overlap the index group."""
        ieew = self.pick(SEWS)
        ilg = self.eew_emul(ieew)
        if ilg is None:
            return
        ni = regs_of(ilg)
        store, m = self.r.random() < 0.5, self.masked()
        idx = self.group(ni)
        vd, nf = self.segment_base(regs_of(self.lg), store, m, avoid=() if store else self.span(idx, ni))
        if vd is None:
            return
        self.small_offsets(ieew, ilg, idx)
        self.lines.append(f"addi t5, tp, {DATA}")
        op = self.pick(["vsuxseg", "vsoxseg"] if store else ["vluxseg", "vloxseg"])
        self.lines.append(f"{op}{nf}ei{ieew}.v v{vd}, (t5), v{idx}{', v0.t' if m else ''}")

    def k_whole(self):
        n = self.pick([1, 2, 4, 8])
        store = self.r.random() < 0.5
        self.addr(16 * n, store)
        if store:
            self.lines.append(f"vs{n}r.v v{self.group(n)}, (t5)")
        else:
            self.lines.append(f"vl{n}re{self.pick(SEWS)}.v v{self.group(n)}, (t5)")

    def k_maskmem(self):
        store = self.r.random() < 0.5
        self.addr(16, store)
        self.lines.append(f"{'vsm.v' if store else 'vlm.v'} v{self.r.randint(0, 31)}, (t5)")


VSTART_ZERO = re.compile(r"v(w?red|cpop|first|iota|compress|msbf|msif|msof)")  # these raise an illegal instruction when vstart != 0
ILLEGAL_VTYPES = [0x18, 0x1d, 0x05, 0x0d, 0x16, 0x04, 0x100, 0x80000000, 0x11]  # e64, mf8, LMUL < SEW/ELEN, reserved


def program(seed: int, length: int | None = None, vstart: bool = False) -> list[str]:
    """The body of program `seed`: a vsetvli first, then `length` (random: 1..24) steps; some
    programs end with an illegal vtype (vill: vl = 0, only whole-register moves still run)."""
    g = Gen(random.Random(seed))
    g.vset()
    for _ in range(length or g.r.randint(1, 24)):
        if g.r.random() < 0.12:
            g.vset()
        else:
            n = len(g.lines)
            g.insn()
            if vstart and g.r.random() < 0.3 and len(g.lines) > n and not VSTART_ZERO.match(g.lines[-1]):
                # resume part-way (RVV 1.0 section 3.7); then vstart = 0 again, as qemu 7.2 does not
                # reset it after vmv.x.s, vmv.s.x or when vstart >= vl (the spec says it must)
                # a vstart this vtype can never produce may raise an illegal instruction (3.7):
                # below VLMAX, and below 4 (e32, one register) for the whole-register forms
                cap = 3 if re.match(r"v[ls]\d|vmv\dr", g.lines[-1]) else min(31, g.vlmax() - 1)
                g.lines[-1:-1] = [f"csrwi vstart, {g.r.randint(0, cap)}"]
                g.lines.append("csrwi vstart, 0")
    if g.r.random() < 0.1:
        g.lines += [f"li t2, {g.pick(ILLEGAL_VTYPES)}", f"li t3, {g.r.randint(0, 40)}", f"vsetvl {g.xd()}, t3, t2"]
    return g.lines


def inputs(seed: int):
    """Initial x values and buffer bytes of program `seed`."""
    from tests.targets import test_coral as tc
    r = random.Random(seed ^ 0x5eed)
    xs = [r.getrandbits(32) for _ in range(len(tc.STATE) + 1)]
    init = tc.buffer_bytes(bytes(r.getrandbits(8) for _ in range(tc.FLOATS)), [r.choice(tc.NICE) for _ in range(32)])
    return xs, init


def differences(body: list[str], xs, init, tmp: Path) -> list[str] | None:
    """What differs between qemu and our simulators after prelude + body ([] when nothing);
    None when qemu refuses the program (an illegal instruction: not a comparable program)."""
    from tests.targets import test_coral as tc
    lines = tc.prelude(xs) + body
    try:
        want = tc.parse_dump(tc.run_qemu(lines, init, tmp))
    except AssertionError:
        return None
    out = []
    for cls in tc.machines():
        try:
            got = tc.run_ours(lines, init, cls)
        except AssertionError as e:
            out.append(f"{cls.__name__}: {str(e)[:200]}")
            continue
        out += tc.state_differences(cls.__name__, got, want)
    return out


def shrink(body: list[str], xs, init, tmp: Path) -> list[str]:
    """The fewest lines of body (removing one line at a time, then pairs) that still differ."""
    def bad(b):
        d = differences(b, xs, init, tmp)
        return bool(d)
    cur = list(body)
    changed = True
    while changed:
        changed = False
        for width in (4, 2, 1):
            i = 0
            while i < len(cur):
                cand = cur[:i] + cur[i + width:]
                if cand and bad(cand):
                    cur, changed = cand, True
                else:
                    i += 1
    return cur


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", default="0:200", help="range lo:hi of program seeds")
    ap.add_argument("--shrink", action="store_true", help="minimise each differing program")
    ap.add_argument("--length", type=int, default=None, help="steps per program (default: random 1..24)")
    ap.add_argument("--vstart", action="store_true", help="also write vstart before some instructions")
    a = ap.parse_args(argv)
    lo, hi = (int(s) for s in a.seeds.split(":"))
    equal = refused = 0
    differing = []
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        for seed in range(lo, hi):
            body = program(seed, a.length, a.vstart)
            xs, init = inputs(seed)
            diff = differences(body, xs, init, tmp)
            if diff is None:
                refused += 1
                print(f"seed {seed}: qemu refuses the program", flush=True)
            elif not diff:
                equal += 1
            else:
                differing.append(seed)
                print(f"seed {seed}: differs: {diff[:4]}", flush=True)
                if a.shrink:
                    small = shrink(body, xs, init, tmp)
                    print("  minimal:\n    " + "\n    ".join(small))
                    print("  " + "\n  ".join(differences(small, xs, init, tmp)[:6]), flush=True)
    print(f"programs {hi - lo}: equal {equal}, differing {len(differing)}, refused by qemu {refused}")
    print("differing seeds:", differing)
    return 1 if differing or refused else 0


if __name__ == "__main__":
    sys.exit(main())
