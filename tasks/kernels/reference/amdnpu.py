"""Reference (expert) kernels for amdnpu: the baseline's algorithms (tasks/kernels/baseline/amdnpu.py)
restructured for the VLIW core, then packed into full bundles.

What changes against the baseline:

* Every basic block goes through a list scheduler (`schedule`) that packs the operations into
  bundles: loads on both load units (vlda becomes vldb when unit A is taken), MACs, moves/shuffles,
  stores and scalar work in the same bundle, each operation as early as its operands' latencies
  (targets/amdnpu.isa's, forwarding paths included) and the slots allow. The scheduler keeps every register
  dependence (read after write, write after read, write after write, in strictly later bundles),
  the order of stores against loads and other stores (unless both carry memory tags, `// @array`
  or `// @array:lo:hi`, that prove them disjoint), and the accumulator forwarding of MAC chains.
* Loops are unrolled with renamed registers so that iterations overlap (software pipelining by
  unroll-and-schedule): element-wise kernels load each knot vector and coefficient tile once for
  four 16-element blocks (rotating over three register pairs), matrix kernels reuse operand tiles
  across a register block of 16 accumulators, the row passes of softmax and the norms are
  unrolled over the row.
* gemm, batch_matmul and linear copy their B / w operand, a panel at a time, into MAC tiles in the
  scratch region (the last k steps in the program's .data when it is too small), the work a DMA
  would do on the real tile, so that the main loop needs no shuffles for it; gemv keeps the tiles of
  x in the scratch region. Inputs are only read.
* Numerics are the baseline's (the same piecewise-linear transcendental functions, the same
  fp32 accumulation), so the reference is exactly as accurate.
* conv2d and depthwise_conv are int8 (exact 32-bit sums, one shift-round-saturate): see
  ref_conv2d_i8 (channel-interleaved chunks, every MAC lane useful) and ref_depthwise_i8 (the
  baseline's band matrices, software-pipelined).
"""
from __future__ import annotations

import re
from pathlib import Path

from kcgen.paths import load_module

B = load_module(Path(__file__).resolve().parent.parent / "baseline" / "amdnpu.py")
Asm = B.Asm
addr = B.addr

# ---- the list scheduler -------------------------------------------------------------------------------
_SLOT = {
    "vlda": "lda", "vldb": "ldb", "vst": "st", "vconv.bf16.fp32": "st", "vconv.fp32.bf16": "mv",
    "vshuffle": "mv", "vmax_lt.bf16": "mv", "vmin_ge.bf16": "mv", "vsel.16": "mv", "vadd.16": "mv",
    "vsub.16": "mv", "vmax_lt.s16": "mv", "vmin_ge.s16": "mv",
    "vmac.f": "vec", "vmul.f": "vec", "vmsc.f": "vec", "vclr": "vec",
    "vmac": "vec", "vmul": "vec", "vsrs.s8.s32": "st", "vst.srs.s8.s32": "st", "vsub.8": "mv",
    "lda.u8": "lda", "st.s8": "lda",
    "padda": "lda", "padds": "st", "paddb": "ldb", "movxm": "lng", "movx": "alu", "mova": "lda",
    "mov": "mv", "lda": "lda", "lda.u16": "lda", "lda.s16": "lda", "st": "st", "st.s16": "lda",
    "add": "alu", "sub": "alu", "and": "alu", "or": "alu", "xor": "alu", "lshl": "alu", "ashl": "alu",
    "mul": "alu", "ne": "alu", "ge": "alu", "lt": "alu",
}
_LOADS = {"vlda", "vldb", "lda", "lda.u16", "lda.s16", "lda.u8"}
_STORES = {"vst", "st", "st.s16", "st.s8", "vst.srs.s8.s32"}
_MACS = {"vmac.f", "vmul.f", "vmsc.f", "vmac", "vmul"}
_REG = re.compile(r"\b(r\d+|p\d|m\d|s\d|wl\d+|wh\d+|x\d+|bml\d|bmh\d|cm\d)\b")


def _units(reg: str) -> list[str]:
    if reg.startswith("x"):
        return ["wl" + reg[1:], "wh" + reg[1:]]
    if reg.startswith("cm"):
        return ["bml" + reg[2:], "bmh" + reg[2:]]
    return [reg]


def _split_operands(text: str) -> list[str]:
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


class _Op:
    def __init__(self, text: str):
        # an optional memory tag "// @array" or "// @array:lo:hi" (byte range relative to a base the
        # generator keeps fixed in the block): tagged accesses to different arrays or disjoint ranges
        # may be reordered; untagged ones keep their order against every other access
        text, _, tag = text.partition("//")
        self.mem = None
        tag = tag.strip()
        if tag.startswith("@"):
            parts = tag[1:].split(":")
            self.mem = (parts[0], int(parts[1]), int(parts[2])) if len(parts) == 3 else (parts[0], None, None)
        self.text = text.strip()
        mn, _, rest = self.text.partition(" ")
        self.mn = mn
        self.slot = _SLOT[mn]
        ops = _split_operands(rest)
        reads, writes = set(), set()
        postmod = False
        for o in ops:
            if o.startswith("["):
                reads |= set(_REG.findall(o))
        # post-modify: "[p], #imm" or "[p], m" (a bracket holding only the pointer, followed by more)
        for i, o in enumerate(ops):
            if o.startswith("[") and "," not in o and i + 1 < len(ops):
                postmod = True
                writes |= set(_REG.findall(o))
                reads |= set(_REG.findall(ops[i + 1]))
        if mn in _STORES or mn in ("padda", "padds", "paddb"):
            for o in ops:
                reads |= set(_REG.findall(o))
            if mn.startswith("padd"):
                writes |= set(_REG.findall(ops[0]))
        else:
            if ops:
                writes |= set(_REG.findall(ops[0]))
            for o in ops[1:]:
                reads |= set(_REG.findall(o))
            if mn in ("vmax_lt.bf16", "vmin_ge.bf16", "vmax_lt.s16", "vmin_ge.s16"):
                writes |= set(_REG.findall(ops[1]))
                reads -= set(_REG.findall(ops[1]))
        self.reads = {u for r in reads for u in _units(r)}
        self.writes = {u for r in writes for u in _units(r)}
        self.acc_in = set()
        if mn in _MACS and mn not in ("vmul.f", "vmul") and len(ops) > 1:
            self.acc_in = set(_units(ops[1]))
        self.postmod_ptrs = set()
        if postmod:
            for o in ops:
                if o.startswith("[") and "," not in o:
                    self.postmod_ptrs |= set(_REG.findall(o))
        self.load = mn in _LOADS
        self.store = mn in _STORES
        self.latency, self.bypass = _timing().get(mn, (1, None))

    def lat_to(self, reg: str, consumer: "_Op") -> int:
        if reg in self.postmod_ptrs:
            return 1
        if self.bypass is not None and self.bypass == consumer.bypass:  # a forwarding path (bypass NAME N)
            return max(1, self.latency - self.bypass[1])
        return self.latency


_TIMING: dict = {}


def _timing() -> dict:
    """mnemonic -> (result latency, forwarding path (name, cycles saved) or None), from targets/amdnpu.isa
    (the longest latency of the instructions a mnemonic names; their path when they all share one)."""
    if not _TIMING:
        import isadl
        spec = isadl.load("amdnpu")
        for s in spec.instructions.values():
            lat = s.insn.latency if s.insn.latency is not None else s.insn.cycles
            lat = int(spec.params_eval(lat)) if lat is not None else 1
            path = (s.insn.bypass, s.insn.bypass_cycles) if s.insn.bypass else None
            old = _TIMING.get(s.template.mnemonic)
            _TIMING[s.template.mnemonic] = (lat, path) if old is None else (max(old[0], lat),
                                                                              path if old[1] == path else None)
    return _TIMING


def _vldb_ok(op: _Op) -> bool:
    if op.mn != "vlda":
        return False
    m = re.search(r"\[(p\d)(?:, #(-?\d+))?\](?:, #(-?\d+))?", op.text)
    if not m:
        return False
    if m.group(2) is not None:
        return -128 <= int(m.group(2)) <= 96
    if m.group(3) is not None:
        return -256 <= int(m.group(3)) <= 224
    return True


def tag(array: str, lo: int, size: int = 32) -> str:
    """The memory tag of a vector access (see _Op)."""
    return f" // @{array}:{lo}:{lo + size}"


def _conflict(a: _Op, b: _Op) -> bool:
    if a.mem is None or b.mem is None:
        return True
    if a.mem[0] != b.mem[0]:
        return False
    if a.mem[1] is None or b.mem[1] is None:
        return True
    return a.mem[1] < b.mem[2] and b.mem[1] < a.mem[2]


