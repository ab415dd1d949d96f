"""Template baseline kernels for amdnpu (one AIE-ML / AIE2 compute tile), bf16 with fp32 accumulation,
except conv2d and depthwise_conv: int8 with 32-bit accumulators and a shift-round-saturate output,
as the published AIE-ML convolution kernels (mlir-aie conv2dk1 / conv2dk3 and the depthwise conv of
the bottleneck / MobileNet examples) compute them (see "int8 convolutions" below).

generate(task, cfg, layout, spec) -> assembly text for the item, sizes baked in.

The bf16 kernels are structured the way the published AIE kernel templates are: one vectorised loop
per operation, 32 bf16 lanes per x register, the bf16 MAC unit (vmul.f / vmac.f: a 4x8 by 8x4
matrix product into 16 fp32 lanes) for every multiplication, results narrowed with
vconv.bf16.fp32. The templates are written one operation per line, in dependence order; generate()
packs them into bundles and software-pipelines their counted inner loops with kcgen.schedule (the
list and modulo schedulers every VLIW description gets, driven by the ISA's slots and latencies
only), as the Peano compiler would schedule them. `unscheduled` keeps the text as written.

Building blocks shared with the reference generator (tasks/kernels/reference/amdnpu.py):

* Tiles for the MAC from row-major memory (the tile has no DMA here to pre-tile the operands):
  - "A tile" (4 rows x 8 k): load rows m..m+3 at k0..k0+15 as x = [row m | row m+1] and
    [row m+2 | row m+3]; vshuffle mode 2 (de-interleave 16-bit lanes, low half) gives the 4x8
    tile of the even k (k0, k0+2, .., k0+14), mode 3 the odd k.
  - "B tile" (8 k x 4 n) from row-major B[K, N]: rows k0+p, k0+p+2, .., k0+p+14 (p = parity)
    at n0..n0+15, two levels of mode-2/3 de-interleaves give four tiles q = 0..3 whose column j
    holds n = n0 + 4j + q, row r holds k = k0 + 2r + p (so they pair with the A tiles).
  - "transposed tile" (8 k x 4 n) from row-major W[N, K] (linear, gemv): rows n of W at k0..,
    three pair shuffles (interleave 32, interleave 16, de-interleave 32) give the even-k and the
    odd-k tiles.
  - output: four 4x4 fp32 blocks W_q (lane 4i+j = C[m+i][n0+4j+q]) narrowed to bf16 as
    [W0 | W2] and [W1 | W3]; interleave 16 then interleave 32 give rows m..m+3 of C.
* Element-wise transcendental functions (silu, gelu, exp) as piecewise-linear interpolants
  sum_t c_t * max(x, t) (silu and gelu: sum of c_t max(x, t) and c_s min(x, s) with no constant,
  exact at 0): vmax_lt.bf16 / vmin_ge.bf16 against a vector of knots (two knots per x register, one
  per 256-bit half), then one vmac.f whose A operand [c_t I4 | c_t' I4] scales and adds the two
  hinge vectors into 16 fp32 lanes. AIE2 has no exp unit and this model has no element-wise bf16
  multiply (only the dense 4x8x4 MAC mode is modelled), so the hinge sum is the polynomial-free
  evaluation the ISA offers; the knots and their error bounds are written into the kernel.
"""
from __future__ import annotations

import math
import re
from functools import lru_cache

import ml_dtypes
import numpy as np

BF16 = ml_dtypes.bfloat16


def bf(x: float) -> float:
    return float(np.float32(x).astype(BF16).astype(np.float32))


def bfbits(x: float) -> int:
    return int(np.array([x], dtype=np.float32).astype(BF16).view(np.uint16)[0])


class Asm:
    def __init__(self):
        self.lines: list[str] = []
        self.data: list[str] = []
        self.n = 0

    def __call__(self, *ops: str) -> None:
        self.lines.append("    " + " ; ".join(ops))

    def label(self, name: str) -> None:
        self.lines.append(f"{name}:")

    def comment(self, text: str) -> None:
        for line in text.splitlines():
            self.lines.append(f"    // {line}".rstrip())

    def new(self, stem: str = "L") -> str:
        self.n += 1
        return f"{stem}{self.n}"

    def table(self, name: str, halfwords: list[int], align: int = 6) -> None:
        """A table of 16-bit values in .data, 2^align-byte aligned (64 bytes: vector loads)."""
        self.data.append(f"    .p2align {align}")
        self.data.append(f"{name}:")
        for i in range(0, len(halfwords), 16):
            self.data.append("    .short " + ", ".join(str(h & 0xffff) for h in halfwords[i:i + 16]))

    def loop(self, counter: str, count: int):
        """Context manager: a counted loop (jnz back; preserve() gives the jump its 5 delay slots)."""
        asm = self

        class _Loop:
            def __enter__(self):
                self.top = asm.new("loop")
                self.at = len(asm.lines)
                asm(f"movxm {counter}, #{count}")
                asm.label(self.top)
                return self

            def __exit__(self, *exc):
                body = asm.lines[self.at + 2:]
                ops = [l for l in body if _ops(l)]
                if all(_ops(l) or l.strip().startswith("//") for l in body) and not any(map(_jumps, ops)) and \
                        counter not in set().union(*map(_mentions, ops)) and count * len(ops) <= 6:
                    # a loop this short is smaller unrolled than with its jump and delay slots
                    asm.lines[self.at:] = body * count
                    return
                if counter in set().union(*map(_mentions, ops)):  # the body reads the count: decrement first
                    asm(f"add {counter}, {counter}, #-1")
                    asm(f"jnz {counter}, #{self.top}")
                    return
                # the jump tests the count before its delay slot decrements it: one iteration less to count
                asm.lines[self.at] = f"    movxm {counter}, #{count - 1}"
                asm(f"jnz {counter}, #{self.top}")
                asm(f"add {counter}, {counter}, #-1 {DS_TAG}")
        return _Loop()

    def text(self) -> str:
        out = [".text"] + self.lines + ["    done"]
        if self.data:
            out += [".data"] + self.data
        return "\n".join(out) + "\n"


def addr(layout, name: str) -> int:
    return layout.placements[name].address


# ---- the ABI's callee-saved registers ------------------------------------------------------------
# r16..r23, p6 and p7 must hold their entry values when the kernel ends (targets/amdnpu.isa `abi {
# preserve ... }`, CSR_AIE2 of llvm-aie). `preserve` is the generators' prologue/epilogue inserter, applied
# once to a whole kernel's text; it does what a compiler's register allocator and prologue/epilogue
# inserter do, cheapest first:
#   1. rename: a callee-saved register the kernel writes whose uses do not require its class (not the
#      mask operand of vsel / vmax_lt / vmin_ge, which only r16..r23 can be) becomes a register of the
#      same file the kernel never mentions (r0..r15, r24..r31; p0..p5): no code at all;
#   2. hold: the rest (the masks, or a file with no register left) are copied at entry into registers
#      the kernel never mentions and copied back before `done` (r-register holders for r16..r23; r or p
#      holders for p6, p7; m registers hold only 20 bits), one mov or `or` each, packed two per bundle
#      (mv and alu slots) or by the reference's scheduler into the first and last bundles;
#   3. spill: whatever finds no free register is stored at entry into SAVE_AREA (the top 64 bytes of
#      the ABI's scratch region, which no kernel uses for anything else) and loaded back before `done`;
#      a kernel that needs the whole scratch region gives the slots a home in its .data instead (a
#      40-byte table labelled `csr_save`, as a compiler's frame in .bss).
# The lines it adds carry the comment `// csr`, so that running it again on a text (the reference
# generators reschedule the baseline's kernels) replaces them.
SAVE_AREA = 0xFFC0  # dm[0xffc0..0x10000]: the callee-saved spill slots (4 bytes each)
CSR_R = tuple(f"r{i}" for i in range(16, 24))
CSR_P = ("p6", "p7")
_CSR_TAG = "// csr"
_MASK_OP = {"vsel.16": 3, "vmax_lt.bf16": 1, "vmin_ge.bf16": 1, "vmax_lt.s16": 1, "vmin_ge.s16": 1}
_STORE_MN = ("st", "st.s8", "st.s16", "vst")
_NO_DEST = ("j", "jz", "jnz", "done", "nop", "nopx")
_REGTOK = re.compile(r"\b(r\d+|p\d|m\d|l\d)\b")


def _ops(line: str) -> list[tuple[str, list[str]]]:
    """The operations of one .text line (a bundle: `op ; op`), as (mnemonic, operands)."""
    code = line.split("//")[0].strip()
    if not code or code.endswith(":") or code.startswith("."):
        return []
    out = []
    for op in code.split(";"):
        op = op.strip()
        if not op:
            continue
        mn, _, rest = op.partition(" ")
        operands, depth, cur = [], 0, ""
        for ch in rest:
            depth += ch == "["
            depth -= ch == "]"
            if ch == "," and depth == 0:
                operands.append(cur.strip())
                cur = ""
            else:
                cur += ch
        if cur.strip():
            operands.append(cur.strip())
        out.append((mn, operands))
    return out


def _writes(mn: str, operands: list[str]) -> set[str]:
    """The scalar registers (r, p, m) an operation writes, implicit ones included (the mask of
    vmax_lt / vmin_ge, post-modified pointers)."""
    regs = lambda o: set(_REGTOK.findall(o))
    w = set()
    for i, o in enumerate(operands):  # post-modify: "[p], #imm" / "[p], m"
        if o.startswith("[") and "," not in o and i + 1 < len(operands):
            w |= regs(o)
    if mn.startswith(_STORE_MN) or mn in _NO_DEST or not operands:
        return w
    if mn.startswith("padd"):
        return w | regs(operands[0])
    if operands[0].startswith("["):
        return w
    w |= regs(operands[0])
    if mn.startswith(("vmax_lt", "vmin_ge")) and len(operands) > 1:
        w |= regs(operands[1])
    return w


JUMPS = ("j", "jz", "jnz", "jnzd")
DELAY_SLOTS = 5  # every AIE2 jump runs the 5 bundles after it before it lands (targets/amdnpu.isa, deviation 1)
DS_TAG = "// ds"  # a line in a jump's delay slots


def _jumps(line: str) -> bool:
    return any(mn in JUMPS for mn, _ in _ops(line))


def _mentions(line: str) -> set[str]:
    """The scalar registers a line names (l_k counts as both halves r16+2k, r17+2k)."""
    regs = set(_REGTOK.findall(line.split("//")[0]))
    for reg in list(regs):
        if reg[0] == "l":
            k = int(reg[1:])
            regs |= {f"r{16 + 2 * k}", f"r{17 + 2 * k}"}
    return regs


def _line_writes(line: str) -> set[str]:
    return set().union(*(_writes(mn, operands) for mn, operands in _ops(line)))


