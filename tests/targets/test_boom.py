"""targets/boom.isa (BOOM, RV64IMFD + Zicsr) against independent oracles.

(a) encodings: every instruction and pseudo-instruction, with hypothesis-drawn operands, assembles
    byte-identically with GNU as (-march=rv64imfd), including %hi/%lo/%pcrel_hi/%pcrel_lo, la to
    .data/.rodata and 64-bit li;
(b) the assembly clang-19 emits at -O2 for C kernels (saxpy, dot, gemm, relu) assembles
    byte-identically with GNU as;
(c) execution: random straight-line and looping programs end in the same architectural state
    (x and f registers, fcsr, the memory they touch) on our C simulator and on qemu-riscv64; the F/D
    programs also on spike (riscv-isa-sim, bare-metal through tests/targets/spike.py), a second oracle;
(d) every example of the description passes on both simulators;
(e) ooo timing sanity on hand-computed sequences (LargeBoom and, via -D CONFIG, SmallBoom/MegaBoom).

Tools: apt binutils-riscv64-unknown-elf (a, b, c), clang-19 (b), qemu-user (c), spike and dtc (c). A missing tool
skips its tests with the install command as the reason.
"""
from __future__ import annotations

import functools
import random
import re
import shutil
import struct
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import isadl
from tests.asm import common
from tests.asm.common import aligned_values, numbers, write_insn
from tests.targets import spike

ROOT = Path(__file__).resolve().parents[2]
BOOM = ROOT / "targets" / "boom.isa"
HERE = Path(__file__).resolve().parent / "boom"
NAME = "boom"
common.FIXTURES[NAME] = BOOM  # the shared strategies look ISAs up by name

AS = shutil.which("riscv64-unknown-elf-as")
LD = shutil.which("riscv64-unknown-elf-ld")
OBJCOPY = shutil.which("riscv64-unknown-elf-objcopy")
CLANG = shutil.which("clang-19")
QEMU = shutil.which("qemu-riscv64") or shutil.which("qemu-riscv64-static")
AS_FLAGS = ["-march=rv64imfd_zicsr_zifencei", "-mabi=lp64d", "-mno-relax", "-mno-arch-attr"]
BINUTILS_HINT = "GNU binutils for RISC-V missing: apt-get install -y binutils-riscv64-unknown-elf"
needs_binutils = pytest.mark.skipif(not (AS and LD and OBJCOPY), reason=BINUTILS_HINT)


@functools.lru_cache(maxsize=None)
def spec():
    return common.spec(NAME)


def ours(text: str):
    return common.assembler(NAME).assemble(text, "ours.s")


def ram_base() -> int:
    return spec().params["RAM_BASE"]


def gnu_sections(text: str, workdir: Path, bases: dict[str, int], sections=(".text",)) -> dict[str, bytes]:
    """Assemble with GNU as, link every section at our address, return each section's bytes."""
    src, obj, elf = (workdir / n for n in ("g.s", "g.o", "g.elf"))
    src.write_text(text)
    run([AS, *AS_FLAGS, "-o", str(obj), str(src)], text)
    script = workdir / "g.ld"  # every input section at our address, under its own name
    script.write_text("SECTIONS {\n" + "".join(f"  {n} {a:#x} : {{ *({n}) }}\n" for n, a in bases.items())
                      + "  /DISCARD/ : { *(.comment) *(.note*) *(.riscv.attributes) }\n}\n")
    run([LD, "-m", "elf64lriscv", "--no-relax", "-e", hex(bases[".text"]), "-T", str(script),
         "-o", str(elf), str(obj)], text)
    out = {}
    for n in sections:
        binf = workdir / f"g{n}.bin"
        run([OBJCOPY, "-O", "binary", "-j", n, str(elf), str(binf)], text)
        out[n] = binf.read_bytes()
    return out


def run(cmd, text=""):
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, f"{Path(cmd[0]).name} failed:\n{proc.stderr}\n--- source\n{text}"
    return proc


def compare(tmp_path: Path, text: str, gnu_text: str | None = None) -> None:
    program = ours(text)
    bases = {n: s.base for n, s in program.sections.items() if s.data}
    names = tuple(bases)
    expected = gnu_sections(gnu_text if gnu_text is not None else text, tmp_path, bases, names)
    for n in names:
        got = bytes(program.sections[n].data)
        want = expected[n]
        if len(got) > len(want) and not any(got[len(want):]):
            got = got[:len(want)]  # our section ends padded to its alignment; objcopy stops at its size
        if got != want:
            diffs = [f"  {bases[n] + a:#x}: ours {got[a:a + 4].hex()} gnu {want[a:a + 4].hex()}"
                     for a in range(0, max(len(got), len(want)), 4) if got[a:a + 4] != want[a:a + 4]]
            raise AssertionError(f"section {n} differs:\n" + "\n".join(diffs[:20]) + f"\n--- source\n{text}")