def _schedule_block(ops: list[_Op]) -> list[list[_Op]]:
    bundles: list[dict[str, _Op]] = []
    last_writer: dict[str, tuple[int, _Op]] = {}  # register unit -> (bundle of its last writer, the op)
    last_read: dict[str, int] = {}
    stores: list[tuple[int, _Op]] = []
    accesses: list[tuple[int, _Op]] = []
    for op in ops:
        earliest = 0
        for r in op.reads | op.acc_in:
            if r in last_writer:
                b, w = last_writer[r]
                earliest = max(earliest, b + w.lat_to(r, op))
        for r in op.writes:
            if r in last_read:
                earliest = max(earliest, last_read[r] + 1)
            if r in last_writer:
                earliest = max(earliest, last_writer[r][0] + 1)
        if op.load:
            earliest = max([earliest] + [b + 1 for b, o in stores if _conflict(o, op)])
        if op.store:
            earliest = max([earliest] + [b + 1 for b, o in accesses if _conflict(o, op)])
        b = earliest
        while True:
            while b >= len(bundles):
                bundles.append({})
            slots = bundles[b]
            want = op.slot
            if want == "lng":
                ok = not ({"lng", "alu", "mv"} & slots.keys())
            elif want in ("alu", "mv"):
                ok = want not in slots and "lng" not in slots
            else:
                ok = want not in slots
            if not ok and want == "lda" and _vldb_ok(op) and "ldb" not in slots:
                op.text = "vldb" + op.text[4:]
                op.mn = "vldb"
                op.slot = want = "ldb"
                ok = True
            if ok:
                slots[want] = op
                break
            b += 1
        for r in op.writes:
            last_writer[r] = (b, op)
        for r in op.reads | op.acc_in:
            last_read[r] = max(last_read.get(r, -1), b)
        if op.store:
            stores.append((b, op))
        if op.load or op.store:
            accesses.append((b, op))
    return [list(s.values()) for s in bundles if s]


_TOP = [False]  # generate() is making a whole kernel (not a sub-kernel of a Level-2/3 reference)


def schedule(text: str, preserve: bool | None = None) -> str:
    """Pack a straight-line-per-block program (one operation per line, as the baseline emits)
    into bundles; labels, jumps, `done` and directives end blocks and stay in place. preserve (default:
    when generate() makes a whole kernel): first give the kernel the callee-saved registers' prologue
    and epilogue (B.preserve), whose copies the scheduler packs into the first and last bundles."""
    if preserve or (preserve is None and _TOP[0]):
        text = B.preserve(text, pack=False)
    out, block = [], []

    def flush():
        if block:
            for bundle in _schedule_block(block):
                out.append("    " + " ; ".join(o.text for o in bundle))
            block.clear()

    section = ".text"
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("."):
            flush()
            section = s.split()[0] if s.split()[0] in (".text", ".data") else section
            out.append(line)
            continue
        if section != ".text" or not s or s.startswith("//") or s.endswith(":") or ";" in s.partition("//")[0] \
                or s.endswith(B.DS_TAG):  # a jump's delay slots stay where they are
            flush()
            out.append(line)
            continue
        mn = s.split()[0]
        if mn in ("jnz", "jz", "j", "jnzd", "done") or mn not in _SLOT:
            # the loop-closing `add rN, rN, #-1` may share the jump's block end: keep jumps alone
            flush()
            out.append(line)
            continue
        block.append(_Op(s))
    flush()
    return B.delay_slots("\n".join(out) + "\n")


# ---- per-task reference generators -------------------------------------------------------------------
def gen_scheduled(name):
    """The baseline template, packed: the baseline itself (kcgen.schedule's packing, which waits for
    every latency) where it is packed, else this module's scheduler (latencies within a block; reads
    across a label that come early get nops from generate()). A reference is never slower than its
    baseline."""
    def gen(task, cfg, layout, spec):
        text = B.generate_raw(task, cfg, layout, spec)
        return None if text is None else packed_or_scheduled(B.preserve(text), lambda: schedule(text), spec)
    return gen


def packed_or_scheduled(template: str, own, spec) -> str:
    """B.packed(template) when it packs (fits the program region), else own()."""
    out = B.packed(template, spec)
    return out if out != template else own()