def delay_slots(text: str) -> str:
    """The kernel `text` with each jump given its 5 delay slots, as a compiler fills them: the jump
    moves up over the last (at most 5) lines before it that do not write a register it reads. A line
    that does (the counter's `add rN, rN, #-1`, the return address's `movxm p7` / `lda p7`: at most
    three) stays before the jump, and the jump moves on up only over lines that name none of the
    registers such lines name (and, past a load, over no store). The moved lines run in the delay
    slots, on either path, exactly as before the jump; 16-bit `nop` bundles (llvm-aie's filler) fill the rest. Delay-slot lines
    carry DS_TAG, so a second pass (a routine spliced into a kernel) leaves a filled jump alone."""
    lines = text.splitlines()
    out: list[str] = []
    k = 0
    while k < len(lines):
        line = lines[k]
        k += 1
        filled = 0  # delay slots the generator (or a pass before this one) filled already
        while k + filled < len(lines) and lines[k + filled].rstrip().endswith(DS_TAG):
            filled += 1
        if not _jumps(line) or filled >= DELAY_SLOTS:
            out.append(line)
            continue
        keep = _mentions(line)
        for extra in lines[k:k + filled]:  # what they do must not move above them
            keep |= _mentions(extra)
        guard: set[str] = set()  # registers named by the lines that stay
        moved: list[str] = []
        stay: list[str] = []
        past_load = False
        at = len(out)
        while len(moved) < DELAY_SLOTS - filled and at > 0:
            prev = out[at - 1]
            ops = _ops(prev)
            if not ops or _jumps(prev) or prev.rstrip().endswith(DS_TAG) or any(mn == "done" for mn, _ in ops):
                break
            if _line_writes(prev) & (keep | guard) or _mentions(prev) & guard:
                if len(stay) == 3 or len(ops) != 1 or ops[0][0].startswith(_STORE_MN):
                    break
                stay.insert(0, prev)
                guard |= _mentions(prev)
                past_load |= ops[0][0].startswith(("lda", "vlda", "vldb"))
            elif past_load and any(mn.startswith(_STORE_MN + ("vst",)) for mn, _ in ops):
                break
            else:
                moved.insert(0, prev)
            at -= 1
        if not moved:
            stay = out[at:]
        out[at:] = stay
        out.append(line)
        out += [f"{m.rstrip()} {DS_TAG}" for m in moved]
        out += [f"    nop {DS_TAG}"] * (DELAY_SLOTS - filled - len(moved))
    return "\n".join(out) + "\n"


_WAIT = re.compile(r"on line (\d+) has latency .*put (\d+) more bundle")


def wait_for_results(text: str, spec) -> str:
    """The kernel `text` with `nop` bundles before each read that the AIE2 pipeline would make before
    the value is written (it does not wait: targets/amdnpu.isa, deviation 5; the simulator would stall
    there instead), as far as kcgen.sim.hazards sees them: in straight-line code. A read in a jump's
    delay slots waits before the jump; when the value is written in the same delay slots, the lines
    delay_slots() moved there up to the reader go back before the jump (nops take their slots), and the
    read waits there. Not fixed: a read of a result from across a label (a loop's previous
    iteration) and a read in the same bundle as the write."""
    from kcgen.asm import Assembler
    from kcgen.sim.hazards import stale_reads
    asm = Assembler(spec)
    for _ in range(64):
        lines = text.splitlines()
        waits: dict[int, int] = {}
        unfill: dict[int, int] = {}  # jump line -> how many of its delay-slot lines go back before it
        for w in stale_reads(spec, asm.assemble(text, "kernel.s"), "kernel.s", text, limit=None):
            m = _WAIT.search(w.message)
            if m is None:
                continue
            at = w.loc.line - 1
            while at > 0 and lines[at].rstrip().endswith(DS_TAG):
                at -= 1  # the jump whose delay slot reads it
            if at != w.loc.line - 1 and int(m.group(1)) - 1 > at:
                unfill[at] = max(unfill.get(at, 0), w.loc.line - 1 - at)  # written in the same delay slots
                continue
            waits[at] = max(waits.get(at, 0), int(m.group(2)))
        if not waits and not unfill:
            break
        out: list[str] = []
        i = 0
        while i < len(lines):
            if i in unfill:  # moved work first (it precedes the nops in a filled block), then the jump
                back = [l[:l.rindex(DS_TAG)].rstrip() for l in lines[i + 1:i + 1 + unfill[i]]]
                if any(re.split(r"//", l)[0].strip() == "nop" for l in back):
                    out.append(lines[i])  # not work delay_slots() moved: leave it
                    i += 1
                    continue
                out += back + [lines[i]] + lines[i + 1 + unfill[i]:i + 1 + DELAY_SLOTS]
                out += [f"    nop {DS_TAG}"] * unfill[i]
                i += 1 + DELAY_SLOTS
                continue
            out += ["    nop"] * waits.get(i, 0)
            out.append(lines[i])
            i += 1
        text = "\n".join(out) + "\n"
    return text


def preserve(text: str, pack: bool = True) -> str:
    """The kernel `text` (.text ... done [.data ...]) with the callee-saved registers it writes renamed,
    held or spilled as described above. pack=True: the added lines are bundles already (template
    kernels, which are not scheduled); False: one operation per line for the reference's scheduler."""
    lines = [l for l in text.splitlines() if not l.rstrip().endswith(_CSR_TAG)]
    section, code = ".text", []
    for k, line in enumerate(lines):
        s = line.strip()
        if s.split()[:1] and s.split()[0] in (".text", ".data", ".bss", ".section", ".rodata"):
            section = s.split()[0]
            continue
        if section == ".text":
            code.append(k)
    mentioned, written, fixed = set(), set(), set()
    set_first = {}  # register -> whether the first operation that mentions it only writes it
    for k in code:
        for mn, operands in _ops(lines[k]):
            w = _writes(mn, operands)
            toks = [set(_REGTOK.findall(o)) for o in operands]
            if mn in _MASK_OP and len(operands) > _MASK_OP[mn]:
                fixed |= toks[_MASK_OP[mn]]
            for t in set().union(*toks) if toks else ():
                if t not in set_first:
                    dest_only = operands[0].strip() == t and not any(t in ts for ts in toks[1:])
                    set_first[t] = t in w and dest_only
            mentioned |= set().union(*toks) if toks else set()
            written |= w
    assert not any(t.startswith("l") for t in mentioned), "64-bit l registers alias r16..r23: not handled"
    free_r = [f"r{i}" for i in list(range(0, 16)) + list(range(24, 32)) if f"r{i}" not in mentioned]
    free_p = [f"p{i}" for i in range(6) if f"p{i}" not in mentioned]
    csrs = [r for r in CSR_R + CSR_P if r in written]
    # 1. rename
    rename = {}
    for reg in csrs:
        pool = free_p if reg.startswith("p") else free_r
        if reg not in fixed and pool:
            rename[reg] = pool.pop(0)
    if rename:
        pat = re.compile(r"\b(" + "|".join(rename) + r")\b")
        for k in code:
            lines[k] = pat.sub(lambda m: rename[m.group(1)], lines[k])
    # 2. hold, 3. spill
    hold, spill = {}, []
    for reg in csrs:
        if reg in rename:
            continue
        pool = free_r if reg.startswith("r") or not free_p else free_p
        if pool:
            hold[reg] = pool.pop(0)
        else:
            spill.append(reg)
    if not hold and not spill:
        text = "\n".join(lines) + "\n"
        return delay_slots(text) if pack else text
    save, restore = [], []  # (slot, text, reads, writes); slot "copy": an r-to-r copy, mov (mv) or or (alu)
    for reg, h in hold.items():
        rr = reg.startswith("r") and h.startswith("r")
        save.append(("copy" if rr else "mv", f"mov {h}, {reg}", {reg}, {h}))
        restore.append(("copy" if rr else "mv", f"mov {reg}, {h}", {h}, {reg}))
    if spill:
        # the slots' pointer: a free p register, else a held p6/p7 (saved first, restored last), else an
        # argument pointer the kernel does not read before it sets it
        ptr = next(iter(free_p), None) or next((r for r in CSR_P if r in hold), None) or \
            next((f"p{i}" for i in range(6) if set_first.get(f"p{i}", True)), None)
        assert ptr is not None, "no pointer register for the callee-saved spill slots"
        assert len(spill) * 4 <= 0x10000 - SAVE_AREA
        home = "csr_save" if any(l.strip() == "csr_save:" for l in lines) else SAVE_AREA
        save.append(("lng", f"movxm {ptr}, #{home}", set(), {ptr}))
        loads = [("lng", f"movxm {ptr}, #{home}", set(), {ptr})]
        for i, reg in enumerate(spill):
            save.append(("st", f"st {reg}, [{ptr}, #{4 * i}]", {reg, ptr}, set()))
            loads.append(("lda", f"lda {reg}, [{ptr}, #{4 * i}]", {ptr}, {reg}))
        if ptr in hold:  # restored from its holder after the loads that use it
            restore = loads + [r for r in restore if ptr not in r[3]] + [r for r in restore if ptr in r[3]]
        else:
            restore = loads + restore

    def as_alu(t: str) -> str:  # mov rd, rs as the alu slot's or rd, rs, rs
        d, src = t[4:].split(", ")
        return f"or {d}, {src}, {src}"

    def emit(ops) -> list[str]:
        if not pack:  # the scheduler packs them; r-to-r copies alternate between the mv and alu slots
            out, n_mv = [], sum(slot == "mv" for slot, *_ in ops)
            for slot, t, _, _ in ops:
                if slot == "copy":
                    alu = n_mv > 0
                    n_mv += -1 if alu else 1
                    t = as_alu(t) if alu else t
                out.append(f"    {t} {_CSR_TAG}")
            return out
        bundles = []  # [(slots, reads, writes)]
        for slot, t, rd, wr in ops:
            b = 0
            for j, (slots, r2, w2) in enumerate(bundles):  # after every bundle it depends on
                if rd & w2 or wr & r2 or wr & w2:
                    b = j + 1
            while True:
                if b == len(bundles):
                    bundles.append(({}, set(), set()))
                busy = set(bundles[b][0])
                for cand in (("mv", "alu") if slot == "copy" else (slot,)):
                    if cand not in busy and not (cand == "lng" and busy & {"alu", "mv"}) and \
                            not (cand in ("alu", "mv") and "lng" in busy):
                        bundles[b][0][cand] = as_alu(t) if cand == "alu" and slot == "copy" else t
                        bundles[b][1].update(rd)
                        bundles[b][2].update(wr)
                        break
                else:
                    b += 1
                    continue
                break
        return [f"    {' ; '.join(s.values())} {_CSR_TAG}" for s, _, _ in bundles]

    # the prologue before the first operation (after leading comments, before any label), the epilogue
    # before every `done`
    start = next(k for k in code if _ops(lines[k]) or lines[k].strip().endswith(":"))
    code = set(code)
    out, prev = [], None  # prev: the last operation before this line (a `done` after `j` is unreachable)
    for k, line in enumerate(lines):
        if k == start:
            out += emit(save)
        if k in code and line.split("//")[0].strip() == "done" and not (prev and prev[0] == "j"):
            out += emit(restore)
        out.append(line)
        if k in code and _ops(line) and not line.rstrip().endswith(DS_TAG):  # delay slots: the jump is still last
            prev = _ops(line)[-1]
        elif line.strip().endswith(":"):
            prev = None
    text = "\n".join(out) + "\n"
    return delay_slots(text) if pack else text