# ---- (a) encodings --------------------------------------------------------------------------------------

FORMS = sorted(spec().instructions) + sorted(spec().pseudos)
PCREL = {n for n in FORMS
         if any(o.kind == "pcrel" for o in (spec().instructions[n].operands if n in spec().instructions
                                            else spec().pseudo_operands[n]).values())}
# A number there is an address for GNU as and for us alike, or GNU as takes only a symbol (the
# loads and stores of a symbol): use labels.
LABEL_ONLY = {"call", "tail", "call_rd", "jump", "lb_sym", "lbu_sym", "lh_sym", "lhu_sym", "lw_sym", "lwu_sym",
              "ld_sym", "sb_sym", "sh_sym", "sw_sym", "sd_sym", "flw_sym", "fld_sym", "fsw_sym", "fsd_sym"}
_NUMBER_OPERAND = re.compile(r"(?<=[,\s])[-+]?(?:0x[0-9a-fA-F]+|0b[01]+|\d+)(?=\s*(?:,|$))")
SYMBOLIC = {"la", "lla"}  # their operand is a symbol
INTERNAL = {"li_r1", "li_r2", "li_r3"}  # steps of li, not GNU mnemonics
_LAST = re.compile(r"^(.*?)([-+]?(?:0x[0-9a-fA-F]+|0b[01]+|\d+))\s*$")


@st.composite
def statement(draw, name: str, index: int, n_labels: int) -> tuple[str, str]:
    """(our text, GNU text) for one use of an instruction or pseudo, at line `index` of a program
    whose lines all carry labels L0..L{n_labels-1}."""
    near = tuple(f"L{k}" for k in range(max(0, index - 40), min(n_labels, index + 40)))
    if name in SYMBOLIC:
        rd = draw(st.sampled_from(common.reg_names(NAME)[("x", draw(st.integers(1, 31)))]))
        sym = draw(st.sampled_from(near))
        t = f"{spec().pseudos[name].mnemonic} {rd}, {sym}"
        return t, t
    w = draw(write_insn(NAME, name, 0, free_labels=near))
    text = w.text
    gtext = None
    if name in PCREL and not w.labels:
        if name in LABEL_ONLY:
            text = _NUMBER_OPERAND.sub(draw(st.sampled_from(near)), text, count=1)
        else:
            m = _LAST.match(text)
            assert m, text
            off = int(m.group(2), 0)
            gtext = f"{m.group(1)}.{'+' if off >= 0 else '-'}{abs(off)}"
    if name == "FENCE" and text.count(",") == 0 and len(text.split()) == 2:
        text += ", iorw"  # GNU as wants both sets or neither
    return text, gtext if gtext is not None else text


@st.composite
def program(draw, names) -> tuple[str, str]:
    names = list(names)
    n = len(names)
    lines_o, lines_g = [], []
    for i, name in enumerate(names):
        t, g = draw(statement(name, i, n + 1))
        lines_o.append(f"L{i}: {t}")
        lines_g.append(f"L{i}: {g}")
    lines_o.append(f"L{n}: ebreak")
    lines_g.append(f"L{n}: ebreak")
    return "\n".join(lines_o) + "\n", "\n".join(lines_g) + "\n"


PUBLIC_FORMS = [n for n in FORMS if n not in INTERNAL]


@needs_binutils
@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_every_form_matches_gnu(tmp_path_factory, data):
    """One program with every instruction and pseudo-instruction once, in random order."""
    order = data.draw(st.permutations(PUBLIC_FORMS))
    ours_text, gnu_text = data.draw(program(order))
    compare(tmp_path_factory.mktemp("gnu"), ours_text, gnu_text)


@needs_binutils
@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_random_programs_match_gnu(tmp_path_factory, data):
    names = data.draw(st.lists(st.sampled_from(PUBLIC_FORMS), min_size=1, max_size=40))
    ours_text, gnu_text = data.draw(program(names))
    compare(tmp_path_factory.mktemp("gnu"), ours_text, gnu_text)


LI_EDGES = [0, 1, -1, 2047, -2048, 2048, -2049, 0x7FFFFFFF, -0x80000000, 0x80000000, 0xFFFFFFFF, 0x7FFFF800,
            0x12345000, 0x100000000, 0x7FFFFFFFFFFFFFFF, -0x8000000000000000, 0x123456789ABCDEF0,
            -0x123456789ABCDEF0, 0x0000000100000001, 0x7FFFFFFF7FFFFFFF, 0x8000000080000000 - (1 << 64),
            0xFFFFF000, 0xFFFFF800, 0x800000000000, 0xFFF0000000000FFF - (1 << 64)]


def li_values():
    bits = st.integers(1, 64).flatmap(lambda b: st.integers(-(1 << (b - 1)), (1 << (b - 1)) - 1))
    sparse = st.lists(st.integers(0, 63), max_size=6).map(
        lambda bs: ((sum(1 << b for b in bs) + (1 << 63)) % (1 << 64)) - (1 << 63))
    return st.one_of(st.sampled_from(LI_EDGES), bits, sparse)