def ref_relu(task, cfg, layout, spec):
    n = cfg["N"]
    a = Asm()
    a.comment(f"relu: y = max(x, 0), {n} bf16 elements; 128 per iteration on both load units")
    a("movxm p0, #%d" % addr(layout, "x"))
    a("movxm p1, #%d" % addr(layout, "y"))
    a("vsub.16 x11, x11, x11")
    per = 128 if n % 128 == 0 else 32
    with a.loop("r1", n // per):
        for g in range(per // 32):
            a(f"vlda wl{g}, [p0], #32")
            a(f"vlda wh{g}, [p0], #32")
        for g in range(per // 32):
            a(f"vmax_lt.bf16 x{4 + g}, r16, x{g}, x11")
        for g in range(per // 32):
            a(f"vst wl{4 + g}, [p1], #32")
            a(f"vst wh{4 + g}, [p1], #32")
    return schedule(a.text())


def hinge_group(a: Asm, ops, accs) -> None:
    """accs[g] = f(block g) for the 16-element blocks in x0..x3 (both halves): each pair's knot
    vector and coefficient tile loaded once (p5 / p6 walk the table, rotating over x4..x9) and
    applied to the four blocks (hinges in x10, x11); ops: the table's pairs (B.pwl_table)."""
    for p, op in enumerate(ops):
        t, c = 4 + 2 * (p % 3), 5 + 2 * (p % 3)
        a(f"vlda wl{t}, [p5], #32 // @tab")
        a(f"vlda wh{t}, [p5], #96 // @tab")
        a(f"vlda wl{c}, [p6], #32 // @tab")
        a(f"vlda wh{c}, [p6], #96 // @tab")
        for g in range(4):
            h = 10 + g % 2
            a(f"{B.HINGE_OP[op]} x{h}, r16, x{g}, x{t}")
            if p == 0:
                a(f"vmul.f {accs[g]}, x{c}, x{h}, r9")
            else:
                a(f"vmac.f {accs[g]}, {accs[g]}, x{c}, x{h}, r9")


def ref_unary_pwl(fn):
    """Four 16-element blocks per iteration share each pair's knot vector and coefficient tile
    (loaded once into alternating registers), so the MAC unit runs back to back."""
    def gen(task, cfg, layout, spec):
        n = cfg["N"]
        assert n % 64 == 0
        a = Asm()
        a.comment(B.pwl_doc(fn))
        pairs = B.pwl_table(a, fn, "pwl_" + fn)
        accs = ("bml0", "bmh0", "bml1", "bmh1")
        a("movxm r9, #0")
        a("movxm r22, #64")
        a("movxm p0, #%d" % addr(layout, "x"))
        a("movxm p1, #%d" % addr(layout, "y"))
        a("movxm r20, #pwl_" + fn)
        a("movxm r21, #pwl_" + fn)
        a("add r21, r21, r22")
        with a.loop("r1", n // 64):
            for g in range(4):
                a(f"vlda wl{g}, [p0, #{32 * g}] // @x")
                a(f"vlda wh{g}, [p0, #{32 * g}] // @x")
            a("padda [p0], #128")
            a("mov p5, r20")
            a("mov p6, r21")
            hinge_group(a, pairs, accs)
            for g in range(4):
                a(f"vconv.bf16.fp32 wl{g}, {accs[g]}")
                a(f"vst wl{g}, [p1], #32 // @y")
        return schedule(a.text())
    return gen


def ref_matmul(a: Asm, pa_addr: int, pb_addr: int, pc_addr: int, M: int, K: int, N: int, buf, NB: int) -> None:
    """C = A @ B, in panels of 16 NB columns of B (NB = 1 or 2): first the panel is copied into MAC
    tiles at `buf` (an address or a .data label; K * 32 NB bytes, row stride 32 NB bytes: per 16 k x 16 n
    block and k parity, tile q at the rows k0+p+4q and k0+p+4q+2 it was built from), the work a DMA
    would do on the real tile, then 8 x 16 NB blocks of C down the panel with 16 accumulators, the k
    loop unrolled, A tiles built once per k step for both 4-row halves and both column blocks, each B
    tile feeding two MACs; two pointer chains per column block keep both load units busy. B is only
    read (the inputs must be left as they are)."""
    assert M % 8 == 0 and K % 16 == 0 and N % (16 * NB) == 0, (M, K, N, NB)
    Np = 16 * NB  # the panel's width (elements)
    accs = {(nb, g): (f"bml{4 * nb + 2 * g}", f"bmh{4 * nb + 2 * g}", f"bml{4 * nb + 2 * g + 1}",
                      f"bmh{4 * nb + 2 * g + 1}") for nb in range(NB) for g in range(2)}
    bregs = (6, 7, 8, 9, 10, 11)
    bptr = [("p5", "p6"), ("p1", "p7")]  # (even rows, odd rows) per column block
    a(f"movxm r22, #{pb_addr}")  # the panel's first column in B
    a(f"movxm r23, #{pc_addr}")  # and in C
    regions = [(buf, K // 16)] if not isinstance(buf, list) else buf  # [(address or label, k steps)]
    assert sum(n for _, n in regions) == K // 16
    start = {}  # k step -> the region that starts there
    step0 = 0
    for where, n in regions:
        start[step0] = where
        step0 += n
    with a.loop("r1", N // Np):
        # 1. the panel's tiles
        a("mov p1, r22")
        a(f"movxm m0, #{4 * N}")
        a(f"movxm m2, #{4 * Np}")
        for where, n in regions:
            a(f"movxm p2, #{where}")
            with a.loop("r0", n):
                for nb in range(NB):
                    for par in range(2):
                        a("mov p5, p1")
                        a("mov p6, p2")
                        if 2 * N * par + 32 * nb:
                            a(f"padda [p5], #{2 * N * par + 32 * nb}")
                        if 2 * Np * par + 32 * nb:
                            a(f"padda [p6], #{2 * Np * par + 32 * nb}")
                        for i in range(4):
                            a(f"vlda wl{4 + i}, [p5], m0")
                            a(f"vlda wh{4 + i}, [p5], m0")
                        a("vshuffle x8, x4, x5, r10")
                        a("vshuffle x9, x4, x5, r11")
                        a("vshuffle x10, x6, x7, r10")
                        a("vshuffle x11, x6, x7, r11")
                        a("vshuffle x4, x8, x10, r10")
                        a("vshuffle x5, x9, x11, r10")
                        a("vshuffle x6, x8, x10, r11")
                        a("vshuffle x7, x9, x11, r11")
                        for i in range(4):
                            a(f"vst wl{4 + i}, [p6], m2")
                            a(f"vst wh{4 + i}, [p6], m2")
                a(f"movxm m1, #{32 * N}")
                a("padda [p1], m1")
                a(f"movxm m1, #{32 * Np}")
                a("padda [p2], m1")
        # 2. 8 x Np blocks of C down the panel: both 4-row halves share each A tile, the NB column
        # blocks share them too
        a(f"movxm r20, #{pa_addr}")
        a("mov r21, r23")
        a(f"movxm m0, #{4 * Np}")
        with a.loop("r0", M // 8):
            for c in range(4 * NB):
                a(f"vclr cm{c}")
            a("mov p3, r20")            # A rows 0..3
            a("mov p4, r20")
            a(f"movxm m3, #{8 * K}")
            a("padda [p4], m3")         # A rows 4..7
            breg = 0
            for step in range(K // 16):
                for nb in range(NB * (step in start)):  # B pointers at the start of each region
                    ev, od = bptr[nb]
                    a(f"movxm {ev}, #{start[step]}")
                    a(f"movxm {od}, #{start[step]}")
                    a(f"padda [{od}], #{2 * Np + 32 * nb}")
                    if nb:
                        a(f"padda [{ev}], #{32 * nb}")
                for g, pa in enumerate(("p3", "p4")):
                    for r in range(4):
                        a(f"vlda {'wl' if r % 2 == 0 else 'wh'}{4 + r // 2}, [{pa}, #{r * 2 * K}]")
                    a(f"vshuffle x{2 * g}, x4, x5, r10")
                    a(f"vshuffle x{2 * g + 1}, x4, x5, r11")
                    a(f"padds [{pa}], #32")
                for nb in range(NB):
                    for row in range(16):
                        par, q, h = row % 2, row // 4, (row // 2) % 2
                        reg = bregs[(breg + 2 * q + par) % len(bregs)]
                        a(f"vlda {'wh' if h else 'wl'}{reg}, [{bptr[nb][par]}], m0")
                        if h:
                            for g in range(2):
                                acc = accs[(nb, g)][q]
                                a(f"vmac.f {acc}, {acc}, x{2 * g + par}, x{reg}, r9")
                    breg += 8
            for nb in range(NB):
                for g in range(2):
                    a("mov r29, r21")
                    off = g * 8 * N + 32 * nb
                    if off:
                        a(f"movxm r28, #{off}")
                        a("add r29, r29, r28")
                    a("mov p2, r29")
                    B.out_block(a, accs[(nb, g)], "p2", 2 * N)
            a(f"movxm r28, #{16 * K}")
            a("add r20, r20, r28")
            a(f"movxm r28, #{16 * N}")
            a("add r21, r21, r28")
        a(f"movxm r28, #{2 * Np}")
        a("add r22, r22, r28")
        a("add r23, r23, r28")


TMP_FREE = B.SAVE_AREA - B.SCRATCH  # the scratch region's bytes a kernel may use (the rest: spill slots)
IMAGE_END = B.PROGRAM_END  # the ABI's program image area: .text and .data


def image_bytes(text: str, spec) -> int:
    from kcgen.evaluation import _assembler
    program = _assembler(spec).assemble(text)
    return max(s.end for s in program.sections.values())


def panel_gen(build, K: int, N: int, layout, spec) -> str:
    """A matrix kernel build(a, buf, NB) -> None around ref_matmul's panels of B (K x 16 NB: K * 32 NB
    bytes, 512 NB per 16 k): in the caller's buffer (a Level-2/3 kernel passes one as the placement
    `buf`), else in the scratch region, the k steps that do not fit it in the program's .data (while
    the image stays within its area); NB = 2 (two column blocks share each A tile) where possible."""
    NB = 2 if N % 32 == 0 else 1
    if "buf" in layout.placements:
        a = Asm()
        build(a, addr(layout, "buf"), NB)
        return schedule(a.text())
    for nb in range(NB, 0, -1):
        steps, fit = K // 16, TMP_FREE // (512 * nb)
        a = Asm()
        if steps <= fit:
            build(a, B.SCRATCH, nb)
            return schedule(a.text())
        if spec is None:
            continue
        a.table("b_panel", [0] * ((steps - fit) * 256 * nb))
        build(a, [(B.SCRATCH, fit), ("b_panel", steps - fit)] if fit else "b_panel", nb)
        text = schedule(a.text())
        if image_bytes(text, spec) <= IMAGE_END:
            return text
    raise ValueError(f"no room for a {K} x 16 panel of tiles")


def ref_gemm(task, cfg, layout, spec):
    M, K, N = cfg["M"], cfg["K"], cfg["N"]

    def build(a, buf, NB):
        a.comment("gemm reference: panels of B copied into MAC tiles, then 8 x 16 NB register blocks")
        B.setup_modes(a)
        ref_matmul(a, addr(layout, "a"), addr(layout, "b"), addr(layout, "c"), M, K, N, buf, NB)
    return panel_gen(build, K, N, layout, spec)


def ref_batch_matmul(task, cfg, layout, spec):
    Bn, M, K, N = cfg["B"], cfg["M"], cfg["K"], cfg["N"]

    def build(a, buf, NB):
        a.comment("batch_matmul reference: the gemm reference per batch")
        B.setup_modes(a)
        for b in range(Bn):
            ref_matmul(a, addr(layout, "a") + b * M * K * 2, addr(layout, "b") + b * K * N * 2,
                       addr(layout, "c") + b * M * N * 2, M, K, N, buf, NB)
    return panel_gen(build, K, N, layout, spec)


def ref_softmax(task, cfg, layout, spec):
    """The baseline's algorithm; the exp pass handles 4 blocks of 16 per knot-table load (as silu),
    the max and scale passes are unrolled with rotating registers."""
    M, N = cfg["M"], cfg["N"]
    assert N % 64 == 0
    a = Asm()
    a.comment("softmax reference: max, d = x - max (fp32 MAC), e = exp(d), s = sum e, y = e / s")
    a.comment(B.pwl_doc("exp"))
    B.setup_modes(a)
    B.common_tables(a)
    pairs = B.pwl_table(a, "exp", "pwl_exp")
    a.table("t_sub", B.tile_words({**{8 * i + i: 1.0 for i in range(4)}, **{8 * i + i + 4: -1.0 for i in range(4)}}))
    accs = ("bml0", "bmh0", "bml1", "bmh1")
    daccs = ("bml2", "bmh2", "bml3", "bmh3")
    a("movxm r22, #64")
    a("movxm r20, #pwl_exp")
    a("movxm r21, #pwl_exp")
    a("add r21, r21, r22")
    a("movxm p0, #%d" % addr(layout, "x"))
    a("movxm p1, #%d" % addr(layout, "y"))
    with a.loop("r0", M):
        # max: both load units, a tree of vmax
        for i in range(N // 32):
            r = i if i < 8 else 8 + i % 2
            a(f"vlda wl{r}, [p0, #{64 * i}]")
            a(f"vlda wh{r}, [p0, #{64 * i + 32}]")
            if i >= 8:
                a(f"vmax_lt.bf16 x{i % 8}, r16, x{i % 8}, x{r}")
        live = list(range(min(8, N // 32)))
        while len(live) > 1:
            nxt = []
            for j in range(0, len(live) - 1, 2):
                a(f"vmax_lt.bf16 x{live[j]}, r16, x{live[j]}, x{live[j + 1]}")
                nxt.append(live[j])
            if len(live) % 2:
                nxt.append(live[-1])
            live = nxt
        m = live[0]
        for _ in range(5):
            a(f"vshuffle x8, x{m}, x{m}, r10")
            a(f"vshuffle x9, x{m}, x{m}, r11")
            a(f"vmax_lt.bf16 x{m}, r16, x8, x9")
        a(f"movxm p6, #{B.SCRATCH + 64}")
        a(f"vst wl{m}, [p6, #0]")
        a("vclr cm4")
        a("mov p2, p0")
        a("mov p3, p1")
        with a.loop("r1", N // 64):
            a("movxm p6, #t_sub")
            a("vlda wl4, [p6, #0]")
            a("vlda wh4, [p6, #32]")
            a(f"movxm p6, #{B.SCRATCH + 64}")
            for g in range(4):
                a(f"vlda wl{g}, [p2], #32 // @x")
                a(f"vlda wh{g}, [p6, #0] // @scratch")
            for g in range(4):
                a(f"vmul.f {daccs[g]}, x4, x{g}, r9")
                a(f"vconv.bf16.fp32 wl{g}, {daccs[g]}")
                a(f"vconv.bf16.fp32 wh{g}, {daccs[g]}")
            a("mov p5, r20")
            a("mov p6, r21")
            hinge_group(a, pairs, accs)
            a("movxm p6, #t_i4")
            a("vlda wl4, [p6, #0]")
            a("vlda wh4, [p6, #32]")
            for g in range(4):
                a(f"vconv.bf16.fp32 wl{g}, {accs[g]}")
                a(f"vst wl{g}, [p3], #32 // @y")
                a(f"vmac.f bml4, bml4, x4, x{g}, r9")
        a("vsub.16 x10, x10, x10")
        B.hsum16(a, "bml4")
        B.to_scalar(a, "wl10")
        B.scalar_recip(a, rsqrt=False)
        B.diag_from_scalar(a, "r6", "x11")
        a("mov p3, p1")
        a("mov p2, p1")
        a(f"movxm p6, #{B.SCRATCH + 64}")
        with a.loop("r1", N // 64):
            for g in range(4):
                a(f"vlda wl{g}, [p3], #32" + tag("y", 32 * g))
                a(f"vlda wh{g}, [p6, #0] // @scratch")
            for g in range(4):
                a(f"vmul.f {accs[g]}, x11, x{g}, r9")
                a(f"vconv.bf16.fp32 wl{4 + g}, {accs[g]}")
                a(f"vst wl{4 + g}, [p2], #32" + tag("y", 32 * g))
        a(f"movxm m0, #{2 * N}")
        a("padda [p0], m0")
        a("padda [p1], m0")
    return schedule(a.text())


def ref_depthwise_i8(task, cfg, layout, spec):
    """depthwise_conv, int8: the baseline's band-matrix MACs (no channel reduction to fill the MAC
    with) in blocks of two output rows, software-pipelined: per channel its band tiles are built (in
    scratch) and kept in registers, then each block's bundles also carry the copy of the previous
    block's two rows (60 contiguous bytes of y, a 4-aligned word stream: the even row's words, a word
    joining the rows, the odd row's halfword pairs) from the staging buffer, so the copies run beside
    the MACs. The pipeline's first copy (of nothing yet) goes to a dummy buffer in scratch."""
    C, H, W, K = cfg["C"], cfg["H"], cfg["W"], cfg["K"]
    OH, OW = H - 2, W - 2
    if not (K == 3 and W == 32 and OH % 2 == 0):
        return gen_scheduled(task.name)(task, cfg, layout, spec)  # (the scheduled baseline)
    shift = task.requant_shift("amdnpu", "y", cfg)
    xa, wa, ya = addr(layout, "x"), addr(layout, "w"), addr(layout, "y")
    stage = B.SCRATCH        # 64 bytes: a block's two rows
    tiles = B.SCRATCH + 0x100  # one channel's band tiles (288 bytes)
    dummy = B.SCRATCH + 0x200 + 64  # where the pipeline's first copy goes (60 bytes, after the tiles)
    a = Asm()
    a.comment(f"depthwise_conv reference (int8, SRS by {shift}): band-matrix MACs, two-row blocks, "
              "the previous block's copy-out in the same bundles")
    B.conv_i8_setup(a, shift)
    B.conv_i8_clear_tiles(a, tiles, 3 * 96)
    for r in (3, 4, 5):
        a(f"vsub.8 x{r}, x{r}, x{r}")  # wh3..wh5 stay zero: rows 4..7 of the B1 tiles
    tile_regs = [("r3", "r4", "r5", "r6", "r7", "r8", "r28", "r29"),
                 ("r17", "r19", "r21", "r22", "r23", "r24", "r25", "r26")]
    a(f"movxm p3, #{wa}")
    a(f"movxm m6, #{W}")
    a(f"movxm p1, #{dummy}")
    a(f"movxm p6, #{ya}")  # the next block's place in y
    a(f"movxm p2, #{xa}")
    a(f"movxm p4, #{tiles + 128}")
    a(f"movxm p7, #{stage}")

    pool = ["r1", "r3", "r4", "r5", "r6", "r7", "r8", "r10", "r11", "r16", "r17", "r19", "r20"] + \
        [f"r{i}" for i in range(21, 32)]
    pool += pool[:3]  # 27 values over 24 registers

    def copy_prev(part="all"):
        B.conv_i8_pair_copy(a, "p7", "p1", stage, pool, part=part)

    with a.loop("r0", C):
        a("mov p5, p4")  # this channel's band tiles (the zero words stay zero)
        a("padda [p5], #-32")
        a("mov p0, p4")
        a("padda [p0], #64")
        for kh in range(3):
            B.conv_i8_tile(a, "p3", ("p4", "p5", "p0")[kh], -128 if kh == 0 else 0, tile_regs[kh % 2])
        for kh in range(3):  # in registers for all the channel's blocks
            a(f"vlda wl{kh}, [p4, #{96 * kh - 128}] // @tiles")
            a(f"vlda wh{kh}, [p4, #{96 * kh - 96}] // @tiles")
            a(f"vlda wl{3 + kh}, [p4, #{96 * kh - 64}] // @tiles")
        with a.loop("r2", OH // 2):
            a("mov p5, p2")
            a(f"padda [p2], #{2 * W}")
            rowreg = (6, 8, 10, 6)  # row 3 reuses row 0's register (loaded once row 0 is done)
            for tt in range(3):
                a(f"vlda wl{rowreg[tt]}, [p5], m6 // @x")
            copy_prev("loads")
            for tt in range(4):
                d = rowreg[tt]
                s, c = (7, 7) if tt % 2 == 0 else (9, 8)
                if tt == 1:
                    a(f"vlda wl{rowreg[3]}, [p5], m6 // @x")
                a(f"vmul cm{c}, x11, x{d}, r9")
                a(f"vsrs.s8.s32 wl{s}, cm{c}, s0")
                for kh in range(3):
                    r = tt - kh
                    if 0 <= r < 2:
                        first = (tt == 0 and r == 0) or (tt == 1 and r == 1)
                        if first:
                            a(f"vmul cm{r}, x{d}, x{kh}, r9")
                        else:
                            a(f"vmac cm{r}, cm{r}, x{d}, x{kh}, r9")
                        a(f"vmac cm{r}, cm{r}, x{s}, x{3 + kh}, r9")
            for r in range(2):
                a(f"vst.srs.s8.s32 cm{r}, s1, [p7, #{32 * r}] // @stage:{32 * r}:{32 * r + 32}")
            copy_prev("rest")  # (after the MACs and SRS: the list scheduler serves them first)
            a("mov p1, p6")
            a(f"padda [p6], #{2 * OW}")
        a(f"padda [p2], #{2 * W}")
    copy_prev()
    return schedule(a.text())


# conv2d in int8 on channel-interleaved tiles (8-channel groups innermost, as the activations of
# the published AIE-ML int8 conv kernels): the input is rearranged, per 8-channel group g and row h,
# into twelve 32-byte chunks (four rows at a time in a rotating buffer in scratch, two new rows per
# output row pair): chunk q (q = 0..7) holds pixels q, q+8, q+16, q+24 times the
# group's 8 channels (lane 8m + c); chunks 8 and 9 hold pixels 8, 16, 24 and 9, 17, 25 (chunks 0
# and 1 one pixel row of the tile further), chunks 10 and 11 pixels -, 6, 14, 22 and -, 7, 15, 23
# (chunks 6 and 7 one row back), each made by a unit-selection MAC. Then output pixels q + 8m
# (m = 0..3) of 8 output channels at tap (kh, kw) are one MAC: chunk q + kw of row oh + kh (a 4x8
# A tile: 4 pixels x 8 input channels) times the 8x8 weight tile w[co, c, kh, kw] (B[c][co]),
# every lane useful (for CI >= 8). Odd output rows are computed two lanes up (group q holds pixels
# q - 2 + 8m, from chunks q + kw - 2, i.e. 10 and 11 for -2 and -1), so that a pair of rows, 60
# contiguous bytes of y, leaves as aligned words.
# The byte transposes between [channel][pixel] rows and [pixel group][pixel][channel] chunks, and
# back for the results ([q][m][co] -> [co][pixel]), are the same five shuffle stages (byte and 32-bit
# interleaves over four x registers), found by a search over the shuffle modes' bit permutations.
CONV_STAGES = ((20, "a"), (20, "a"), (16, "a"), (16, "a"), (16, "b"))  # interleave mode (lo), pair bit


def transpose8(a: Asm, src, dst, modes: dict) -> list:
    """Five interleave stages over four x registers, ping-ponging between the register sets src
    and dst; returns the set holding the result. Register index r = 2*ra + rb: pair bit "a"
    pairs r with r ^ 2, "b" pairs r with r ^ 1; the lo result goes to the pair's lower index."""
    cur, other = list(src), list(dst)
    for mode, bit in CONV_STAGES:
        pairs = ((0, 2), (1, 3)) if bit == "a" else ((0, 1), (2, 3))
        for i, j in pairs:
            a(f"vshuffle x{other[i]}, x{cur[i]}, x{cur[j]}, {modes[mode]}")
            a(f"vshuffle x{other[j]}, x{cur[i]}, x{cur[j]}, {modes[mode + 1]}")
        cur, other = other, cur
    return cur


def ref_conv2d_i8(task, cfg, layout, spec):
    CI, CO, H, W, K = B.conv_i8_dims(False, cfg)
    OH, OW = H - 2, W - 2
    if not (K == 3 and W == 32 and (CI in (2, 4) or CI % 8 == 0) and OH % 2 == 0):
        return gen_scheduled(task.name)(task, cfg, layout, spec)  # (the scheduled baseline)
    G, CO8 = -(-CI // 8), -(-CO // 8)
    shift = task.requant_shift("amdnpu", "y", cfg)
    xa, wa, ya = addr(layout, "x"), addr(layout, "w"), addr(layout, "y")
    blk = 384  # twelve chunks per (group, row)
    wsize = CO8 * G * 9 * 64
    stage = B.SCRATCH  # two buffers of eight row pairs of 64 bytes (this row pair's, the previous one's)
    buf = stage + 1024  # the chunks of four input rows per group (slot s, group g at buf + (4 g + s) blk)
    a = Asm()
    if buf + 4 * G * blk + wsize <= B.SAVE_AREA:
        wbuf = buf + 4 * G * blk  # the weight tiles in scratch
    else:  # (CI = 16: in the program's .data, and the spill slots too: the chunks fill the scratch region)
        a.table("c_wtiles", [0] * (wsize // 2))
        wbuf = "c_wtiles"
        if buf + 4 * G * blk > B.SAVE_AREA:
            a.table("csr_save", [0] * 32)
        assert buf + 4 * G * blk <= 0x10000
    a.comment(f"conv2d reference (int8, SRS by {shift}): channel-interleaved chunks, one 4x8x8 MAC per "
              "4 pixels x 8 output channels x 8 input channels per tap")
    B.conv_i8_setup(a, shift)
    a.data.append("    .p2align 6")
    a.data.append("s_unit2:")  # S2[i][i+5] = 1 (i = 0..2): units 1..3 of the high half
    a.data.append("    .byte " + ", ".join("1" if k == i + 5 and i < 3 else "0" for i in range(4) for k in range(8)))
    a.data.append("    .p2align 6")
    a.data.append("s_down:")  # S3[i][i-1] = 1 (i = 1..3): units 0..2 of the low half, one row down
    a.data.append("    .byte " + ", ".join("1" if k == i - 1 and i > 0 else "0" for i in range(4) for k in range(8)))
    a.data.append("    .p2align 6")
    a.data.append("s_down2:")  # S4[i][i+3] = 1 (i = 1..3): units 0..2 of the high half, one row down
    a.data.append("    .byte " + ", ".join("1" if k == i + 3 and i > 0 else "0" for i in range(4) for k in range(8)))
    modes = {20: "r24", 21: "r25", 16: "r26", 17: "r27"}  # (set after the weight tiles)
    # 0. zero the weight tiles (channels / output channels beyond CI / CO stay zero)
    a("vsub.8 x10, x10, x10")
    a(f"movxm p6, #{wbuf}")
    for _ in range(wsize // 32):
        a("vst wl10, [p6], #32")
    # 1. weight tiles: tile (cog, g, t) at wbuf + ((cog * G + g) * 9 + t) * 64, B[c][co]; each word
    #    (four output channels) joined from four byte loads (one pointer per output channel)
    CO_in = min(8, CO)
    a("movxm m0, #64")
    a(f"movxm m1, #{576 - 8 * min(8, CI)}")
    a(f"movxm r20, #{wbuf}")
    a(f"movxm r21, #{wa}")
    with a.loop("r0", CO8):
        for half in range(CO_in // 4):
            for j in range(4):
                a(f"movxm r16, #{(4 * half + j) * CI * 9}")
                a("add r17, r21, r16")
                a(f"mov p{3 + j}, r17")
            a("mov p7, r20")
            if half:
                a("padda [p7], #4")
            with a.loop("r1", G):
                with a.loop("r2", min(8, CI)):
                    a("mov p0, p7")
                    sets = [("r3", "r4", "r5", "r6"), ("r7", "r8", "r10", "r11"), ("r19", "r22", "r23", "r24"),
                            ("r25", "r26", "r27", "r28"), ("r29", "r30", "r31", "r17")]
                    for tt in range(9):
                        b = sets[tt % len(sets)]
                        for j in range(4):
                            a(f"lda.u8 {b[j]}, [p{3 + j}], #1 // @w")
                        if tt in (2, 6):  # byte stores (load unit A) for two of the nine: balances the ALU
                            for j in range(4):
                                a(f"st.s8 {b[j]}, [p0], #1 // @wt")
                            a("padda [p0], #60")
                            continue
                        a(f"lshl {b[1]}, {b[1]}, r12")
                        a(f"lshl {b[2]}, {b[2]}, r13")
                        a(f"lshl {b[3]}, {b[3]}, r14")
                        a(f"or {b[0]}, {b[0]}, {b[1]}")
                        a(f"or {b[2]}, {b[2]}, {b[3]}")
                        a(f"or {b[0]}, {b[0]}, {b[2]}")
                        a(f"st {b[0]}, [p0], m0 // @wt")
                    a("padda [p7], #8")
                a("padda [p7], m1")
        a(f"movxm r16, #{G * 576}")
        a("add r20, r20, r16")
        a(f"movxm r16, #{8 * CI * 9}")
        a("add r21, r21, r16")
    for m, r in modes.items():
        a(f"movxm {r}, #{m}")
    # 2. input chunks, four rows at a time in four slots per group, used in rotation: rows 0, 1 now; at
    # row pair oh (parity t = oh / 2 mod 2) rows oh + 2, oh + 3 into slots 2 - 2t, 3 - 2t, so that row
    # oh + r is in slot r + 2t (r = 0, 1) or r - 2t (r = 2, 3). unroll: the two rows straight-line
    # (where the program image has room), else a loop.
    a(f"movxm m1, #{H * W}")

    def chunk_rows(xrow: str, dest, unroll: bool) -> None:
        """The chunks of input rows h, h + 1 (xrow: a register holding the address of channel 0, row
        h; not changed) into the slot at dest (an address, or (c, reg): the address c - reg) and the
        next one, in every group. Uses r16, p5, p6, x0..x11, cm5..cm8 (and r2 when not unrolled)."""
        a("movxm p6, #s_unit")
        a("vlda wl8, [p6, #0]")
        a("movxm p6, #s_unit2")
        a("vlda wl9, [p6, #0]")
        a("movxm p6, #s_down")
        a("vlda wl10, [p6, #0]")
        a("movxm p6, #s_down2")
        a("vlda wl11, [p6, #0]")

        def one_row():
            loaded = set()
            for c in range(min(8, CI - 8 * g)):
                r = 2 * ((c >> 1) & 1) + ((c >> 2) & 1)
                a(f"vlda {'wh' if c & 1 else 'wl'}{r}, [p5], m1 // @x")
                loaded.add(r)
            for r in range(4):
                if r not in loaded:
                    a(f"vsub.8 x{r}, x{r}, x{r}")
            res = transpose8(a, (0, 1, 2, 3), (4, 5, 6, 7), modes)
            for q in range(8):
                r = res[2 * ((q >> 2) & 1) + ((q >> 1) & 1)]
                a(f"vst {'wh' if q & 1 else 'wl'}{r}, [p6], #32 // @chunks")
            a(f"vmul cm8, x8, x{res[0]}, r9")   # chunk 0 units 1..3
            a(f"vmul cm7, x9, x{res[0]}, r9")   # chunk 1 units 1..3
            a(f"vmul cm6, x10, x{res[3]}, r9")  # chunk 6 units 0..2, one row down (pixels -2, 6, 14, 22)
            a(f"vmul cm5, x11, x{res[3]}, r9")  # chunk 7 likewise (pixels -1, 7, 15, 23)
            a("vst.srs.s8.s32 cm8, s0, [p6], #32 // @chunks")
            a("vst.srs.s8.s32 cm7, s0, [p6], #32 // @chunks")
            a("vst.srs.s8.s32 cm6, s0, [p6], #32 // @chunks")
            a("vst.srs.s8.s32 cm5, s0, [p6], #32 // @chunks")

        def set_ptrs(row: int, g: int):
            a(f"movxm r16, #{8 * g * H * W + row * W}")
            a(f"add r16, {xrow}, r16")
            a("mov p5, r16")
            off = (4 * g + row) * blk
            if isinstance(dest, tuple):
                a(f"movxm r16, #{dest[0] + off}")
                a(f"sub r16, r16, {dest[1]}")
                a("mov p6, r16")
            else:
                a(f"movxm p6, #{dest + off}")

        for g in range(G):
            if unroll:
                for row in range(2):
                    set_ptrs(row, g)
                    one_row()
                continue
            set_ptrs(0, g)
            with a.loop("r2", 2):
                a("mov r16, p5")
                one_row()
                a("mov p5, r16")
                a(f"padda [p5], #{W}")

    unroll = CI <= 8  # (CI = 16: the image is full)
    a(f"movxm r31, #{xa}")
    chunk_rows("r31", buf, unroll)
    # 3. per output row pair and 8 output channels: 8 accumulators (pixel groups q), G x 9 x 8 MACs.
    # The rows of output channel co at oh, oh + 1 are 60 contiguous bytes of y (a 4-aligned word
    # stream); they are staged at p7 + 64 co (the odd row two lanes up) and copied out during the
    # next (row pair, channel block)'s MAC loops (software pipelining; k = CO_in / (2 G) pairs per g
    # iteration of each row; p7 and p0 swap the two staging buffers), the last ones after the loops.
    # The pipeline's first copies (of nothing yet) write the places of the last row pair of channels
    # 0..7, which are written correctly at the end.
    k = CO_in // (2 * G)
    assert k * 2 * G == CO_in
    cregs = ("r3", "r4", "r5", "r6", "r7", "r8", "r10", "r11", "r12", "r14", "r15", "r16", "r17",
             "r19", "r28", "r29")
    a(f"movxm m3, #{OH * OW - 2 * OW}")
    a(f"movxm r21, #{ya}")
    a(f"movxm r23, #{ya + (OH - 2) * OW}")
    a(f"movxm p7, #{stage}")
    a(f"movxm p0, #{stage + 512}")

    def pair_copies(n):
        for _ in range(n):
            B.conv_i8_pair_copy_shifted(a, "p2", "p1", cregs)
            a("padda [p1], m3")
            a("padda [p2], #64")

    base = buf + 128  # (the chunk loads' offsets are -128..224)
    with a.loop("r1", OH // 2):
        # r20 = A = base + 2 t blk (rows oh, oh + 1 at A, A + blk; rows oh + 2, oh + 3 at C - A + 2 blk,
        # C - A + 3 blk with C = 2 base), t = (OH / 2 - r1) mod 2 (r1 counts the pairs down)
        a(f"movxm r30, #{OH // 2}")
        a("sub r31, r30, r1")
        a("movx r30, #1")
        a("and r31, r31, r30")
        a(f"movxm r30, #{2 * blk}")
        a("mul r31, r31, r30")
        a(f"movxm r30, #{base}")
        a("add r20, r31, r30")
        # rows oh + 2, oh + 3: x + (oh + 2) W, oh = OH - 2 r1
        a(f"movxm r30, #{2 * W}")
        a("mul r31, r1, r30")
        a(f"movxm r30, #{xa + 2 * W + OH * W}")
        a("sub r31, r30, r31")
        chunk_rows("r31", (2 * base + 2 * blk - 128, "r20"), unroll)
        a(f"movxm m2, #{4 * blk}")
        a(f"movxm r22, #{wbuf}")
        with a.loop("r0", CO8):
            for par in range(2):
                for q in range(8):
                    a(f"vclr cm{q}")
                a("mov p3, r22")
                rows = []  # (p4, p5, p6): rows par, par + 1, par + 2
                for r in range(par, par + 3):
                    rows.append(("A", r * blk) if r < 2 else ("C", 2 * base + r * blk))
                for pk, (kind, c) in zip(("p4", "p5", "p6"), rows):
                    if kind == "A":
                        a(f"mov {pk}, r20")
                        if c:
                            a(f"padda [{pk}], #{c}")
                    else:
                        a(f"movxm r30, #{c}")
                        a("sub r31, r30, r20")
                        a(f"mov {pk}, r31")
                if par == 0:
                    a("mov p1, r23")
                    a("mov p2, p0")
                    a("mov r23, r21")
                with a.loop("r2", G):
                    pair_copies(k)  # (first: its word loads take load unit A, the chunks unit B)
                    # per kernel row: the three weight tiles (x9..x11) and the ten chunks u = q + kw
                    # (wl0..wl8, chunk 9 in wl0 once chunk 0 is used), each loaded once
                    for kh in range(3):
                        pk = ("p4", "p5", "p6")[kh]
                        for kw in range(3):
                            a(f"vlda wl{9 + kw}, [p3], #32 // @wt")
                            a(f"vlda wh{9 + kw}, [p3], #32 // @wt")

                        def chunk(u):
                            j = u if par == 0 else u - 2  # odd rows: lane = pixel + 2
                            j = j if j >= 0 else 12 + j   # chunks 10, 11: pixels -2, -1 (+ 8m)
                            a(f"vlda wl{u % 9}, [{pk}, #{32 * j - 128}] // @chunks")
                        for u in range(9):
                            chunk(u)
                        for kw in range(3):
                            for q in range(8):
                                a(f"vmac cm{q}, cm{q}, x{(q + kw) % 9}, x{9 + kw}, r9")
                            if kw == 0:
                                chunk(9)
                    for pk in ("p4", "p5", "p6"):
                        a(f"padda [{pk}], m2")
                # results: acc q -> register 2*q1 + q2, half q0; transpose; row co at 2*co2 + co1, half co0
                src = (0, 1, 2, 3)
                for q in range(8):
                    r = src[2 * ((q >> 1) & 1) + ((q >> 2) & 1)]
                    a(f"vsrs.s8.s32 {'wh' if q & 1 else 'wl'}{r}, cm{q}, s1")
                res = transpose8(a, src, (4, 5, 6, 7), modes)
                for co in range(CO_in):
                    r = res[2 * ((co >> 2) & 1) + ((co >> 1) & 1)]
                    o = 64 * co + 32 * par
                    a(f"vst {'wh' if co & 1 else 'wl'}{r}, [p7, #{o}] // @stage:{o}:{o + 32}")
            a("mov r30, p7")
            a("mov p7, p0")
            a("mov p0, r30")
            a(f"movxm r30, #{8 * OH * OW}")  # the next channel block, same rows
            a("add r21, r21, r30")
            a(f"movxm r30, #{G * 576}")
            a("add r22, r22, r30")
        a(f"movxm r30, #{2 * OW - CO8 * 8 * OH * OW}")  # the next row pair, channel block 0
        a("add r21, r21, r30")
    a("mov p1, r23")
    a("mov p2, p0")
    pair_copies(CO_in)
    return schedule(a.text())


def ref_linear(task, cfg, layout, spec):
    """y = x @ w.T + bias, per block of 16 rows of w (16 outputs n0..): its bias tiles into scratch, the
    block copied into transposed MAC tiles (per 16 columns k0..: the even-k and odd-k tiles of rows
    n0+q+4j go to rows q, +4, +8, +12 of the copy), the work a DMA would do on the real tile; then
    8 x 16 blocks of y down the block as in the gemm reference, the accumulators starting from the
    bias. The copy lives in scratch, its last k steps in the program's .data when the scratch region
    is too small (K = 128); w is only read."""
    M, K, N = cfg["M"], cfg["K"], cfg["N"]
    if not (M % 8 == 0 and K % 16 == 0 and N % 16 == 0):
        return gen_scheduled("linear")(task, cfg, layout, spec)  # (M = 4: the scheduled baseline)
    steps = K // 16
    btiles = B.SCRATCH  # the block's four bias tiles (256 bytes), then its w tiles
    fit = (TMP_FREE - 256) // 512
    a = Asm()
    a.comment("linear reference: per 16 rows of w its transposed tiles and bias tiles, then 8 x 16 blocks")
    a.table("ones_col0", [0x3F80 if lane % 8 == 0 else 0 for lane in range(32)])
    if "buf" in layout.placements:  # (a Level-2/3 kernel's buffer for the tiles)
        regions = [(addr(layout, "buf"), steps)]
    elif steps <= fit:
        regions = [(B.SCRATCH + 256, steps)]
    else:
        regions = [(B.SCRATCH + 256, fit), ("w_panel", steps - fit)]
        a.table("w_panel", [0] * ((steps - fit) * 256))
    B.setup_modes(a)
    xa, wa, ba, ya = addr(layout, "x"), addr(layout, "w"), addr(layout, "bias"), addr(layout, "y")
    where = {}  # k step -> (region base, row stride in bytes, the region's first step)
    s0 = 0
    for base, n in regions:
        for st in range(s0, s0 + n):
            where[st] = (base, 32 * n, s0)
        s0 += n
    a(f"movxm r22, #{wa}")   # the block's rows of w
    a(f"movxm r26, #{ba}")   # its bias values
    a(f"movxm r21, #{ya}")   # its columns of y
    with a.loop("r1", N // 16):
        # 1. bias tiles: row 0 of tile q = bias[n0 + 4j + q]
        a("mov p3, r26")
        a(f"movxm p4, #{btiles}")
        a("vsub.16 x5, x5, x5")
        a("vsub.16 x4, x4, x4")
        a("vlda wl4, [p3], #32")
        a("mov r26, p3")
        a("vshuffle x8, x4, x5, r10")
        a("vshuffle x9, x4, x5, r11")
        a("vshuffle x0, x8, x5, r10")
        a("vshuffle x2, x8, x5, r11")
        a("vshuffle x1, x9, x5, r10")
        a("vshuffle x3, x9, x5, r11")
        for t in range(4):
            a(f"vst wl{t}, [p4], #32")
            a(f"vst wh{t}, [p4], #32")
        # 2. the block's transposed tiles
        a("mov p1, r22")
        a(f"movxm m0, #{8 * K}")
        for base, n in regions:
            rs = 32 * n
            a(f"movxm p2, #{base}")
            a(f"movxm m2, #{4 * rs}")
            with a.loop("r0", n):
                for q in range(4):
                    a("mov p5, p1")
                    a("mov p6, p2")
                    if q:
                        a(f"movxm m1, #{q * 2 * K}")
                        a("padda [p5], m1")
                        a(f"padda [p6], #{q * rs}")
                    o = 4 * (q % 2)
                    for i in range(2):
                        a(f"vlda wl{2 * i + o}, [p5], m0")
                        a(f"vlda wh{2 * i + o}, [p5], m0")
                    a(f"vshuffle x8, x{o}, x{o + 2}, r12")
                    a(f"vshuffle x9, x{o}, x{o + 2}, r13")
                    a("vshuffle x10, x8, x9, r14")
                    a("vshuffle x11, x8, x9, r15")
                    a(f"vshuffle x{o + 1}, x10, x11, r24")
                    a(f"vshuffle x{o + 3}, x10, x11, r25")
                    a(f"vst wl{o + 1}, [p6], m2")
                    a(f"vst wh{o + 1}, [p6], m2")
                    a(f"vst wl{o + 3}, [p6], m2")
                    a(f"vst wh{o + 3}, [p6], m2")
                a("padda [p1], #32")
                a("padda [p2], #32")
        # 3. 8 x 16 blocks of y down the block
        accs = [("bml0", "bmh0", "bml1", "bmh1"), ("bml2", "bmh2", "bml3", "bmh3")]
        a(f"movxm r20, #{xa}")
        a("mov r23, r21")
        with a.loop("r0", M // 8):
            a("movxm p6, #ones_col0")
            a("vlda wl10, [p6, #0]")
            a("vlda wh10, [p6, #32]")
            a(f"movxm p6, #{btiles}")
            for q in range(4):
                a(f"vlda wl{6 + q % 2}, [p6], #32")
                a(f"vlda wh{6 + q % 2}, [p6], #32")
                for g in range(2):
                    a(f"vmul.f {accs[g][q]}, x10, x{6 + q % 2}, r9")
            a("mov p3, r20")
            a("mov p4, r20")
            a(f"movxm m3, #{8 * K}")
            a("padda [p4], m3")
            breg = 0
            for step in range(steps):
                for g, pa in enumerate(("p3", "p4")):
                    for r in range(4):
                        a(f"vlda {'wl' if r % 2 == 0 else 'wh'}{4 + r // 2}, [{pa}, #{r * 2 * K}]")
                    a(f"vshuffle x{2 * g}, x4, x5, r10")
                    a(f"vshuffle x{2 * g + 1}, x4, x5, r11")
                    a(f"padds [{pa}], #32")
                base, rs, first = where[step]
                ptrs = {(0, 0): "p5", (0, 1): "p6", (1, 0): "p7", (1, 1): "p1"}
                for (par, h), ptr in ptrs.items():
                    off = (8 * par + 4 * h) * rs + 32 * (step - first)
                    a(f"movxm {ptr}, #{base}+{off}" if isinstance(base, str) else f"movxm {ptr}, #{base + off}")
                for t in range(8):
                    q, par = t // 2, t % 2
                    reg = 6 + ((breg + t) % 6)
                    a(f"vlda wl{reg}, [{ptrs[(par, 0)]}, #{q * rs}]")
                    a(f"vlda wh{reg}, [{ptrs[(par, 1)]}, #{q * rs}]")
                    for g in range(2):
                        a(f"vmac.f {accs[g][q]}, {accs[g][q]}, x{2 * g + par}, x{reg}, r9")
                breg += 8
            for g in range(2):
                a("mov r29, r23")
                if g:
                    a(f"movxm r28, #{8 * N}")
                    a("add r29, r29, r28")
                a("mov p2, r29")
                B.out_block(a, accs[g], "p2", 2 * N)
            a(f"movxm r28, #{16 * K}")
            a("add r20, r20, r28")
            a(f"movxm r28, #{16 * N}")
            a("add r23, r23, r28")
        a("movxm r28, #32")
        a("add r21, r21, r28")
        a(f"movxm r28, #{32 * K}")
        a("add r22, r22, r28")
    return schedule(a.text())


def ref_norm(layer: bool):
    """The baseline's algorithm with every per-row pass unrolled over the row (rotating registers
    and accumulators), both load units fed, and the whole kernel packed by the scheduler."""
    def gen(task, cfg, layout, spec):
        M, N = cfg["M"], cfg["N"]
        assert M % 4 == 0 and N % 64 == 0 and N <= 512
        eps = 1e-5 if layer else 1e-6
        a = Asm()
        a.comment(("layer_norm" if layer else "rms_norm") + " reference: unrolled row passes, then y = z * gamma (+ beta)")
        gt = B.norm_setup(a, N, eps)
        accs = ("bml4", "bmh4", "bml5", "bmh5")
        a("movxm p0, #%d" % addr(layout, "x"))
        a("movxm p1, #%d" % addr(layout, "y"))
        with a.loop("r0", M):
            src = "p0"
            if layer:
                a("movxm p5, #t_pair")
                a("vlda wl8, [p5, #0]")
                a("vlda wh8, [p5, #32]")
                for c in range(N // 32):
                    r = c % 4
                    a(f"vlda wl{r}, [p0, #{64 * c}]" + tag("x", 64 * c))
                    a(f"vlda wh{r}, [p0, #{64 * c + 32}]" + tag("x", 64 * c + 32))
                    if c == 0:
                        a(f"vmul.f bml0, x8, x{r}, r9")
                    else:
                        a(f"vmac.f bml0, bml0, x8, x{r}, r9")
                a("vsub.16 x10, x10, x10")
                B.hsum16(a, "bml0", "t_mean2")
                a("vshuffle x7, x10, x10, r10")
                for _ in range(4):
                    a("vshuffle x7, x7, x7, r10")
                for c in range(4):
                    a(f"vmax_lt.bf16 x{c}, r16, x7, x7")
                a("movxm p5, #t_sub")
                a("vlda wl8, [p5, #0]")
                a("vlda wh8, [p5, #32]")
                for b in range(N // 16):
                    c = b % 4
                    a(f"vlda wl{c}, [p0, #{32 * b}]" + tag("x", 32 * b))
                    a(f"vmul.f {accs[c]}, x8, x{c}, r9")
                    a(f"vconv.bf16.fp32 wl{4 + c}, {accs[c]}")
                    a(f"vst wl{4 + c}, [p1, #{32 * b}]" + tag("y", 32 * b))
                src = "p1"
            # sum of squares (the row as 4 x N/4)
            a(f"mov p2, {src}")
            a(f"mov p3, {src}")
            a(f"movxm m3, #{N}")
            a("padda [p3], m3")
            for st in range(N // 64):
                arr = "y" if layer else "x"
                a(f"vlda wl0, [p2, #{32 * st}]" + tag(arr, 32 * st))
                a(f"vlda wh0, [p2, #{32 * st + N // 2}]" + tag(arr, 32 * st + N // 2))
                a(f"vlda wl1, [p3, #{32 * st}]" + tag(arr, N + 32 * st))
                a(f"vlda wh1, [p3, #{32 * st + N // 2}]" + tag(arr, N + 32 * st + N // 2))
                a("vshuffle x2, x0, x1, r10")
                a("vshuffle x3, x0, x1, r11")
                a("vshuffle x6, x0, x1, r12")
                a("vshuffle x7, x0, x1, r13")
                a("vshuffle x8, x6, x7, r14")
                a("vshuffle x9, x6, x7, r15")
                a("vshuffle x6, x8, x9, r24")
                a("vshuffle x7, x8, x9, r25")
                if st == 0:
                    a("vmul.f bml0, x2, x6, r9")
                else:
                    a("vmac.f bml0, bml0, x2, x6, r9")
                a("vmac.f bml0, bml0, x3, x7, r9")
            a("vsub.16 x10, x10, x10")
            a("vconv.bf16.fp32 wl10, bml0")
            a("movxm p5, #t_trace1")
            a("vlda wl9, [p5, #0]")
            a("vlda wh9, [p5, #32]")
            a("vmul.f bml3, x10, x9, r9")
            a("movxm p5, #t_i4")
            a("vlda wl8, [p5, #0]")
            a("vlda wh8, [p5, #32]")
            a("movxm p5, #t_eps")
            a("vlda wl6, [p5, #0]")
            a("vlda wh6, [p5, #32]")
            a("vmul.f bml2, x8, x6, r9")
            a("vconv.bf16.fp32 wl10, bml3")
            a("movxm p5, #t_mean2")
            a("vlda wl9, [p5, #0]")
            a("vlda wh9, [p5, #32]")
            a("vmac.f bml2, bml2, x10, x9, r9")
            a("vconv.bf16.fp32 wl10, bml2")
            B.to_scalar(a, "wl10")
            B.scalar_recip(a, rsqrt=True)
            B.diag_from_scalar(a, "r6", "x11")
            for b in range(N // 16):
                c = b % 4
                a(f"vlda wl{c}, [{src}, #{32 * b}]" + tag("y" if layer else "x", 32 * b))
                a(f"vmul.f {accs[c]}, x11, x{c}, r9")
                a(f"vconv.bf16.fp32 wl{4 + c}, {accs[c]}")
                a(f"vst wl{4 + c}, [p1, #{32 * b}]" + tag("y", 32 * b))
            a(f"movxm m0, #{2 * N}")
            a("padda [p0], m0")
            a("padda [p1], m0")
        a("vsub.16 x10, x10, x10")
        B.norm_gamma_phase(a, layer, M, N, layout, gt, rename=True)
        return schedule(a.text())
    return gen


def ref_gemv(task, cfg, layout, spec):
    """y = a @ x: the transposed tiles of x (all four columns = x) are built once into scratch;
    then per 16 rows of y the k loop is unrolled, four A tiles pairs per k step on both load
    units, two pointer chains per row group."""
    M, K = cfg["M"], cfg["K"]
    assert M % 16 == 0 and K % 16 == 0 and K // 16 * 128 <= 0xE00
    a = Asm()
    a.comment("gemv reference: x tiles once into scratch, unrolled k, 16 rows of y per block")
    B.setup_modes(a)
    xt = B.SCRATCH + 0x100
    a("movxm p1, #%d" % addr(layout, "x"))
    a(f"movxm p2, #{xt}")
    for c in range(K // 16):
        o = 4 * (c % 2)
        a(f"vlda wl{o}, [p1, #{32 * c}]")
        a(f"vlda wh{o}, [p1, #{32 * c}]")
        a(f"vlda wl{o + 2}, [p1, #{32 * c}]")
        a(f"vlda wh{o + 2}, [p1, #{32 * c}]")
        a(f"vshuffle x8, x{o}, x{o + 2}, r12")
        a(f"vshuffle x9, x{o}, x{o + 2}, r13")
        a("vshuffle x10, x8, x9, r14")
        a("vshuffle x11, x8, x9, r15")
        a(f"vshuffle x{o + 1}, x10, x11, r24")
        a(f"vshuffle x{o + 3}, x10, x11, r25")
        a(f"vst wl{o + 1}, [p2], #32")
        a(f"vst wh{o + 1}, [p2], #32")
        a(f"vst wl{o + 3}, [p2], #32")
        a(f"vst wh{o + 3}, [p2], #32")
    accs = ("bml0", "bmh0", "bml1", "bmh1")
    a("movxm p0, #%d" % addr(layout, "a"))
    a("movxm p2, #%d" % addr(layout, "y"))
    with a.loop("r0", M // 16):
        a("vclr cm0")
        a("vclr cm1")
        a(f"movxm p6, #{xt}")
        ptrs = []
        for q in range(4):
            ptr = ("p1", "p3", "p4", "p5")[q]
            a(f"mov {ptr}, p0")
            if q:
                a(f"movxm m1, #{q * 8 * K}")
                a(f"padda [{ptr}], m1")
            ptrs.append(ptr)
        for c in range(K // 16):
            t = 8 + 2 * (c % 2)
            a(f"vlda wl{t}, [p6], #32")
            a(f"vlda wh{t}, [p6], #32")
            a(f"vlda wl{t + 1}, [p6], #32")
            a(f"vlda wh{t + 1}, [p6], #32")
            for q in range(4):
                o = 4 * (q % 2)
                for r in range(4):
                    a(f"vlda {'wl' if r % 2 == 0 else 'wh'}{o + r // 2}, [{ptrs[q]}, #{r * 2 * K}]")
                a(f"vshuffle x{o + 2}, x{o}, x{o + 1}, r10")
                a(f"vshuffle x{o + 3}, x{o}, x{o + 1}, r11")
                a(f"padds [{ptrs[q]}], #32")
                a(f"vmac.f {accs[q]}, {accs[q]}, x{o + 2}, x{t}, r9")
                a(f"vmac.f {accs[q]}, {accs[q]}, x{o + 3}, x{t + 1}, r9")
        a("vconv.bf16.fp32 wl0, bml0")
        a("vconv.bf16.fp32 wh0, bmh0")
        a("vconv.bf16.fp32 wl1, bml1")
        a("vconv.bf16.fp32 wh1, bmh1")
        a("vshuffle x2, x0, x1, r10")
        a("vshuffle x3, x2, x2, r10")
        a("vst wl3, [p2], #32")
        a(f"movxm m0, #{32 * K}")
        a("padda [p0], m0")
    return schedule(a.text())


GENERATORS = {
    "gemv": lambda task, cfg, layout, spec: B.packed(ref_gemv(task, cfg, layout, spec), spec),  # (its jumps'
    # delay slots overlap its loop body only when kcgen.schedule packs it: otherwise slower than the baseline)
    "rms_norm": ref_norm(False),
    "layer_norm": ref_norm(True),
    "linear": ref_linear,
    "conv2d": ref_conv2d_i8,
    "depthwise_conv": ref_depthwise_i8,
    "softmax": ref_softmax,
    "gemm": ref_gemm,
    "batch_matmul": ref_batch_matmul,
    "relu": ref_relu,
    "silu": ref_unary_pwl("silu"),
    "gelu": ref_unary_pwl("gelu"),
}


def generate(task, cfg, layout, spec):
    gen = GENERATORS.get(task.name) or gen_scheduled(task.name)
    _TOP[0] = True
    try:
        text = gen(task, cfg, layout, spec)
    finally:
        _TOP[0] = False
    return None if text is None else B.wait_for_results(text, spec)  # as the AIE2 pipeline needs (no interlock)