def setup_modes(a: Asm) -> None:
    """Scalar registers holding the vshuffle modes and the MAC configuration words."""
    a("movxm r10, #2")    # de-interleave 16-bit, low
    a("movxm r11, #3")    # de-interleave 16-bit, high
    a("movxm r12, #16")   # interleave 32-bit, low
    a("movxm r13, #17")   # interleave 32-bit, high
    a("movxm r14, #18")   # interleave 16-bit, low
    a("movxm r15, #19")   # interleave 16-bit, high
    a("movxm r24, #4")    # de-interleave 32-bit, low
    a("movxm r25, #5")    # de-interleave 32-bit, high
    a("movxm r9, #0")     # MAC config: accumulate (bf16 dense 4x8x4)


# ---- element-wise ---------------------------------------------------------------------------------
def gen_relu(a: Asm, cfg, layout) -> None:
    n = cfg["N"]
    a.comment(f"relu: y = max(x, 0), {n} bf16 elements, 32 per iteration")
    a("movxm p0, #%d" % addr(layout, "x"))
    a("movxm p1, #%d" % addr(layout, "y"))
    a("vsub.16 x2, x2, x2")  # +0.0 in every lane
    with a.loop("r1", n // 32):
        a("vlda wl0, [p0], #32")
        a("vlda wh0, [p0], #32")
        a("vmax_lt.bf16 x1, r16, x0, x2")
        a("vst wl1, [p1], #32")
        a("vst wh1, [p1], #32")


# ---- piecewise-linear transcendental functions ------------------------------------------------------
_erf = np.vectorize(math.erf)
FUNCS = {
    # exp (softmax, inputs <= 0): relative accuracy, because a row's sum adds up the errors
    "exp": (np.exp, -16.0, 0.0, (5e-5, 0.01), 0.0),
}
BIG = 2.0 ** 64  # a knot above every input: max(x, BIG) = BIG carries the constant term


@lru_cache(maxsize=None)
def pwl(fn: str):
    """Knots t (bf16), coefficients c (bf16) and the constant of f(x) ~ K + sum c_t max(x, t):
    the interpolant of f at greedily placed bf16 knots (each segment's interpolation error at most
    tol_abs + tol_rel * |f|), slope 0 left of the first knot and `right` right of the last. The coefficients are rounded
    with error feedback so that the slopes they add up to stay within one bf16 rounding.
    Returns (knots, coeffs, K, max error measured against f(bf16 x) on a dense grid)."""
    f, lo, hi, (tol_abs, tol_rel), right = FUNCS[fn]
    knots = [bf(lo)]
    while knots[-1] < hi:
        a0 = knots[-1]
        b = a0
        while True:
            nb = bf(b + 0.0625)
            xs = np.linspace(a0, nb, 200)
            lin = f(a0) + (f(nb) - f(a0)) * (xs - a0) / (nb - a0)
            if np.any(np.abs(lin - f(xs)) > tol_abs + tol_rel * np.abs(f(xs))) or nb > hi:
                break
            b = nb
        if b == a0:
            b = bf(a0 + 0.0625)
        knots.append(min(b, bf(hi)))
    t = np.array(knots)
    y = f(t)
    slopes = np.concatenate([[0.0], np.diff(y) / np.diff(t), [right]])
    coeffs, cum = [], 0.0
    for sl in slopes[1:]:
        v = bf(sl - cum)
        coeffs.append(v)
        cum += v
    K = float(y[0] - np.sum(np.array(coeffs) * t))
    xs = np.linspace(lo - 6, hi + 6 if right else 0.0, 40001)
    xb = xs.astype(np.float32).astype(BF16).astype(np.float64)
    k_hi = bf(K / BIG)
    approx = k_hi * BIG + bf(K / BIG - k_hi) * BIG + sum(c * np.maximum(xb, tt) for tt, c in zip(knots, coeffs))
    err = float(np.max(np.abs(approx - f(xb))))
    return tuple(knots), tuple(coeffs), K, err


# silu and gelu vanish at 0 and their inputs include exact zeros and values near 0 (the small and sparse
# profiles), where the result must be right relative to itself: an interpolant with a constant term
# (the sum of many large hinge terms cancelling to ~0) is off by its absolute error there. So they are
# written without a constant, every term zero at x = 0:
#     f(x) ~ c_0 x + sum_{t < 0} a_t max(x, t) + sum_{s > 0} b_s min(x, s)
# (c_0 x is the hinge max(x, -BIG)). Between -t0 and t0 (t0 = 1/128) this is f'(0) x, the tangent (for
# silu and gelu f'(0) = 1/2, exact in bf16); outwards the chords of f at greedily placed bf16 knots,
# each segment within max(E_REL |f(x)|, E_ABS min(1, |x|)) of f; slope 0 left of the last negative
# knot, 1 right of the last positive one. The coefficients are rounded to bf16 with error feedback
# outwards from 0 (each segment's slope within one rounding). The kernel evaluates max(x, t) with
# vmax_lt.bf16, min(x, s) with vmin_ge.bf16 (a pair of hinges per instruction, one per 256-bit half),
# and the products exactly in the fp32 accumulators of the bf16 MAC: f(+-0) = +-0 exactly.
ZFUNCS = {  # f, lo, hi, f'(0)
    "silu": (lambda x: x / (1.0 + np.exp(-x)), -9.0, 9.0, 0.5),
    "gelu": (lambda x: 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0))), -4.5, 4.5, 0.5),
}
Z_T0, Z_REL, Z_ABS = 1.0 / 128, 0.0075, 0.005


def _bf16_grid(lo: float, hi: float) -> np.ndarray:
    v = np.arange(0, 0x7F80, dtype=np.uint16).view(BF16).astype(np.float64)
    return v[(v >= lo) & (v <= hi)]


@lru_cache(maxsize=None)
def pwl_zero(fn: str):
    """The hinges [(op, knot, coeff)] (op max or min) of fn's zero-exact interpolant (see above) and its
    max error against fn(bf16 x) relative to max(|fn|, E_ABS min(1, |x|) / Z_ABS) on a dense grid."""
    f, lo, hi, d0 = ZFUNCS[fn]
    with np.errstate(over="ignore"):
        tol = lambda x: np.maximum(Z_REL * np.abs(f(x)), Z_ABS * np.minimum(1.0, np.abs(x)))
        hinges, total = [], 0.0
        for sgn, end in ((1, hi), (-1, -lo)):
            h = lambda u: sgn * f(sgn * u)  # the side as a function of u = |x|
            cand = _bf16_grid(Z_T0, end)
            knots, vals = [Z_T0], [d0 * Z_T0]
            while knots[-1] < end:
                a0, g0 = knots[-1], vals[-1]
                best = None
                for b in cand[cand > a0]:
                    us = np.linspace(a0, b, 64)
                    if np.any(np.abs(g0 + (h(b) - g0) * (us - a0) / (b - a0) - h(us)) > tol(sgn * us)):
                        break
                    best = b
                best = cand[cand > a0][0] if best is None else best
                knots.append(float(best))
                vals.append(float(h(best)))
            slopes = [d0] + [(vals[i + 1] - vals[i]) / (knots[i + 1] - knots[i]) for i in range(len(knots) - 1)]
            slopes.append(1.0 if sgn > 0 else 0.0)  # the tails
            cur = d0  # the realized slope of the segment inside the knot
            for i, u in enumerate(knots):
                c = bf(cur - slopes[i + 1])
                hinges.append(("min" if sgn > 0 else "max", sgn * u, c))
                cur -= c
                total += c
    hinges.append(("max", -BIG, bf(d0 - total)))
    xs = np.concatenate([np.linspace(lo - 6, hi + 6, 40001), np.geomspace(1e-6, 1, 2001), -np.geomspace(1e-6, 1, 2001)])
    xb = xs.astype(np.float32).astype(BF16).astype(np.float64)
    approx = sum(c * (np.maximum(xb, t) if op == "max" else np.minimum(xb, t)) for op, t, c in hinges)
    with np.errstate(over="ignore"):
        scale = np.maximum(np.abs(f(xb)), Z_ABS * np.minimum(1.0, np.abs(xb)) / Z_REL)
        err = float(np.max(np.abs(approx - f(xb))[scale > 0] / scale[scale > 0]))
    return tuple(hinges), err


def pwl_pairs(fn: str):
    """The hinges in pairs (op, t_a, c_a, t_b, c_b) of one op (max, min), each op's run padded to even.
    exp: the constant as hinges at BIG; silu, gelu: zero-exact (pwl_zero), the max pairs first."""
    if fn in ZFUNCS:
        hinges = pwl_zero(fn)[0]
        runs = [[(t, c) for op, t, c in hinges if op == want] for want in ("max", "min")]
        runs[0] += [(-BIG, 0.0)] * (len(runs[0]) % 2)
        runs[1] += [(BIG, 0.0)] * (len(runs[1]) % 2)
        return [(op, *run[i], *run[i + 1]) for op, run in zip(("max", "min"), runs) for i in range(0, len(run), 2)]
    knots, coeffs, K, _ = pwl(fn)
    k_hi = bf(K / BIG)  # the constant in two bf16 parts (a row sum of exp adds up its error)
    hinges = list(zip(knots, coeffs)) + [(BIG, k_hi), (BIG, bf(K / BIG - k_hi))]
    if len(hinges) % 2:
        hinges.append((BIG, 0.0))
    return [("max", hinges[i][0], hinges[i][1], hinges[i + 1][0], hinges[i + 1][1]) for i in range(0, len(hinges), 2)]


def pwl_table(a: Asm, fn: str, name: str) -> tuple:
    """Per pair 128 bytes: the knot vector [t_a x16 | t_b x16] and the A operand [c_a I4 | c_b I4].
    Returns the pairs' ops (max or min), in order."""
    words = []
    for op, ta, ca, tb, cb in pwl_pairs(fn):
        words += [bfbits(ta)] * 16 + [bfbits(tb)] * 16
        words += [bfbits(ca) if k == i else bfbits(cb) if k == i + 4 else 0 for i in range(4) for k in range(8)]
    a.table(name, words)
    return tuple(p[0] for p in pwl_pairs(fn))


HINGE_OP = {"max": "vmax_lt.bf16", "min": "vmin_ge.bf16"}