@needs_binutils
@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(values=st.lists(li_values(), min_size=1, max_size=60), regs=st.data())
def test_li_matches_gnu(tmp_path_factory, values, regs):
    lines = []
    for v in values:
        rd = regs.draw(st.sampled_from(["a0", "t3", "s11", "x5", "ra"]))
        lines.append(f"li {rd}, {regs.draw(numbers(v))}")
    compare(tmp_path_factory.mktemp("li"), "\n".join(lines) + "\n")


@needs_binutils
def test_li_edges_match_gnu(tmp_path):
    compare(tmp_path, "".join(f"li a0, {v}\nli t1, {hex(v) if v >= 0 else '-' + hex(-v)}\n" for v in LI_EDGES))


@needs_binutils
def test_relocations_and_sections_match_gnu(tmp_path):
    text = """
        .text
        .globl f
    f:  la     a0, table
        lla    a1, msg
    1:  auipc  a2, %pcrel_hi(table + 8)
        ld     a3, %pcrel_lo(1b)(a2)
    .Lpc: auipc a4, %pcrel_hi(count)
        sw     a5, %pcrel_lo(.Lpc)(a4)
        flw    fa0, %pcrel_lo(.Lpc)(a4)
        lui    a6, %hi(0x12345678)
        addi   a6, a6, %lo(0x12345678)
        ld     a7, %lo(table)(a6)
        sd     a7, %lo(table + 16)(a6)
        fld    fa1, %lo(pi)(a6)
        call   g
        tail   g
    g:  jal    f
        jalr   a0
        jr     a1
        j      f
        ret
        .section .rodata
        .p2align 3
    pi: .double 3.14159
    msg: .byte 1, 2, 3
        .data
        .p2align 4
    table: .dword 1, 2, 3, -4
    count: .word 7
        .half 3
        .float 1.5
        .zero 5
        .quad 0x123456789
    """
    compare(tmp_path, text)


def test_hi_of_a_ram_address_is_an_error():
    """lui + addi cannot form addresses at RAM_BASE (0x80000000) and above in RV64 (lui sign-extends);
    GNU ld refuses with 'relocation truncated to fit: R_RISCV_HI20', our assembler at %hi."""
    from kcgen.asm import AsmError
    with pytest.raises(AsmError):
        ours("lui a0, %hi(x)\naddi a0, a0, %lo(x)\nx: .word 1\n")
    assert ours("lui a0, %hi(0x7ffff7ff)\n").words(4) == [0x7ffff537]


# ---- (b) clang -O2 kernels -------------------------------------------------------------------------------

KERNELS = {
    "saxpy": "void saxpy(long n, float a, const float *x, float *restrict y)"
             " { for (long i = 0; i < n; i++) y[i] = a * x[i] + y[i]; }",
    "daxpy": "void daxpy(int n, double a, const double *x, double *restrict y)"
             " { for (int i = 0; i < n; i++) y[i] += a * x[i]; }",
    "dot": "double dot(long n, const double *x, const double *y)"
           " { double s = 0; for (long i = 0; i < n; i++) s += x[i] * y[i]; return s; }",
    "sdot": "float sdot(int n, const float *x, const float *y)"
            " { float s = 0; for (int i = 0; i < n; i++) s += x[i] * y[i]; return s; }",
    "gemm": "void gemm(int n, int m, int k, const float *A, const float *B, float *restrict C) {"
            " for (int i = 0; i < n; i++) for (int j = 0; j < m; j++) { float s = 0;"
            " for (int p = 0; p < k; p++) s += A[i * k + p] * B[p * m + j]; C[i * m + j] = s; } }",
    "dgemm": "void dgemm(long n, const double *A, const double *B, double *restrict C) {"
             " for (long i = 0; i < n; i++) for (long j = 0; j < n; j++) for (long p = 0; p < n; p++)"
             " C[i * n + j] += A[i * n + p] * B[p * n + j]; }",
    "relu": "void relu(long n, const float *x, float *restrict y)"
            " { for (long i = 0; i < n; i++) y[i] = x[i] > 0.0f ? x[i] : 0.0f; }",
    "relu_i": "void relu_i(int n, int *v) { for (int i = 0; i < n; i++) if (v[i] < 0) v[i] = 0; }",
    "scale": "static const double K[4] = {1.5, -2.25, 1e-3, 7.0};"
             " void scale(long n, double *x) { for (long i = 0; i < n; i++) x[i] = x[i] * K[i & 3] + 0.5; }",
    "hash": "unsigned long hash(const unsigned char *s, long n) { unsigned long h = 0xcbf29ce484222325UL;"
            " for (long i = 0; i < n; i++) { h ^= s[i]; h *= 0x100000001b3UL; } return h / 7 + h % 13; }",
    "cvt": "long cvt(double a, float b, int c, unsigned u) { return (long)a + (int)b + (long)(float)c"
           " + (long)(double)u + (unsigned long)(a * b); }",
}