def pwl_doc(fn: str) -> str:
    if fn in ZFUNCS:
        hinges, err = pwl_zero(fn)
        fmt = lambda op: ", ".join(f"{t:g}" for o, t, c in hinges if o == op and abs(t) < BIG)
        return (f"{fn}(x) ~ c_0 x + sum_t a_t max(x, t) + sum_s b_s min(x, s) (no constant: exact at 0), "
                f"{len(hinges)} bf16 hinges, t = {fmt('max')};\ns = {fmt('min')} (tangent on |x| < {Z_T0:g}, "
                f"chords outside; error at most {err:.4f} x max(|{fn}(x)|, {Z_ABS / Z_REL:.3g} min(1, |x|)) against "
                f"{fn} of the bf16 input, then one bf16 rounding of the result)")
    knots, coeffs, K, err = pwl(fn)
    return (f"{fn}(x) ~ {K:.6g} + sum_t c_t * max(x, t) over {len(knots)} bf16 knots "
            f"{', '.join(f'{t:g}' for t in knots)}\n"
            f"(piecewise-linear interpolation; max |error| {err:.4f} against {fn} of the bf16 input, "
            f"then one bf16 rounding of the result)")


def pwl_block(a: Asm, table: str, ops, src: str, acc: str) -> None:
    """acc (bml/bmh, 16 fp32 lanes) = f(16 elements) where x[src] holds the 16 bf16 inputs in both
    halves; ops: the table's pairs (pwl_table). Uses x1..x3 and p5."""
    a(f"movxm p5, #{table}")
    for p, op in enumerate(ops):
        a("vlda wl1, [p5], #32")
        a("vlda wh1, [p5], #32")
        a("vlda wl2, [p5], #32")
        a("vlda wh2, [p5], #32")
        a(f"{HINGE_OP[op]} x3, r16, {src}, x1")
        if p == 0:
            a(f"vmul.f {acc}, x2, x3, r9")
        else:
            a(f"vmac.f {acc}, {acc}, x2, x3, r9")


def gen_unary_pwl(fn: str):
    def gen(a: Asm, cfg, layout) -> None:
        n = cfg["N"]
        a.comment(pwl_doc(fn))
        pairs = pwl_table(a, fn, "pwl_" + fn)
        a("movxm r9, #0")
        a("movxm p0, #%d" % addr(layout, "x"))
        a("movxm p1, #%d" % addr(layout, "y"))
        with a.loop("r1", n // 16):
            a("vlda wl0, [p0, #0]")
            a("vlda wh0, [p0], #32")
            pwl_block(a, "pwl_" + fn, pairs, "x0", "bml0")
            a("vconv.bf16.fp32 wl4, bml0")
            a("vst wl4, [p1], #32")
    return gen


# ---- row reductions and scalar helpers (softmax, norms) --------------------------------------------
SCRATCH = 0xF000  # the ABI's scratch region (4 KiB)


def tile_words(entries: dict) -> list[int]:
    """32 bf16 lanes, zero except entries {lane: value}."""
    return [bfbits(entries[l]) if l in entries else 0 for l in range(32)]


def common_tables(a: Asm) -> None:
    a.table("t_i4", tile_words({8 * i + i: 1.0 for i in range(4)}))               # A = [I4 | 0]
    a.table("t_hsum1", tile_words({4 * k + j: 1.0 for k in range(8) for j in (0, 1)}))  # B: row sums
    a.table("t_hsum2", tile_words({0: 1.0, 20: 1.0}))                                # B: lanes 0 + 5
    rec = [bfbits(1.0 / (1.0 + f / 128.0)) for f in range(128)]
    a.table("t_rec", rec)
    rsq = [bfbits((2.0 ** par * (1.0 + f / 128.0)) ** -0.5) for par in (0, 1) for f in range(128)]
    a.table("t_rsqrt", rsq)


def broadcast(a: Asm, reg: str) -> None:
    """Every lane of x[reg] = its lane 0 (five de-interleaves)."""
    for _ in range(5):
        a(f"vshuffle {reg}, {reg}, {reg}, r10")


def hsum16(a: Asm, acc: str, hsum2: str = "t_hsum2") -> None:
    """Lane 0 of wl10 = bf16 sum of the 16 fp32 lanes of acc (two MAC steps through bf16).
    Needs wh10 = 0; uses x9, bml3, p5."""
    a(f"vconv.bf16.fp32 wl10, {acc}")
    a("movxm p5, #t_hsum1")
    a("vlda wl9, [p5, #0]")
    a("vlda wh9, [p5, #32]")
    a("vmul.f bml3, x10, x9, r9")
    a("vconv.bf16.fp32 wl10, bml3")
    a(f"movxm p5, #{hsum2}")
    a("vlda wl9, [p5, #0]")
    a("vlda wh9, [p5, #32]")
    a("vmul.f bml3, x10, x9, r9")
    a("vconv.bf16.fp32 wl10, bml3")


def scalar_recip(a: Asm, rsqrt: bool) -> None:
    """r6 = bf16 bits of 1/v (or 1/sqrt(v)) for the positive bf16 v whose bits are in r1: a 128-entry
    (256 for rsqrt: exponent parity x mantissa) table of the mantissa's reciprocal, the exponent
    negated (halved) with integer ops. Exact to the table's bf16 rounding (<= 2^-9 relative)."""
    a("movxm r2, #-7")
    a("lshl r3, r1, r2")          # biased exponent
    a("movxm r2, #127")
    a("and r4, r1, r2")           # mantissa
    a("sub r3, r3, r2")           # unbiased exponent e
    if rsqrt:
        a("movxm r2, #1")
        a("and r5, r3, r2")       # parity
        a("movxm r2, #7")
        a("lshl r5, r5, r2")
        a("or r4, r4, r5")
        a("movxm r2, #-1")
        a("ashl r3, r3, r2")      # floor(e / 2)
    a("add r4, r4, r4")
    a("movxm r2, #%s" % ("t_rsqrt" if rsqrt else "t_rec"))
    a("add r4, r4, r2")
    a("mov p7, r4")
    a("lda.u16 r6, [p7, #0]")
    a("movxm r2, #7")
    a("lshl r3, r3, r2")
    a("sub r6, r6, r3")


def to_scalar(a: Asm, w: str, reg: str = "r1") -> None:
    a(f"movxm p6, #{SCRATCH}")
    a(f"vst {w}, [p6, #0]")
    a(f"lda.u16 {reg}, [p6, #0]")


def diag_from_scalar(a: Asm, reg: str, dst: str) -> None:
    """x[dst] = [s I4 | 0] for the bf16 bits in r6 (A operand that scales 16 lanes by s). Uses x11."""
    a(f"movxm p6, #{SCRATCH}")
    a(f"st.s16 {reg}, [p6, #0]")
    a("vlda wl11, [p6, #0]")
    broadcast(a, "x11")
    a("vsub.16 x9, x9, x9")
    a("movxm r16, #0x8040201")  # lanes 0, 9, 18, 27 (A[i][i])
    a(f"vsel.16 {dst}, x9, x11, r16")


def gen_softmax(a: Asm, cfg, layout) -> None:
    M, N = cfg["M"], cfg["N"]
    assert N % 32 == 0
    a.comment("softmax per row: max (vmax + shuffles), d = x - max (MAC, fp32), e = exp(d) as below,")
    a.comment("s = sum e (fp32 MAC accumulation), r = 1/s (mantissa table), y = e * r (MAC)")
    a.comment(pwl_doc("exp"))
    setup_modes(a)
    common_tables(a)
    pairs = pwl_table(a, "exp", "pwl_exp")
    a.table("t_sub", tile_words({**{8 * i + i: 1.0 for i in range(4)}, **{8 * i + i + 4: -1.0 for i in range(4)}}))
    a("movxm p0, #%d" % addr(layout, "x"))
    a("movxm p1, #%d" % addr(layout, "y"))
    a("vsub.16 x4, x4, x4")
    a("vsub.16 x5, x5, x5")
    a("vsub.16 x10, x10, x10")
    a("movxm p5, #t_i4")
    a("vlda wl6, [p5, #0]")
    a("vlda wh6, [p5, #32]")
    a("movxm p5, #t_sub")
    a("vlda wl8, [p5, #0]")
    a("vlda wh8, [p5, #32]")
    with a.loop("r0", M):
        # max of the row
        a("mov p2, p0")
        a("vlda wl7, [p2], #32")
        a("vlda wh7, [p2], #32")
        if N > 32:
            with a.loop("r1", N // 32 - 1):
                a("vlda wl0, [p2], #32")
                a("vlda wh0, [p2], #32")
                a("vmax_lt.bf16 x7, r16, x7, x0")
        for _ in range(5):
            a("vshuffle x0, x7, x7, r10")
            a("vshuffle x1, x7, x7, r11")
            a("vmax_lt.bf16 x7, r16, x0, x1")
        # e = exp(x - max), stored in y; s = sum e
        a("vclr cm2")
        a("mov p2, p0")
        a("mov p3, p1")
        with a.loop("r1", N // 16):
            a("vlda wl7, [p2], #32")
            a("vmul.f bml0, x8, x7, r9")
            a("vconv.bf16.fp32 wl0, bml0")
            a("vconv.bf16.fp32 wh0, bml0")
            pwl_block(a, "pwl_exp", pairs, "x0", "bml1")
            a("vconv.bf16.fp32 wl4, bml1")
            a("vst wl4, [p3], #32")
            a("vmac.f bmh2, bmh2, x6, x4, r9")
        hsum16(a, "bmh2")
        to_scalar(a, "wl10")
        scalar_recip(a, rsqrt=False)
        diag_from_scalar(a, "r6", "x11")
        a("mov p3, p1")
        with a.loop("r1", N // 16):
            a("vlda wl5, [p3, #0]")
            a("vmul.f bml0, x11, x5, r9")
            a("vconv.bf16.fp32 wl4, bml0")
            a("vst wl4, [p3], #32")
        a(f"movxm m0, #{2 * N}")
        a("padda [p0], m0")
        a("padda [p1], m0")


def norm_setup(a: Asm, N: int, eps: float) -> int:
    """Modes, tables and the zeroed gamma-tile scratch of the norm kernels; returns its address."""
    setup_modes(a)
    common_tables(a)
    a.table("t_sub", tile_words({**{8 * i + i: 1.0 for i in range(4)}, **{8 * i + i + 4: -1.0 for i in range(4)}}))
    a.table("t_pair", tile_words({**{8 * i + i: 1.0 for i in range(4)}, **{8 * i + i + 4: 1.0 for i in range(4)}}))
    a.table("t_trace1", tile_words({0: 1.0, 20: 1.0, 9: 1.0, 29: 1.0}))
    a.table("t_mean2", tile_words({0: 1.0 / N, 20: 1.0 / N}))
    a.table("t_eps", tile_words({0: eps}))
    a.table("ones_col0", [0x3F80 if lane % 8 == 0 else 0 for lane in range(32)])
    gt = SCRATCH + 0x100  # four gamma tiles (64 bytes each)
    a("vsub.16 x4, x4, x4")
    a(f"movxm p6, #{gt}")
    for _ in range(8):
        a("vst wl4, [p6], #32")
    return gt


def norm_gamma_phase(a: Asm, layer: bool, M: int, N: int, layout, gt: int, rename: bool = False) -> None:
    """y = z * gamma (+ beta) for z already in y: gamma as four diagonal B tiles per 16 columns
    (built by 16-bit scalar copies into scratch at gt), 4 rows of z as A tiles, the output
    shuffles of the gemm; beta through the accumulators' start value. (rename=True, for the
    reference: the scalar copies rotate over registers and carry memory tags for the scheduler.)"""
    # y = z * gamma (+ beta): 16 columns x 4 rows per step
    a("movxm p3, #%d" % addr(layout, "gamma"))
    if layer:
        a("movxm p4, #%d" % addr(layout, "beta"))
    a("movxm r5, #%d" % addr(layout, "y"))
    with a.loop("r0", N // 16):
        for n in range(16):
            p, s2, j = n % 2, (n // 2) % 2, n // 4
            dst = gt + 64 * (2 * p + s2) + 2 * (9 * j + 4 * s2)
            if rename:
                reg = ("r6", "r7", "r8", "r3", "r4", "r28", "r29", "r17")[n % 8]
                ptr = ("p7", "p0", "p1", "p6")[n % 4]
                a(f"lda.u16 {reg}, [p3], #2 // @gamma")
                a(f"movxm {ptr}, #{dst}")
                a(f"st.s16 {reg}, [{ptr}, #0] // @gt:{dst - gt}:{dst - gt + 2}")
                continue
            a("lda.u16 r6, [p3], #2")
            a(f"movxm p7, #{dst}")
            a("st.s16 r6, [p7, #0]")
        if layer:
            a("vsub.16 x8, x8, x8")
            a("vsub.16 x9, x9, x9")
            a("vlda wl8, [p4], #32")
            a("vshuffle x2, x8, x9, r10")
            a("vshuffle x3, x8, x9, r11")
            a("vshuffle x8, x2, x9, r10")   # q0
            a("vshuffle x10, x2, x9, r11")  # q2
            a("vshuffle x2, x3, x9, r10")   # q1
            a("vshuffle x11, x3, x9, r11")  # q3
            a("movxm p5, #ones_col0")
            a("vlda wl3, [p5, #0]")
            a("vlda wh3, [p5, #32]")
            a(f"movxm m5, #{gt + 256}")
            a(f"movxm p5, #{gt + 256}")
            for reg in ("x8", "x2", "x10", "x11"):
                a(f"vst wl{reg[1:]}, [p5], #32")
                a(f"vst wh{reg[1:]}, [p5], #32")
        a(f"movxm p6, #{gt}")
        for t in range(4):
            a(f"vlda wl{6 + t}, [p6], #32")
            a(f"vlda wh{6 + t}, [p6], #32")
        # tiles: x6 = (even, s0) -> q0, x7 = (even, s1) -> q2, x8 = (odd, s0) -> q1, x9 = (odd, s1) -> q3
        a("mov p2, r5")
        with a.loop("r1", M // 4):
            if layer:
                a(f"movxm p5, #{gt + 256}")
                a("movxm p6, #ones_col0")
                a("vlda wl11, [p6, #0]")
                a("vlda wh11, [p6, #32]")
                for acc in ("bml0", "bmh0", "bml1", "bmh1"):
                    a("vlda wl10, [p5], #32")
                    a("vlda wh10, [p5], #32")
                    a(f"vmul.f {acc}, x11, x10, r9")
            else:
                a("vclr cm0")
                a("vclr cm1")
            a_tiles(a, "p2", 2 * N, "x2", "x3")
            a("vmac.f bml0, bml0, x2, x6, r9")
            a("vmac.f bml1, bml1, x2, x7, r9")
            a("vmac.f bmh0, bmh0, x3, x8, r9")
            a("vmac.f bmh1, bmh1, x3, x9, r9")
            out_block(a, ("bml0", "bmh0", "bml1", "bmh1"), "p2", 2 * N)
            a(f"movxm m2, #{8 * N}")
            a("padda [p2], m2")
        a("movxm r6, #32")
        a("add r5, r5, r6")


def gen_norm(layer: bool):
    def gen(a: Asm, cfg, layout) -> None:
        M, N = cfg["M"], cfg["N"]
        assert M % 4 == 0 and N % 64 == 0
        eps = 1e-5 if layer else 1e-6
        a.comment(("layer_norm" if layer else "rms_norm") + ": per row, sums by MACs in fp32; sum of squares as the trace")
        a.comment("of T x T^T for the row viewed as 4 x N/4 (A tile and transposed tile of the same loads);")
        a.comment("1/sqrt by a 256-entry mantissa/exponent-parity table; gamma as diagonal B tiles (4 rows at a time)")
        gt = norm_setup(a, N, eps)
        a("vsub.16 x5, x5, x5")
        a("vsub.16 x10, x10, x10")
        a("movxm p0, #%d" % addr(layout, "x"))
        a("movxm p1, #%d" % addr(layout, "y"))
        with a.loop("r0", M):
            src = "p0"
            if layer:
                # mean
                a("vclr cm0")
                a("movxm p5, #t_pair")
                a("vlda wl8, [p5, #0]")
                a("vlda wh8, [p5, #32]")
                a("mov p2, p0")
                with a.loop("r1", N // 32):
                    a("vlda wl0, [p2], #32")
                    a("vlda wh0, [p2], #32")
                    a("vmac.f bml0, bml0, x8, x0, r9")
                hsum16(a, "bml0", "t_mean2")
                a("vshuffle x7, x10, x10, r10")
                for _ in range(4):
                    a("vshuffle x7, x7, x7, r10")
                # d = x - mean, kept in y
                a("movxm p5, #t_sub")
                a("vlda wl8, [p5, #0]")
                a("vlda wh8, [p5, #32]")
                a("mov p2, p0")
                a("mov p3, p1")
                with a.loop("r1", N // 16):
                    a("vlda wl7, [p2], #32")
                    a("vmul.f bml0, x8, x7, r9")
                    a("vconv.bf16.fp32 wl4, bml0")
                    a("vst wl4, [p3], #32")
                src = "p1"
            # sum of squares: the row as 4 rows of N/4
            a("vclr cm0")
            a(f"mov p2, {src}")
            with a.loop("r1", N // 64):
                a("mov p6, p2")
                a(f"movxm m6, #{N // 2}")
                a("vlda wl0, [p6], m6")
                a("vlda wh0, [p6], m6")
                a("vlda wl1, [p6], m6")
                a("vlda wh1, [p6], m6")
                a("vshuffle x2, x0, x1, r10")
                a("vshuffle x3, x0, x1, r11")
                a("vshuffle x6, x0, x1, r12")
                a("vshuffle x7, x0, x1, r13")
                a("vshuffle x8, x6, x7, r14")
                a("vshuffle x9, x6, x7, r15")
                a("vshuffle x6, x8, x9, r24")
                a("vshuffle x7, x8, x9, r25")
                a("vmac.f bml0, bml0, x2, x6, r9")
                a("vmac.f bml0, bml0, x3, x7, r9")
                a("padda [p2], #32")
            # mean of squares + eps -> bf16 -> 1/sqrt
            a("vconv.bf16.fp32 wl10, bml0")
            a("movxm p5, #t_trace1")
            a("vlda wl9, [p5, #0]")
            a("vlda wh9, [p5, #32]")
            a("vmul.f bml3, x10, x9, r9")
            a("vconv.bf16.fp32 wl10, bml3")
            a("movxm p5, #t_i4")
            a("vlda wl8, [p5, #0]")
            a("vlda wh8, [p5, #32]")
            a("movxm p5, #t_eps")
            a("vlda wl9, [p5, #0]")
            a("vlda wh9, [p5, #32]")
            a("vmul.f bml3, x8, x9, r9")
            a("movxm p5, #t_mean2")
            a("vlda wl9, [p5, #0]")
            a("vlda wh9, [p5, #32]")
            a("vmac.f bml3, bml3, x10, x9, r9")
            a("vconv.bf16.fp32 wl10, bml3")
            to_scalar(a, "wl10")
            scalar_recip(a, rsqrt=True)
            diag_from_scalar(a, "r6", "x11")
            # z = (x or d) * r, kept in y
            a(f"mov p2, {src}")
            a("mov p3, p1")
            with a.loop("r1", N // 16):
                a("vlda wl5, [p2], #32")
                a("vmul.f bml0, x11, x5, r9")
                a("vconv.bf16.fp32 wl4, bml0")
                a("vst wl4, [p3], #32")
            a(f"movxm m0, #{2 * N}")
            a("padda [p0], m0")
            a("padda [p1], m0")
        norm_gamma_phase(a, layer, M, N, layout, gt)
    return gen


# ---- convolutions ------------------------------------------------------------------------------------
def gen_conv(rename: bool = False):
    """bf16 direct convolution (stride 1, no padding, K = 3) with the input rows 32-byte aligned
    (W = 16 or 32): the Level-3 conv_block's template (tasks/kernels/baseline/amdnpu/conv_block.py;
    the Level-1 conv2d and depthwise_conv are int8, gen_conv_i8). For one output row step, A = 32 consecutive inputs of
    row oh+kh (4 MAC rows of 8) and A' = the same shifted by 4 elements (two selection MACs);
    B = the 8x4 band matrix of the weight row kh (B[k][j] = w[kh][k-j]), so A x B gives outputs
    8i+j and A' x B outputs 8i+4+j. The output rows (W-2 wide) are not 32-byte aligned, so the
    results leave through a scratch buffer and 16-bit scalar stores. (rename=True, used by the
    reference generator: each kernel row kh gets its own registers so that a scheduler can
    overlap the three.)"""
    def gen(a: Asm, cfg, layout) -> None:
        CI, CO, H, W, K = cfg["CI"], cfg["CO"], cfg["H"], cfg["W"], cfg["K"]
        assert K == 3 and W in (16, 32), (K, W)
        OH, OW = H - 2, W - 2
        R = 32 // W  # output rows per step
        assert OH % R == 0
        a.comment("conv2d: band-matrix MACs over 32-input row segments")
        setup_modes(a)
        a.table("t_sel1", tile_words({8 * i + i + 1: 1.0 for i in range(4)}))
        a.table("t_sel2", tile_words({8 * i + i + 5: 1.0 for i in range(3)}))
        tiles = SCRATCH + 0x100  # CI x 3 band tiles of 64 bytes
        stage = SCRATCH  # 2 x 32 bytes of results
        assert tiles + CI * 3 * 64 <= SAVE_AREA
        a("vsub.16 x4, x4, x4")
        a(f"movxm p6, #{tiles}")
        for _ in range(CI * 3 * 2):
            a("vst wl4, [p6], #32")
        a("movxm p5, #t_sel1")
        a("vlda wl10, [p5, #0]")
        a("vlda wh10, [p5, #32]")
        a("movxm p5, #t_sel2")
        a("vlda wl11, [p5, #0]")
        a("vlda wh11, [p5, #32]")
        a("movxm m5, #10")
        a("movxm p3, #%d" % addr(layout, "w"))
        a("movxm p1, #%d" % addr(layout, "y"))
        a("movxm r20, #%d" % addr(layout, "x"))  # input channel block of this output channel
        with a.loop("r0", CO):
            # band tiles of w[oc] (all CI input channels)
            a(f"movxm p4, #{tiles}")
            with a.loop("r1", CI):
                for kh in range(3):
                    for kw in range(3):
                        a("lda.u16 r6, [p3], #2")
                        a("mov p7, p4")
                        if kw:
                            a(f"padda [p7], #{8 * kw}")
                        for _ in range(4):
                            a("st.s16 r6, [p7], m5")
                    a("padda [p4], #64")
            a("mov r21, r20")  # row oh of channel block
            with a.loop("r1", OH // R):
                a("vclr cm0")
                a("vclr cm1")
                a(f"movxm p4, #{tiles}")
                a("mov p2, r21")
                U = 2 if rename and CI % 2 == 0 else 1  # input channels per iteration
                with a.loop("r2", CI // U):
                    for u in range(U):
                        ptr = ("p5", "p0")[u]
                        a(f"mov {ptr}, p2")
                        if u:
                            a(f"movxm m6, #{2 * H * W}")
                            a(f"padda [{ptr}], m6")
                        for kh in range(3):
                            xa, xs, xb = (3 * kh, 3 * kh + 1, 3 * kh + 2) if rename else (0, 1, 2)
                            sa = 2 + kh + 3 * u if rename else 2
                            if rename:
                                a(f"vlda wl{xa}, [{ptr}, #{2 * W * kh}]")
                                a(f"vlda wh{xa}, [{ptr}, #{2 * W * kh + 32}]")
                            else:
                                a(f"vlda wl{xa}, [p5, #0]")
                                a(f"vlda wh{xa}, [p5, #32]")
                                a(f"movxm m6, #{2 * W}")
                                a("padda [p5], m6")
                            a(f"vmul.f bml{sa}, x10, x{xa}, r9")
                            a(f"vmul.f bmh{sa}, x11, x{xa}, r9")
                            a(f"vconv.bf16.fp32 wl{xs}, bml{sa}")
                            a(f"vconv.bf16.fp32 wh{xs}, bmh{sa}")
                            a(f"vlda wl{xb}, [p4], #32")
                            a(f"vlda wh{xb}, [p4], #32")
                            a(f"vmac.f bml0, bml0, x{xa}, x{xb}, r9")
                            a(f"vmac.f bml1, bml1, x{xs}, x{xb}, r9")
                    a(f"movxm m6, #{2 * H * W * U}")
                    a("padda [p2], m6")
                a("vconv.bf16.fp32 wl4, bml0")
                a("vconv.bf16.fp32 wl5, bml1")
                a(f"movxm p6, #{stage}")
                a("vst wl4, [p6, #0]")
                a("vst wl5, [p6, #32]")
                a(f"movxm p6, #{stage}")
                a(f"movxm p7, #{stage + 32}")
                regs = []
                # rename (reference): two outputs per 32-bit word (OW is even, so the pairs are aligned)
                step, ld, st = (2, "lda", "st") if rename else (1, "lda.u16", "st.s16")
                for pos in range(0, 32, step):
                    src = "p6" if pos % 8 < 4 else "p7"
                    reg = ("r3", "r4", "r5", "r6", "r7", "r8", "r28", "r29")[len(regs)]
                    a(f"{ld} {reg}, [{src}], #{2 * step}")
                    if pos % W < OW:
                        regs.append(reg)
                    if len(regs) == 8 or (pos == 32 - step and regs):
                        for rr in regs:
                            a(f"{st} {rr}, [p1], #{2 * step}")
                        regs = []
                a(f"movxm r22, #{2 * W * R}")
                a("add r21, r21, r22")
    return gen


# ---- int8 convolutions (conv2d, depthwise_conv) ---------------------------------------------------------
# amdnpu computes conv2d and depthwise_conv in int8 with 32-bit accumulators and a shift-round-
# saturate output (requant in the task specs), as the published AIE-ML convolution kernels do
# (mlir-aie conv2dk1 / conv2dk3, the depthwise conv of the bottleneck / MobileNet examples).
#
# Formulation (im2col-free, direct): the int8 MAC multiplies A (4x8: 32 consecutive input bytes of
# one row, i.e. four 8-pixel units) by B (8x8) into 4x8 int32 lanes, lane 8i+j. With B0 the band
# matrix of one weight row, B0[k][j] = w[kh][k-j] (0 <= k-j <= 2), A x B0 gives output pixels
# 8i+j of the 32-pixel row segment, complete for j <= 5; the taps that fall into the next unit
# (pixels 8i+8, 8i+9 for j = 6, 7) come from A' x B1, with A' the segment shifted by one unit
# (A'[i][k] = x[8i+8+k]) and B1[k][j] = w[kh][8+k-j] (three non-zeros, rows 0-1; its high half is a
# register kept zero). The ISA has no byte-granular shuffle, so A' is made by the MAC itself: the
# row as the B operand, a unit-selection matrix S (S[i][i+1] = 1) as A, then vsrs with shift 0
# (exact). Lane 8*3+6/7 of each segment (pixels 30, 31) is not an output (OW = W - 2).
# The band tiles of one output channel (all its input channels) are built with scalar word stores
# into the scratch region (the program's .data when they do not fit it); the rows (W - 2 bytes, packed) leave through a 32-byte
# staging buffer in scratch and scalar copies.
I8_CFG = 0x308  # MAC config: int8 x int8 (bmode 1, amode 0), signed x and y, accumulate


def conv_i8_dims(depthwise: bool, cfg):
    if depthwise:
        C, H, W, K = cfg["C"], cfg["H"], cfg["W"], cfg["K"]
        return 1, C, H, W, K
    return cfg["CI"], cfg["CO"], cfg["H"], cfg["W"], cfg["K"]


def conv_i8_tiles(a: Asm, size: int, at: int = SCRATCH + 0x100):
    """Where the band tiles go (size bytes, 64-byte aligned): the scratch region from `at` when they
    fit below the spill slots, else a zeroed buffer in the program's .data (conv2d C5: 16 input
    channels' tiles, 4.5 KiB)."""
    if at + size <= SAVE_AREA:
        return at
    a.table("c_tiles", [0] * (size // 2))
    return "c_tiles"


def conv_i8_setup(a: Asm, shift: int) -> None:
    a.data.append("    .p2align 6")
    a.data.append("s_unit:")  # S[i][i+1] = 1 (i = 0..2): row i of S x D is unit i+1 of D
    a.data.append("    .byte " + ", ".join("1" if k == i + 1 and i < 3 else "0" for i in range(4) for k in range(8)))
    a(f"movxm r9, #{I8_CFG}")
    a("movxm s0, #0")
    a(f"movxm s1, #{shift}")
    a("movxm crrnd, #9")   # round half up (positive_inf): (acc + 2^(s-1)) >> s
    a("movxm crsat, #1")   # saturate to -128..127
    a("movxm r12, #8")
    a("movxm r13, #16")
    a("movxm r14, #24")
    a("movxm r15, #-8")
    a("movxm r18, #-16")


def conv_i8_tile(a: Asm, pw: str, pt: str, off: int, regs=("r3", "r4", "r5", "r6", "r7", "r8", "r28", "r29")) -> None:
    """The band tiles of one weight row (w[kh][0..2] at pw, post-incremented by 3) at pt + off:
    B0 (64 bytes) then B1 (32 bytes). The zero words of the tiles are never written (zeroed once).
    P = w2 | w1 << 8 | w0 << 16 (bytes), row k of B0 is P shifted to bytes k-2..k."""
    b0, b1, b2, p, q, t, u, v = regs
    a(f"lda.u8 {b0}, [{pw}], #1")
    a(f"lda.u8 {b1}, [{pw}], #1")
    a(f"lda.u8 {b2}, [{pw}], #1")
    a(f"lshl {b1}, {b1}, r12")
    a(f"lshl {b0}, {b0}, r13")
    a(f"or {p}, {b2}, {b1}")
    a(f"or {p}, {p}, {b0}")
    a(f"lshl {q}, {p}, r18")   # P >> 16
    a(f"lshl {t}, {p}, r15")   # P >> 8
    a(f"lshl {u}, {p}, r12")   # P << 8
    a(f"lshl {v}, {p}, r13")   # P << 16
    a(f"lshl {b2}, {p}, r14")  # P << 24
    tg = f" // @tiles:{off}:{off + 96}"
    for o, r in ((0, q), (8, t), (16, p), (24, u), (32, v), (36, q), (40, b2), (44, t), (52, p), (60, u),
                 (68, v), (76, b2)):
        a(f"st {r}, [{pt}, #{off + o}]" + tg)


def conv_i8_out_row(a: Asm, stage: str, n_parity: int, py: str, OW: int, words: bool, ph: str = "p6") -> None:
    """Copy OW bytes of a staged row (32-byte aligned at `stage`) to py (post-incremented by OW);
    the row's address is 4-aligned when n_parity = 0, else 2 mod 4 (OW even). words=False: one
    halfword at a time (lda.u16 / st.s16); True: word stores where the output is 4-aligned. ph is
    a pointer for the halfword loads (post-increment; their offsets are short)."""
    assert OW % 2 == 0
    a(f"mov {ph}, {stage}")
    if not words:
        for o in range(0, OW, 2):
            a(f"lda.u16 r3, [{ph}], #2 // @stage")
            a(f"st.s16 r3, [{py}], #2 // @y")
        return
    regs = ("r3", "r4", "r5", "r6", "r7", "r8", "r28", "r29", "r30", "r31")
    if n_parity == 0:
        nw = OW // 4
        for m in range(nw):
            a(f"lda {regs[m % len(regs)]}, [{stage}, #{4 * m}] // @stage")
        for m in range(nw):
            a(f"st {regs[m % len(regs)]}, [{py}], #4 // @y")
        if OW % 4:
            a(f"padda [{ph}], #{4 * nw}")
            a(f"lda.u16 r3, [{ph}], #2 // @stage")
            a(f"st.s16 r3, [{py}], #2 // @y")
    else:
        a(f"lda.u16 r3, [{ph}], #2 // @stage")
        a(f"st.s16 r3, [{py}], #2 // @y")
        nw = (OW - 2) // 4
        for m in range(nw):
            lo, hi = regs[(2 * m) % 10], regs[(2 * m + 1) % 10]
            a(f"lda.u16 {lo}, [{ph}], #2 // @stage")
            a(f"lda.u16 {hi}, [{ph}], #2 // @stage")
            a(f"lshl {hi}, {hi}, r13")
            a(f"or {lo}, {lo}, {hi}")
            a(f"st {lo}, [{py}], #4 // @y")
        if (OW - 2) % 4:
            a(f"lda.u16 r3, [{ph}], #2 // @stage")
            a(f"st.s16 r3, [{py}], #2 // @y")


def conv_i8_pair_copy(a: Asm, stage: str, py: str, stage_addr: int, regs, funnel: int = 3,
                      part: str = "all") -> None:
    """Copy two staged rows of 30 bytes (the even row at stage, the odd one at stage + 32) to py,
    4-aligned (60 bytes, post-incremented): seven words of the even row, a word of its last two
    bytes and the odd row's first two, then the odd row's bytes 2..29: the first `funnel` words
    joined from two word loads (W_m >> 16 | W_m+1 << 16), the rest from halfword pairs (the mix
    balances the load unit and the ALU). regs: at least 27 scalar registers, one per value (so a
    list scheduler can overlap everything). part: "loads", "rest" or "all" (the loads can be
    emitted ahead of other work). Uses p0, r13 = 16 and r18 = -16."""
    regs = list(regs)
    assert len(regs) >= 27
    ev, e7, o = regs[0:7], regs[7], regs[8:8 + funnel + 1]
    k = 8 + funnel + 1
    pairs = [(regs[k + 2 * i], regs[k + 2 * i + 1]) for i in range(7 - funnel)]
    k += 2 * (7 - funnel)
    tmp = regs[k:]
    if part in ("loads", "all"):
        for m in range(funnel + 1):
            a(f"lda {o[m]}, [{stage}, #{32 + 4 * m}] // @stage:32:64")
        a(f"movxm p0, #{stage_addr + 34 + 4 * funnel}")
        for lo, hi in pairs:
            a(f"lda.u16 {lo}, [p0], #2 // @stage:32:64")
            a(f"lda.u16 {hi}, [p0], #2 // @stage:32:64")
        a(f"lda {e7}, [{stage}, #28] // @stage:0:32")
        for m in range(7):
            a(f"lda {ev[m]}, [{stage}, #{4 * m}] // @stage:0:32")
    if part in ("rest", "all"):
        for m in range(7):
            a(f"st {ev[m]}, [{py}], #4 // @y")
        a(f"lshl {e7}, {e7}, r13")
        a(f"lshl {e7}, {e7}, r18")
        a(f"lshl {tmp[0]}, {o[0]}, r13")
        a(f"or {e7}, {e7}, {tmp[0]}")
        a(f"st {e7}, [{py}], #4 // @y")
        for m in range(funnel):
            lo, hi = tmp[1 + 2 * m], tmp[2 + 2 * m]
            a(f"lshl {lo}, {o[m]}, r18")
            a(f"lshl {hi}, {o[m + 1]}, r13")
            a(f"or {lo}, {lo}, {hi}")
            a(f"st {lo}, [{py}], #4 // @y")
        for lo, hi in pairs:
            a(f"lshl {hi}, {hi}, r13")
            a(f"or {lo}, {lo}, {hi}")
            a(f"st {lo}, [{py}], #4 // @y")


def conv_i8_pair_copy_shifted(a: Asm, stage: str, py: str, regs) -> None:
    """Copy a staged row pair to py (60 bytes, 4-aligned, post-incremented) when the odd row is
    staged two lanes up (lane = pixel + 2, at stage + 32): the even row's seven words, a word of
    its bytes 28-29 and the odd row's 0-1, then the odd row's seven words, all aligned word loads.
    regs: 16 scalar registers. Uses r13 = 16 and r18 = -16."""
    ev, e7, o0, od = list(regs[0:7]), regs[7], regs[8], list(regs[9:16])
    for m in range(7):
        a(f"lda {ev[m]}, [{stage}, #{4 * m}] // @stage:0:32")
    a(f"lda {e7}, [{stage}, #28] // @stage:0:32")
    a(f"lda {o0}, [{stage}, #32] // @stage:32:64")
    for m in range(7):
        a(f"lda {od[m]}, [{stage}, #{36 + 4 * m}] // @stage:32:64")
    for m in range(7):
        a(f"st {ev[m]}, [{py}], #4 // @y")
    a(f"lshl {e7}, {e7}, r13")
    a(f"lshl {e7}, {e7}, r18")
    a(f"lshl {o0}, {o0}, r18")
    a(f"lshl {o0}, {o0}, r13")
    a(f"or {e7}, {e7}, {o0}")
    a(f"st {e7}, [{py}], #4 // @y")
    for m in range(7):
        a(f"st {od[m]}, [{py}], #4 // @y")


def conv_i8_clear_tiles(a: Asm, tiles: int, tsize: int) -> None:
    """Zero the band-tile buffer (tsize bytes at tiles; the bands fill only some lanes) and load
    the unit selection row into wl11. Uses x10 and p6."""
    a("vsub.8 x10, x10, x10")
    a(f"movxm p6, #{tiles}")
    for _ in range(tsize // 32):
        a("vst wl10, [p6], #32")
    a("movxm p6, #s_unit")
    a("vlda wl11, [p6, #0]")


def gen_conv_i8(depthwise: bool):
    """The template: per output channel its band tiles, then per output row and input channel
    and kernel row one shift MAC (A'), and the two band MACs; the row leaves through staging,
    one halfword at a time."""
    def gen(task, cfg, layout, spec) -> str:
        CI, CO, H, W, K = conv_i8_dims(depthwise, cfg)
        assert K == 3 and W % 32 == 0, (K, W)
        OH, OW = H - 2, W - 2
        shift = task.requant_shift("amdnpu", "y", cfg)
        tsize = CI * 3 * 96
        xa, wa, ya = addr(layout, "x"), addr(layout, "w"), addr(layout, "y")
        a = Asm()
        tiles = conv_i8_tiles(a, tsize)
        a.comment(("depthwise_conv" if depthwise else "conv2d") + " (int8, 32-bit accumulation, shift-round-saturate "
                  f"by {shift}): band-matrix MACs over 32-input row segments")
        conv_i8_setup(a, shift)
        conv_i8_clear_tiles(a, tiles, tsize)
        a("vsub.8 x4, x4, x4")  # wh4 stays zero: B1's rows 4..7
        a(f"movxm p3, #{wa}")
        a(f"movxm p1, #{ya}")
        a(f"movxm r20, #{xa}")
        a(f"movxm p7, #{SCRATCH}")
        with a.loop("r0", CO):
            a(f"movxm p4, #{tiles}")
            with a.loop("r1", CI * 3):
                conv_i8_tile(a, "p3", "p4", 0)
                a("padda [p4], #96")
            a("mov r21, r20")  # row oh of the channel block
            with a.loop("r1", OH):
                for seg in range(W // 32):
                    a("vclr cm0")
                    a(f"movxm p4, #{tiles}")
                    a("mov p2, r21")
                    if seg:
                        a(f"padda [p2], #{32 * seg}")
                    with a.loop("r2", CI):
                        a("mov p5, p2")
                        for kh in range(3):
                            a("vlda wl1, [p5, #0]")
                            a(f"movxm m6, #{W}")
                            a("padda [p5], m6")
                            a("vmul cm1, x11, x1, r9")
                            a("vsrs.s8.s32 wl2, cm1, s0")
                            a("vlda wl5, [p4, #0]")
                            a("vlda wh5, [p4, #32]")
                            a("vlda wl4, [p4, #64]")
                            a("padda [p4], #96")
                            a("vmac cm0, cm0, x1, x5, r9")
                            a("vmac cm0, cm0, x2, x4, r9")
                        a(f"movxm m6, #{H * W}")
                        a("padda [p2], m6")
                    a("vst.srs.s8.s32 cm0, s1, [p7, #0]")
                    conv_i8_out_row(a, "p7", 0, "p1", min(32, OW - 32 * seg), words=False)
                a(f"movxm r22, #{W}")
                a("add r21, r21, r22")
            if depthwise:
                a(f"movxm r22, #{H * W}")
                a("add r20, r20, r22")
        return a.text()
    return gen


# ---- matrix products --------------------------------------------------------------------------------
def out_block(a: Asm, accs, pc: str, row_bytes: int) -> None:
    """Narrow the four 4x4 fp32 blocks accs = (q0, q1, q2, q3) (lane 4i+j = C[i][4j+q]) to bf16
    and store rows 0..3 of the 4x16 C block at pc (row stride row_bytes). Uses x0..x5."""
    q0, q1, q2, q3 = accs
    a(f"vconv.bf16.fp32 wl0, {q0}")
    a(f"vconv.bf16.fp32 wh0, {q2}")
    a(f"vconv.bf16.fp32 wl1, {q1}")
    a(f"vconv.bf16.fp32 wh1, {q3}")
    a("vshuffle x2, x0, x1, r14")
    a("vshuffle x3, x0, x1, r15")
    a("vshuffle x4, x2, x3, r12")
    a("vshuffle x5, x2, x3, r13")
    a(f"mov p7, {pc}")
    a(f"movxm m7, #{row_bytes}")
    a("vst wl4, [p7], m7")
    a("vst wh4, [p7], m7")
    a("vst wl5, [p7], m7")
    a("vst wh5, [p7], m7")


def a_tiles(a: Asm, pa: str, k_bytes: int, even: str, odd: str) -> None:
    """Even-k and odd-k A tiles of rows 0..3 (row stride k_bytes) at pa, k0..k0+15, into x[even], x[odd].
    Uses x0, x1 and p6, m6."""
    a(f"mov p6, {pa}")
    a(f"movxm m6, #{k_bytes}")
    a("vlda wl0, [p6], m6")
    a("vlda wh0, [p6], m6")
    a("vlda wl1, [p6], m6")
    a("vlda wh1, [p6], m6")
    a(f"vshuffle {even}, x0, x1, r10")
    a(f"vshuffle {odd}, x0, x1, r11")


def b_tiles(a: Asm, pb: str, two_rows: int, dst=("x4", "x5", "x6", "x7")) -> None:
    """Four B tiles (q = 0..3) from 8 rows pb, pb + two_rows, ... (16 columns each) into dst.
    Uses x4..x11 and p5."""
    a(f"mov p5, {pb}")
    a(f"movxm m5, #{two_rows}")
    a("vlda wl4, [p5], m5")
    a("vlda wh4, [p5], m5")
    a("vlda wl5, [p5], m5")
    a("vlda wh5, [p5], m5")
    a("vlda wl6, [p5], m5")
    a("vlda wh6, [p5], m5")
    a("vlda wl7, [p5], m5")
    a("vlda wh7, [p5], m5")
    a("vshuffle x8, x4, x5, r10")
    a("vshuffle x9, x4, x5, r11")
    a("vshuffle x10, x6, x7, r10")
    a("vshuffle x11, x6, x7, r11")
    q0, q1, q2, q3 = dst
    a(f"vshuffle {q0}, x8, x10, r10")
    a(f"vshuffle {q2}, x8, x10, r11")
    a(f"vshuffle {q1}, x9, x11, r10")
    a(f"vshuffle {q3}, x9, x11, r11")


def gen_matmul(a: Asm, pa_addr: int, pb_addr: int, pc_addr: int, M: int, K: int, N: int) -> None:
    """C[M, N] = A[M, K] @ B[K, N], all row-major bf16; M % 4 == 0, K % 16 == 0, N % 16 == 0.
    Loops: 4-row blocks of C, 16-column blocks, 16-deep k steps (8 MACs each)."""
    assert M % 4 == 0 and K % 16 == 0 and N % 16 == 0, (M, K, N)
    a(f"movxm p0, #{pa_addr}")  # A row block
    a(f"movxm p2, #{pc_addr}")  # C row block
    with a.loop("r0", M // 4):
        a(f"movxm p1, #{pb_addr}")  # B column block
        a("mov p3, p2")             # C block
        with a.loop("r1", N // 16):
            a("vclr cm0")
            a("vclr cm1")
            a("mov p4, p0")  # A at (m0, k0)
            a("mov p7, p1")  # B at (k0, n0)
            with a.loop("r2", K // 16):
                a_tiles(a, "p4", 2 * K, "x2", "x3")
                for par, xa in ((0, "x2"), (1, "x3")):
                    a("mov p5, p7")
                    if par:
                        a(f"movxm m5, #{2 * N}")
                        a("padda [p5], m5")
                    b_tiles(a, "p5", 4 * N)
                    a(f"vmac.f bml0, bml0, {xa}, x4, r9")
                    a(f"vmac.f bmh0, bmh0, {xa}, x5, r9")
                    a(f"vmac.f bml1, bml1, {xa}, x6, r9")
                    a(f"vmac.f bmh1, bmh1, {xa}, x7, r9")
                a("padda [p4], #32")
                a(f"movxm m4, #{32 * N}")
                a("padda [p7], m4")
            out_block(a, ("bml0", "bmh0", "bml1", "bmh1"), "p3", 2 * N)
            a("padda [p1], #32")
            a("padda [p3], #32")
        a(f"movxm m0, #{8 * K}")
        a("padda [p0], m0")
        a(f"movxm m0, #{8 * N}")
        a("padda [p2], m0")


def gen_gemm(a: Asm, cfg, layout) -> None:
    a.comment("gemm: c = a @ b (bf16 in, fp32 accumulation, bf16 out)")
    setup_modes(a)
    gen_matmul(a, addr(layout, "a"), addr(layout, "b"), addr(layout, "c"), cfg["M"], cfg["K"], cfg["N"])


def gen_batch_matmul(a: Asm, cfg, layout) -> None:
    B, M, K, N = cfg["B"], cfg["M"], cfg["K"], cfg["N"]
    a.comment("batch_matmul: one gemm per batch")
    setup_modes(a)
    for b in range(B):
        gen_matmul(a, addr(layout, "a") + b * M * K * 2, addr(layout, "b") + b * K * N * 2,
                   addr(layout, "c") + b * M * N * 2, M, K, N)


def t_tiles(a: Asm, pw: str, stride4: int, even: str, odd: str) -> None:
    """Transposed tiles from rows pw, pw + stride4, pw + 2*stride4, pw + 3*stride4 (16 k each) of a
    row-major [N, K] operand: x[even] lane 4r+j = row j at k0+2r, x[odd] the same at k0+2r+1.
    Uses x6..x9, p6, m6."""
    a(f"mov p6, {pw}")
    a(f"movxm m6, #{stride4}")
    a("vlda wl6, [p6], m6")
    a("vlda wh6, [p6], m6")
    a("vlda wl7, [p6], m6")
    a("vlda wh7, [p6], m6")
    a("vshuffle x8, x6, x7, r12")
    a("vshuffle x9, x6, x7, r13")
    a("vshuffle x6, x8, x9, r14")
    a("vshuffle x7, x8, x9, r15")
    a(f"vshuffle {even}, x6, x7, r24")
    a(f"vshuffle {odd}, x6, x7, r25")


def gen_linear(a: Asm, cfg, layout) -> None:
    M, K, N = cfg["M"], cfg["K"], cfg["N"]
    assert M % 4 == 0 and K % 16 == 0 and N % 16 == 0
    a.comment("linear: y = x @ w.T + bias; accumulators start from the bias (a MAC with a one-hot A)")
    a.table("ones_col0", [0x3F80 if lane % 8 == 0 else 0 for lane in range(32)])
    setup_modes(a)
    a("movxm p0, #%d" % addr(layout, "x"))
    a("movxm p2, #%d" % addr(layout, "y"))
    with a.loop("r0", M // 4):
        a("movxm p1, #%d" % addr(layout, "w"))
        a("movxm p3, #%d" % addr(layout, "bias"))
        a("mov r5, p2")
        with a.loop("r1", N // 16):
            # bias tiles: row 0 of tile q holds bias[n0 + 4j + q]
            a("vsub.16 x5, x5, x5")
            a("vsub.16 x6, x6, x6")
            a("vsub.16 x7, x7, x7")
            a("vsub.16 x4, x4, x4")
            a("vlda wl4, [p3], #32")
            a("vshuffle x8, x4, x5, r10")
            a("vshuffle x9, x4, x5, r11")
            a("vshuffle x10, x6, x7, r10")
            a("vshuffle x11, x6, x7, r11")
            a("vshuffle x4, x8, x10, r10")
            a("vshuffle x6, x8, x10, r11")
            a("vshuffle x5, x9, x11, r10")
            a("vshuffle x7, x9, x11, r11")
            a("movxm p5, #ones_col0")
            a("vlda wl3, [p5, #0]")
            a("vlda wh3, [p5, #32]")
            a("vmul.f bml0, x3, x4, r9")
            a("vmul.f bmh0, x3, x5, r9")
            a("vmul.f bml1, x3, x6, r9")
            a("vmul.f bmh1, x3, x7, r9")
            accs = ("bml0", "bmh0", "bml1", "bmh1")
            a("mov p7, p0")  # x at (m0, k0)
            a("mov p5, p1")  # w at (n0, k0)
            with a.loop("r2", K // 16):
                a_tiles(a, "p7", 2 * K, "x2", "x3")
                for q in range(4):
                    a("mov p4, p5")
                    if q:
                        a(f"movxm m4, #{q * 2 * K}")
                        a("padda [p4], m4")
                    t_tiles(a, "p4", 8 * K, "x10", "x11")
                    a(f"vmac.f {accs[q]}, {accs[q]}, x2, x10, r9")
                    a(f"vmac.f {accs[q]}, {accs[q]}, x3, x11, r9")
                a("padda [p7], #32")
                a("padda [p5], #32")
            a("mov p4, r5")
            out_block(a, accs, "p4", 2 * N)
            a("movxm r6, #32")
            a("add r5, r5, r6")
            a(f"movxm m4, #{32 * K}")
            a("padda [p1], m4")
        a(f"movxm m0, #{8 * K}")
        a("padda [p0], m0")
        a(f"movxm m0, #{8 * N}")
        a("padda [p2], m0")


def gen_gemv(a: Asm, cfg, layout) -> None:
    M, K = cfg["M"], cfg["K"]
    assert M % 16 == 0 and K % 16 == 0
    a.comment("gemv: y = a @ x; x as a transposed tile (all four columns = x), 16 rows of y per block")
    setup_modes(a)
    a("movxm p0, #%d" % addr(layout, "a"))
    a("movxm p2, #%d" % addr(layout, "y"))
    accs = ("bml0", "bmh0", "bml1", "bmh1")
    with a.loop("r0", M // 16):
        a("vclr cm0")
        a("vclr cm1")
        a("movxm p1, #%d" % addr(layout, "x"))
        a("mov p3, p0")
        with a.loop("r1", K // 16):
            t_tiles(a, "p1", 0, "x10", "x11")
            a("mov p4, p3")
            for q in range(4):
                a_tiles(a, "p4", 2 * K, "x2", "x3")
                a(f"vmac.f {accs[q]}, {accs[q]}, x2, x10, r9")
                a(f"vmac.f {accs[q]}, {accs[q]}, x3, x11, r9")
                a(f"movxm m4, #{8 * K}")
                a("padda [p4], m4")
            a("padda [p1], #32")
            a("padda [p3], #32")
        a("vconv.bf16.fp32 wl0, bml0")
        a("vconv.bf16.fp32 wh0, bmh0")
        a("vconv.bf16.fp32 wl1, bml1")
        a("vconv.bf16.fp32 wh1, bmh1")
        a("vshuffle x2, x0, x1, r10")
        a("vshuffle x3, x2, x2, r10")
        a("vst wl3, [p2], #32")
        a(f"movxm m0, #{32 * K}")
        a("padda [p0], m0")


# ---- generator ----------------------------------------------------------------------------------------
GENERATORS = {
    "relu": gen_relu,
    "silu": gen_unary_pwl("silu"),
    "gelu": gen_unary_pwl("gelu"),
    "softmax": gen_softmax,
    "rms_norm": gen_norm(False),
    "layer_norm": gen_norm(True),
    "gemm": gen_gemm,
    "batch_matmul": gen_batch_matmul,
    "linear": gen_linear,
    "gemv": gen_gemv,
}


# generators that take (task, cfg, layout, spec) and return the program text
TEXT_GENERATORS = {
    "depthwise_conv": gen_conv_i8(True),
    "conv2d": gen_conv_i8(False),
}


def generate_raw(task, cfg, layout, spec):
    """The kernel's text without the callee-saved registers' prologue and epilogue."""
    if task.name in TEXT_GENERATORS:
        return TEXT_GENERATORS[task.name](task, cfg, layout, spec)
    gen = GENERATORS.get(task.name)
    if gen is None:
        return None
    a = Asm()
    gen(a, cfg, layout)
    return a.text()


PROGRAM_END = 0x4000  # the ABI's program region, PM_BYTES (deviation 3 of targets/amdnpu.isa): the image must end here


def packed(text: str, spec) -> str:
    """`text` as a compiler would emit it: packed into bundles and its counted inner loops
    software-pipelined by kcgen.schedule (from the ISA's slots, formats and latencies only); without
    pipelining when the prologues and epilogues would outgrow the program region."""
    from isadl import IsaError
    from kcgen.schedule import ScheduleError, machine, schedule
    from kcgen.sim.hazards import stale_reads
    for pipeline in (True, False):
        try:
            out = schedule(spec, text, pipeline=pipeline)
            program = machine(spec).asm.assemble(out)
        except (ScheduleError, IsaError):
            continue
        if max(s.end for s in program.sections.values()) > PROGRAM_END:
            continue
        # kcgen.schedule never reads a value before its producer's latency; should the assembler's
        # exposed-pipeline check find such a read, the schedule is not used (the template waits where it must)
        if stale_reads(spec, program, "kernel.s", out, limit=1):
            continue
        return out
    return text  # (the template as written: tests/test_schedule.py checks that the baselines are packed)


def scheduled(unscheduled):
    """generate() from a generator of one-operation-per-line text (the template as written, which
    the reference generators reschedule themselves): its text through `packed`."""
    def generate(task, cfg, layout, spec, **kw):
        text = unscheduled(task, cfg, layout, spec, **kw)
        return None if text is None else packed(text, spec)
    return generate


def unscheduled(task, cfg, layout, spec):
    text = generate_raw(task, cfg, layout, spec)
    return None if text is None else wait_for_results(preserve(text), spec)


generate = scheduled(unscheduled)