@pytest.mark.skipif(CLANG is None, reason="clang-19 missing: apt-get install -y clang-19 lld-19 llvm-19")
@needs_binutils
@pytest.mark.parametrize("name", sorted(KERNELS))
@pytest.mark.parametrize("opt", ["-O2", "-O3"])
def test_clang_kernels_match_gnu(tmp_path, name, opt):
    c = tmp_path / f"{name}.c"
    c.write_text(KERNELS[name] + "\n")
    s = tmp_path / f"{name}.s"
    run([CLANG, "--target=riscv64-unknown-elf", "-march=rv64imfd", "-mabi=lp64d", "-mcmodel=medany", "-fno-addrsig", opt,
         "-fno-unroll-loops" if opt == "-O2" else "-funroll-loops", "-S", "-o", str(s), str(c)])
    asm = s.read_text()
    for fn in ("memset", "memcpy"):  # library calls clang may emit: a stub so both link
        if re.search(rf"\b(call|tail)\s+{fn}\b", asm):
            asm += f"\n\t.text\n{fn}:\n\tret\n"
    compare(tmp_path, asm)


# ---- (d) examples on both simulators ---------------------------------------------------------------------

def _examples():
    from kcgen.sim.examples import examples
    return examples(spec())


@pytest.mark.parametrize("machine", ["pyref", "csim"])
def test_examples(machine):
    from kcgen.sim.examples import run_example
    if machine == "pyref":
        from kcgen.sim.pyref import RefMachine as factory
    else:
        from kcgen.sim.simulator import Simulator as factory
    cases = _examples()
    assert len(cases) >= 100
    failures = [r.message() for r in (run_example(spec(), c, factory) for c in cases) if not r.ok]
    assert not failures, "\n".join(failures)


# ---- (e) ooo timing -------------------------------------------------------------------------------------

def timed(source: str, defines: dict | None = None, regs: dict | None = None):
    """The program's second run, with the caches and the predictor as its first run left them (the
    core's mechanics without cold misses; the caches have tests of their own in
    tests/sim/test_timing_microbenchmarks.py)."""
    from kcgen.sim.simulator import Simulator
    from kcgen.asm import Assembler
    sp = isadl.load(BOOM, defines=defines or {})
    sim = Simulator(sp)
    program = Assembler(sp).assemble(source, "t.s")
    sim.load(program)
    for warm in (False, True):
        sim.reset(program.entry, warm=warm)
        for r, v in (regs or {}).items():
            sim.view("x")[r] = v
        res = sim.run(1_000_000)
        assert res.status == "halted", res
    return res


def test_timing_independent_adds_fill_three_wide_dispatch():
    # 30 independent single-cycle adds + ebreak: instruction k dispatches at cycle k // WIDTH on a free
    # ALU and is ready one cycle later, so the last (k = 30) is ready at 30 // WIDTH + 1.
    body = "".join(f"addi x{5 + i % 20}, x{5 + i % 20}, 1\n" for i in range(30)) + "ebreak\n"
    large = timed(body)
    assert large.instret == 31
    assert large.cycles == 30 // 3 + 1
    small = timed(body, {"CONFIG": 1})  # SmallBoom: 1-wide
    assert small.cycles == 30 + 1


def test_timing_dependent_chains_pay_their_latency():
    res = timed("".join("mul a0, a0, a1\n" for _ in range(10)) + "ebreak\n")
    assert res.cycles == 10 * 3  # 10 x MUL_LAT
    res = timed("".join("fmadd.d fa0, fa1, fa2, fa0\n" for _ in range(8)) + "ebreak\n")
    assert res.cycles == 8 * 4  # 8 x FMA_LAT
    # four independent FMA chains share the one pipelined FP unit: step s of chain k issues at
    # 4s + k, so the last one (s = 7, k = 3) is ready at 28 + 3 + 4.
    four = "".join(f"fmadd.d fa{k}, fa5, fa6, fa{k}\n" for _ in range(8) for k in range(4)) + "ebreak\n"
    assert timed(four).cycles == 35
    # load-to-use: the load issues at 0, its result is ready at LOAD_LAT, the add at LOAD_LAT + 1
    load_use = timed("ld a0, 0(a1)\naddi a0, a0, 1\nebreak\n", regs={11: ram_base() + 0x1000})
    assert load_use.cycles == 4 + 1
    # the divider is iterative: two independent divides run one after the other, each DIV_SETUP (2) plus
    # one step per possible quotient bit: 1000 / 3 has 10 - 2 + 1 = 9, 7 / 5 has 3 - 3 + 1 = 1
    two_div = timed("div a0, a1, a2\ndiv a3, a4, a5\nebreak\n", regs={11: 1000, 12: 3, 14: 7, 15: 5})
    assert two_div.cycles == (2 + 9) + (2 + 1)


def test_timing_branch_prediction():
    # 100 iterations of a 3-instruction loop: the backward bnez is predicted taken (trained by the first
    # run) and the counter chain is one cycle per iteration; the exit (taken predicted, not taken)
    # costs MISPREDICT.
    loop = "li t0, 100\n1: addi a0, a0, 1\naddi t0, t0, -1\nbnez t0, 1b\nret\n"
    res = timed(loop)
    assert res.instret == 1 + 300 + 1
    assert 100 + spec().params["MISPREDICT"] <= res.cycles <= 100 + spec().params["MISPREDICT"] + 4


# ---- (c) execution against qemu-riscv64 -----------------------------------------------------------------

QEMU_HINT = "qemu-riscv64 missing: apt-get install -y qemu-user"
BUF = 256  # bytes of memory the random programs load from and store to, through x27
BASE, COUNTER = 27, 26  # x27 points at the buffer, x26 counts loop iterations: no random op touches them
XPOOL = [r for r in range(1, 32) if r not in (BASE, COUNTER)]
SIZES = {"LB": 1, "LBU": 1, "SB": 1, "LH": 2, "LHU": 2, "SH": 2, "LW": 4, "LWU": 4, "SW": 4, "FLW": 4,
         "FSW": 4, "LD": 8, "SD": 8, "FLD": 8, "FSD": 8}
EXCLUDED = {"JAL", "JALR", "AUIPC", "ECALL", "EBREAK", "BEQ", "BNE", "BLT", "BGE", "BLTU", "BGEU"} | {
    n for n in spec().instructions if n.startswith("CSR")}
OPS = sorted(n for n in spec().instructions if n not in EXCLUDED)
FP_OPS = [n for n in OPS if n.startswith("F") and not n.startswith("FENCE")]  # the F and D extensions
X_EDGES = [0, 1, -1, 2, 0x7FFFFFFF, -0x80000000, 0x80000000, 0xFFFFFFFF, (1 << 63) - 1, -(1 << 63), 31, 32, 63, 64]
F32_EDGES = [0.0, -0.0, 1.0, -1.5, 3.0, 0.1, 1e-40, -1e-45, 3.4e38, float("inf"), float("-inf"), float("nan"),
             2.5, -2.5, 0.5, 2147483648.0, -2147483904.0, 4294967296.0, 1e20, 9.2233720368547758e18]
F64_EDGES = [0.0, -0.0, 1.0, -1.5, 0.1, 5e-324, 2.2250738585072014e-308, 1.7976931348623157e308, float("inf"),
             float("-inf"), float("nan"), 2.5, -3.5, 4503599627370497.0, 9.2233720368547758e18, -9.3e18, 1.8e19]


def _f32_bits(v: float) -> int:
    return struct.unpack("<I", struct.pack("<f", v))[0]


def _f64_bits(v: float) -> int:
    return struct.unpack("<Q", struct.pack("<d", v))[0]


# NaNs with payloads, quiet and signalling: moves keep them, arithmetic makes them canonical (and a
# signalling one raises NV)
NAN32 = [0x7F800001, 0x7FA00000, 0x7FC12345, 0xFFC00001, 0xFF800002]
NAN64 = [0x7FF0000000000001, 0x7FF4000000000000, 0x7FF8DEAD0000BEEF, 0xFFF8000000000001, 0xFFF0000000000002]
MODES = ["rne", "rtz", "rdn", "rup", "rmm", "dyn"]


def random_state(rng: random.Random):
    xs = [0] + [rng.choice(X_EDGES) if rng.random() < 0.3 else
                rng.randrange(-64, 64) if rng.random() < 0.3 else rng.getrandbits(64) - (1 << 63) for _ in range(31)]
    fs = []
    for _ in range(32):
        r = rng.random()
        if r < 0.1:
            fs.append(0xFFFFFFFF00000000 | rng.choice(NAN32) if rng.random() < 0.5 else rng.choice(NAN64))
        elif r < 0.4:
            fs.append(0xFFFFFFFF00000000 | (_f32_bits(rng.choice(F32_EDGES)) if rng.random() < 0.5
                                            else _f32_bits(rng.uniform(-100, 100))))
        elif r < 0.85:
            fs.append(_f64_bits(rng.choice(F64_EDGES)) if rng.random() < 0.5 else _f64_bits(rng.uniform(-1e6, 1e6)))
        else:
            fs.append(rng.getrandbits(64))  # not NaN-boxed: single-precision reads see the canonical NaN
    mem = bytes(rng.getrandbits(8) for _ in range(BUF))
    return xs, fs, mem


def random_op(rng: random.Random, ops=OPS) -> str:
    name = rng.choice(ops)
    insn = spec().instructions[name]
    ops = insn.operands
    out = [insn.template.mnemonic, " "]
    for p in insn.template.parts:
        if isinstance(p, str):
            out.append(p)
            continue
        o = ops[p.name]
        if o.kind == "reg":
            if p.name == "rs1" and name in SIZES:
                out.append(f"x{BASE}")
            else:
                out.append(f"x{rng.choice(XPOOL)}" if o.regfile == "x" else f"f{rng.randrange(32)}")
        elif o.kind == "imm":
            if p.name == "off":
                out.append(str(rng.randrange(0, BUF - SIZES[name] + 1, SIZES[name])))
            else:
                out.append(str(rng.randint(o.lo, o.hi)))
        elif o.kind == "enum":
            if o.regfile == "rmode":
                out.append(rng.choice(MODES))
            else:
                out.append(rng.choice(common.enum_items(NAME)[o.regfile])[0])
        else:  # pragma: no cover
            raise AssertionError(o.kind)
    return "".join(out)


def random_fcsr_op(rng: random.Random) -> str:
    """A change of the dynamic rounding mode (never to a reserved one), or a read or write of the
    accrued flags."""
    r, k = rng.choice(XPOOL), rng.randrange(5)
    return rng.choice([f"csrwi frm, {k}", f"li x{r}, {k}\nfsrm x{r}", f"frflags x{r}", f"csrrci x{r}, fflags, {rng.randrange(32)}",
                       f"fsflags x{r}"])


def random_body(rng: random.Random, ops=OPS) -> str:
    lines = [f"csrwi frm, {rng.randrange(5)}"]  # dyn starts in a random mode
    for _ in range(rng.randint(1, 6)):
        kind = rng.random()
        block = [random_fcsr_op(rng) if rng.random() < 0.08 else random_op(rng, ops) for _ in range(rng.randint(1, 12))]
        if kind < 0.25:  # a counted loop
            lines += [f"li x{COUNTER}, {rng.randint(1, 5)}", "1:"] + block + [
                f"addi x{COUNTER}, x{COUNTER}, -1", f"bnez x{COUNTER}, 1b"]
        elif kind < 0.5:  # a forward conditional branch over part of the block
            cond = rng.choice(["beq", "bne", "blt", "bge", "bltu", "bgeu"])
            lines += [f"{cond} x{rng.choice(XPOOL)}, x{rng.choice(XPOOL)}, 2f"] + block + ["2:"]
        else:
            lines += block
    return "\n".join(lines) + "\n"


def qemu_harness(body: str, xs, fs, mem) -> str:
    """A static Linux program: set every register, run the body, write x1..x31, f0..f31 and the
    buffer to stdout, exit."""
    h = ["\t.text", "\t.globl _start", "_start:", f"\tla x{BASE}, init_x"]
    h += [f"\tld x{r}, {8 * r}(x{BASE})" for r in range(1, 32) if r != BASE]
    h += [f"\tla x{BASE}, init_f"] + [f"\tfld f{r}, {8 * r}(x{BASE})" for r in range(32)]
    h += [f"\tla x{BASE}, buf", body]
    h += [f"\tla x{BASE}, out"] + [f"\tsd x{r}, {8 * r}(x{BASE})" for r in range(1, 32) if r != BASE]
    h += [f"\tfsd f{r}, {256 + 8 * r}(x{BASE})" for r in range(32)]
    h += ["\tfrcsr x1", f"\tsd x1, 0(x{BASE})"]  # fcsr in x0's slot
    h += ["\tli a0, 1", "\tla a1, out", f"\tli a2, {512 + BUF}", "\tli a7, 64", "\tecall",
          "\tli a0, 0", "\tli a7, 93", "\tecall", "\t.data", "\t.p2align 4"]
    h += ["init_x:"] + [f"\t.dword {v & ((1 << 64) - 1):#x}" for v in xs]
    h += ["init_f:"] + [f"\t.dword {v:#x}" for v in fs]
    h += ["out:", "\t.zero 512", "buf:"] + [f"\t.byte {', '.join(str(b) for b in mem[i:i + 16])}"
                                          for i in range(0, BUF, 16)]
    return "\n".join(h) + "\n"


def run_qemu(text: str, workdir: Path) -> bytes:
    src, obj, elf = (workdir / n for n in ("q.s", "q.o", "q.elf"))
    src.write_text(text)
    run([AS, *AS_FLAGS, "-o", str(obj), str(src)], text)
    # no linker relaxation: it would turn `la` into gp-relative addressing, and gp holds random data
    run([LD, "-m", "elf64lriscv", "-static", "--no-relax", "-e", "_start", "-Ttext=0x10000", "-o", str(elf), str(obj)],
        text)
    proc = subprocess.run([QEMU, str(elf)], capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr.decode()
    assert len(proc.stdout) == 512 + BUF
    return proc.stdout


@functools.lru_cache(maxsize=None)
def csim():
    from kcgen.sim.simulator import Simulator
    return Simulator(spec())


def run_ours(body: str, xs, fs, mem, reference: bool = False):
    """Run the body on our C simulator (or the Python reference) from the given state."""
    import numpy as np
    if reference:
        from kcgen.sim.pyref import RefMachine
        sim = RefMachine(spec())
    else:
        sim = csim()
    program = ours(body + "ebreak\n")
    sim.load(program)
    buf = 0x100000  # byte index in ram of the buffer
    x, f, ram = sim.arrays["x"], sim.arrays["f"], sim.arrays["ram"]
    x[1:32] = np.array(xs[1:32], dtype=np.int64)
    x[BASE] = ram_base() + buf
    f[:] = np.array(fs, dtype=np.uint64)
    ram[buf:buf + BUF] = np.frombuffer(mem, np.uint8)
    for csr in ("frm", "fflags"):  # fcsr starts at 0, as under qemu (the C simulator is reused)
        sim.arrays[csr][...] = 0
    res = sim.run(100_000)
    assert res.status == "halted", getattr(res, "trap", res)
    got_x = [int(v) & ((1 << 64) - 1) for v in x]
    frm, fflags = (int(np.asarray(sim.arrays[n]).reshape(-1)[0]) for n in ("frm", "fflags"))
    got_x[0] = (frm << 5) | fflags  # fcsr, where the harness writes it
    got_f = [int(v) for v in f]
    return got_x, got_f, bytes(ram[buf:buf + BUF])


def differences(oracle: str, body: str, out: bytes, got) -> str:
    """The dump a harness wrote (x with fcsr in x0's slot, f, buffer) against our final state: each
    difference on a line, then the body ('' when equal)."""
    want_x = list(struct.unpack("<32Q", out[:256]))
    want_f = list(struct.unpack("<32Q", out[256:512]))
    want_mem = out[512:512 + BUF]
    got_x, got_f, got_mem = got
    bad = [f"x{r}: ours {got_x[r]:#018x} {oracle} {want_x[r]:#018x}" for r in range(1, 32)
           if r != BASE and got_x[r] != want_x[r]]
    bad += [f"fcsr: ours {got_x[0]:#x} {oracle} {want_x[0]:#x}"] if got_x[0] != want_x[0] else []
    bad += [f"f{r}: ours {got_f[r]:#018x} {oracle} {want_f[r]:#018x}" for r in range(32) if got_f[r] != want_f[r]]
    bad += [f"buf[{i}]: ours {got_mem[i]:#04x} {oracle} {want_mem[i]:#04x}" for i in range(BUF)
            if got_mem[i] != want_mem[i]]
    return "\n".join(bad[:20]) + f"\n--- body\n{body}" if bad else ""


@pytest.mark.skipif(QEMU is None, reason=QEMU_HINT)
@needs_binutils
@pytest.mark.parametrize("profile, seed", [("all", k) for k in range(40)] + [("fp", k) for k in range(40)])
def test_random_programs_match_qemu(tmp_path, profile, seed):
    """Random programs (every rounding mode, static and dyn, frm changed on the way, NaN payloads;
    the "fp" profile only F and D instructions) end in the same x, f, fcsr and memory as qemu."""
    rng = random.Random(seed if profile == "all" else f"fp{seed}")
    xs, fs, mem = random_state(rng)
    body = random_body(rng, OPS if profile == "all" else FP_OPS)
    out = run_qemu(qemu_harness(body, xs, fs, mem), tmp_path)
    got = run_ours(body, xs, fs, mem, reference=seed % 4 == 0)  # every 4th: the Python reference
    assert not (bad := differences("qemu", body, out, got)), bad


@pytest.mark.skipif(spike.MISSING is not None, reason=spike.MISSING or "")
@pytest.mark.parametrize("seed", range(30))
def test_random_fp_programs_match_spike(tmp_path, seed):
    """The "fp" profile's programs of the qemu test, second oracle: spike (riscv-isa-sim) runs the
    same harness bare-metal; x, f, fcsr and memory must equal our C simulator's."""
    rng = random.Random(f"fp{seed}")
    xs, fs, mem = random_state(rng)
    body = random_body(rng, FP_OPS)
    status, out = spike.run(qemu_harness(body, xs, fs, mem), tmp_path, isa="rv64imfd_zicsr", as_flags=AS_FLAGS, xlen=64)
    assert status == 0, f"spike exit status {status}\n--- body\n{body}"
    assert not (bad := differences("spike", body, out, run_ours(body, xs, fs, mem))), bad


ROUNDED = sorted(n for n in FP_OPS if "rm" in spec().instructions[n].operands)


@pytest.mark.skipif(QEMU is None, reason=QEMU_HINT)
@needs_binutils
def test_reserved_rounding_modes_are_illegal_like_qemu(tmp_path):
    """rm = 5 or 6, or dyn while frm is 5..7, is an illegal instruction (RISC-V 11.2) for every
    instruction with a rounding mode; qemu (SIGILL) and spike agree on a sample."""
    from kcgen.sim.pyref import RefMachine
    assert len(ROUNDED) >= 30
    rng = random.Random(3)
    machines = (RefMachine(spec()), csim())
    for name in ROUNDED:
        text = random_op(rng, [name]).rsplit(",", 1)[0] + ", rne"
        word = ours(text + "\n").words(4)[0]
        assert (word >> 12) & 7 == 0, text
        cases = [(f".word {word | (rm << 12):#x}", 0) for rm in (5, 6)] + [(f".word {word | (7 << 12):#x}", frm) for frm in (5, 7)]
        for line, frm in cases:
            for machine in machines:
                machine.load(ours(f"li t0, {frm}\nfsrm t0\n{line}\nebreak\n"))
                res = machine.run(100)
                # an undecodable word (static rm 5, 6) or the semantics' check (dyn): illegal either way
                why = str(getattr(res, "trap", res))
                assert res.status == "trap" and ("reserved rounding mode" in why or "illegal instruction" in why), \
                    (name, line, frm, res)
    xs, fs, mem = random_state(random.Random(0))
    for body in ("csrwi frm, 5\nfadd.d f1, f2, f3\n", f".word {0x02000053 | (6 << 12)}\n", "csrwi frm, 7\nfcvt.w.s a0, fa0\n"):
        src, obj, elf = (tmp_path / n for n in ("r.s", "r.o", "r.elf"))
        src.write_text(qemu_harness(body, xs, fs, mem))
        run([AS, *AS_FLAGS, "-o", str(obj), str(src)], body)
        run([LD, "-m", "elf64lriscv", "-static", "--no-relax", "-e", "_start", "-Ttext=0x10000", "-o", str(elf), str(obj)], body)
        proc = subprocess.run([QEMU, str(elf)], capture_output=True, timeout=60)
        assert proc.returncode == -4, (body, proc.returncode)  # SIGILL
        if spike.MISSING is None:  # the second oracle: the shim exits with 128 + mcause, 2 = illegal instruction
            status, _ = spike.run(qemu_harness(body, xs, fs, mem), tmp_path, isa="rv64imfd_zicsr", as_flags=AS_FLAGS, xlen=64)
            assert status == 128 + 2, (body, status)


@pytest.mark.skipif(QEMU is None, reason=QEMU_HINT)
@needs_binutils
def test_fused_multiply_adds_round_once_like_qemu(tmp_path):
    """a * b lies on a tie of f32 (1 + 2^-11 + 2^-24) and c = +-2^-60 is far below double's
    precision: one rounding goes up or down with c's sign, rounding through double would not."""
    xs, fs, mem = random_state(random.Random(0))
    box = 0xFFFFFFFF00000000
    fs[11] = fs[12] = box | _f32_bits(1 + 2.0 ** -12)
    fs[13], fs[15] = box | _f32_bits(2.0 ** -60), box | _f32_bits(-(2.0 ** -60))
    body = "".join(f"{op} f{rd}, f11, f12, f{rs3}\n" for op, rd, rs3 in (
        ("fmadd.s", 10, 13), ("fmadd.s", 14, 15), ("fmsub.s", 16, 13), ("fmsub.s", 17, 15),
        ("fnmadd.s", 18, 13), ("fnmsub.s", 19, 13), ("fnmsub.s", 20, 15)))
    out = run_qemu(qemu_harness(body, xs, fs, mem), tmp_path)
    want_f = list(struct.unpack("<32Q", out[256:512]))
    assert want_f[10] == box | _f32_bits(1 + 2.0 ** -11 + 2.0 ** -23)  # the oracle agrees with IEEE
    for reference in (False, True):
        _, got_f, _ = run_ours(body, xs, fs, mem, reference=reference)
        bad = [f"f{r}: ours {got_f[r]:#018x} qemu {want_f[r]:#018x}" for r in (10, *range(14, 21))
               if got_f[r] != want_f[r]]
        assert not bad, ("reference" if reference else "C") + ": " + ", ".join(bad)


@pytest.mark.parametrize("config, width, rob, alus, mem, fp", [
    (1, 1, 32, 1, 1, 1), (2, 2, 64, 2, 1, 1), (3, 3, 96, 3, 1, 1), (4, 4, 128, 4, 2, 2)])
def test_configurations_follow_boom_v3(config, width, rob, alus, mem, fp):
    """-D CONFIG=N selects SmallBoom .. MegaBoom (riscv-boom config-mixins.scala)."""
    p = isadl.load(BOOM, defines={"CONFIG": config}).params
    assert (p["WIDTH"], p["ROB"], p["INT_ALUS"], p["MEM_PORTS"], p["FP_PIPES"]) == (width, rob, alus, mem, fp)
    assert isadl.load(BOOM, defines={"ROB": 200}).params["ROB"] == 200
