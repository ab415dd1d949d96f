"""targets/coral.isa (Google Coral NPU: RV32IMF + Zicsr + Zbb + Zve32x) against external oracles.

(a) Encodings: every instruction and pseudo-instruction, with hypothesis-drawn operands (the
    strategies of tests/asm/common.py), assembles to the same bytes as GNU as with
    -march=rv32imf_zve32x_zicsr_zifencei_zbb. GNU as refuses some operand combinations that our
    assembler accepts (vector register-group overlaps and alignment, v0 as a masked destination);
    those lines are dropped from both sides, and a test checks that few are.
(b) Compiler output: the assembly clang-19 -O2 emits for small C kernels (tests/targets/coral/*.c)
    assembles to the same bytes as GNU as gives.
(c) Execution: random straight-line programs (scalar integer, M, Zbb, F and vector) leave the
    same architectural state on our simulators as on qemu-riscv32 (user mode; the program dumps
    its registers and a memory buffer with a write system call). The random F programs also run
    on spike (riscv-isa-sim, bare-metal through tests/targets/spike.py), a second oracle.
(d) Every `example` of the description passes on the Python reference and the C simulator.

Tools: binutils-riscv64-unknown-elf (a, b, c), clang-19 (b), qemu-user and spike + dtc (c). Each part skips
with the reason when its tool is missing.
"""
from __future__ import annotations

import functools
import os
import re
import shutil
import struct
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import isadl
from kcgen.asm import Assembler

from tests.asm import common
from tests.targets import spike

ROOT = Path(__file__).resolve().parents[2]
CORAL = ROOT / "targets" / "coral.isa"
HERE = Path(__file__).resolve().parent / "coral"
NAME = "coral"
common.FIXTURES.setdefault(NAME, CORAL)  # the strategies of tests/asm/common.py look ISAs up by name

MARCH = "rv32imf_zve32x_zicsr_zifencei_zbb"
TOOLS = {t: shutil.which(f"riscv64-unknown-elf-{t}") for t in ("as", "ld", "objcopy")}
CLANG = shutil.which("clang-19")
QEMU = shutil.which("qemu-riscv32")
GNU_MISSING = "GNU binutils for RISC-V missing: apt-get install binutils-riscv64-unknown-elf"
AS_FLAGS = [f"-march={MARCH}", "-mabi=ilp32", "-mno-relax", "-mno-arch-attr"]
QUIET = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture,
         HealthCheck.filter_too_much]


@functools.lru_cache(maxsize=None)
def coral():
    return isadl.load(CORAL)


@functools.lru_cache(maxsize=None)
def asm():
    return Assembler(coral())


def need_gnu():
    if not all(TOOLS.values()):
        pytest.skip(GNU_MISSING)


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, **kw)


def gnu_link(src: str, workdir: Path, text_base: int = 0, sections: dict | None = None) -> tuple[Path, str]:
    """Assemble with GNU as and link with text at text_base (and the named sections at the given
    addresses). Returns (elf, '') or (None, the assembler's error output)."""
    s, o, elf = workdir / "g.s", workdir / "g.o", workdir / "g.elf"
    s.write_text(src)
    p = run([TOOLS["as"], *AS_FLAGS, "-o", str(o), str(s)])
    if p.returncode:
        return None, p.stderr
    starts = [f"--section-start={n}={a:#x}" for n, a in (sections or {}).items()]
    p = run([TOOLS["ld"], "-m", "elf32lriscv", "--no-relax", "-e", str(text_base), f"-Ttext={text_base:#x}",
             *starts, "-o", str(elf), str(o)])
    assert p.returncode == 0, f"ld failed:\n{p.stderr}\n--- source\n{src}"
    return elf, ""


def section_bytes(elf: Path, name: str, workdir: Path) -> bytes:
    out = workdir / "sec.bin"
    p = run([TOOLS["objcopy"], "-O", "binary", "-j", name, str(elf), str(out)])
    assert p.returncode == 0, p.stderr
    return out.read_bytes()


# ---- (a) every instruction and pseudo against GNU as ----------------------------------------------------

def _all_forms():
    s = coral()
    insns = sorted(s.instructions)
    # la/lla/call/tail and the loads and stores of a symbol take a symbol: they are covered with labels
    # in test_symbol_pseudos_match_gnu_as and tests/asm/test_gnu_forms.py
    symbolic = {"la", "lla", "call", "tail", "call_rd", "jump", "lb_sym", "lbu_sym", "lh_sym", "lhu_sym", "lw_sym",
                "sb_sym", "sh_sym", "sw_sym", "flw_sym", "fsw_sym"}
    pseudos = sorted(p for p in s.pseudos if p not in symbolic)
    return insns + pseudos


FORMS = _all_forms()
CHUNK = 60
CHUNKS = [FORMS[i:i + CHUNK] for i in range(0, len(FORMS), CHUNK)]
DROPPED: dict[str, int] = {}
SEEN: dict[str, int] = {}


def _has_pcrel(name: str) -> bool:
    s = coral()
    ops = s.instructions[name].operands if name in s.instructions else s.pseudo_operands[name]
    return any(o.kind == "pcrel" for o in ops.values())


@st.composite
def chunk_program(draw, names):
    """(our lines, GNU lines) with one random use of each form; branch targets are the labels
    `top`/`end` of the chunk or numeric offsets (`.+N` for GNU)."""
    ours, gnu = [], []
    for n in names:
        w = draw(common.write_insn(NAME, n, 0, free_labels=("top", "end")))
        text = gtext = w.text
        if _has_pcrel(n) and not w.labels:
            head, off = text.rsplit(",", 1) if "," in text else text.split(None, 1)
            off = int(off.strip(), 0)
            sep = ", " if "," in text else " "
            gtext = f"{head}{sep}.{'+' if off >= 0 else '-'}{abs(off)}"
        ours.append((n, text))
        gnu.append(gtext)
    return ours, gnu


def _compare_chunk(tmp: Path, ours: list, gnu: list) -> None:
    keep = list(range(len(ours)))
    for _attempt in range(3):
        body_g = "\n".join(gnu[i] for i in keep)
        src_g = f"top: nop\n{body_g}\nend: nop\n"
        elf, err = gnu_link(src_g, tmp, text_base=0x100000)
        if elf is not None:
            break
        bad = {int(m.group(1)) - 2 for m in re.finditer(r"g\.s:(\d+): Error", err)}
        assert bad, err
        for k in sorted(bad):
            if 0 <= k < len(keep):
                DROPPED[ours[keep[k]][0]] = DROPPED.get(ours[keep[k]][0], 0) + 1
        keep = [i for j, i in enumerate(keep) if j not in bad]
    else:
        raise AssertionError(err)
    for i in keep:
        SEEN[ours[i][0]] = SEEN.get(ours[i][0], 0) + 1
    src_o = "top: nop\n" + "\n".join(ours[i][1] for i in keep) + "\nend: nop\n"
    got = asm().assemble(src_o, "ours.s").sections[".text"].data
    want = section_bytes(elf, ".text", tmp)
    if bytes(got) != want:
        # locate the first differing line by assembling the prefix
        lines = [ours[i][1] for i in keep]
        for k in range(len(lines)):
            pre = asm().assemble("top: nop\n" + "\n".join(lines[:k + 1]) + "\nend: nop\n", "p.s").sections[".text"].data
            n = len(pre) - 4
            if bytes(pre[:n]) != want[:n]:
                raise AssertionError(f"first difference at line {k}: {lines[k]!r} / GNU {gnu[keep[k]]!r}: "
                                     f"ours {bytes(pre[:n])[-8:].hex()} gnu {want[:n][-8:].hex()}")
        raise AssertionError("images differ")


@pytest.mark.parametrize("chunk", range(len(CHUNKS)))
# derandomized: test_gnu_refuses_few_forms needs every form accepted by GNU at least once, and a form
# whose GNU range is narrow (vmslt.vi: -15..16 of an i6, masked vd != v0) misses that in ~2 % of random runs
@settings(max_examples=6, deadline=None, derandomize=True, suppress_health_check=QUIET)
@given(data=st.data())
def test_every_form_matches_gnu_as(chunk, data):
    need_gnu()
    ours, gnu = data.draw(chunk_program(CHUNKS[chunk]))
    with tempfile.TemporaryDirectory() as d:
        _compare_chunk(Path(d), ours, gnu)


def test_gnu_refuses_few_forms():
    """The operand combinations GNU refuses (and the comparison drops) stay the exception: each
    form was compared with GNU at least once in the random runs above."""
    need_gnu()
    if not SEEN:
        pytest.skip("run together with test_every_form_matches_gnu_as")
    never = [n for n in FORMS if n not in SEEN]
    assert not never, f"never accepted by GNU as: {never}"


SYMBOLS = """
top:    la    a0, val
        lla   t1, table
        call  helper
        tail  helper
        lui   a2, %hi(val)
        lw    a3, %lo(val)(a2)
        sw    a3, %lo(val+4)(a2)
here:   auipc a4, %pcrel_hi(table)
        addi  a4, a4, %pcrel_lo(here)
        flw   fa0, %pcrel_lo(here)(a4)
        jal   helper
        beqz  a0, top
        bgtu  a0, a1, helper
helper: ret
        .data
val:    .word 1, 2
table:  .float 1.5, -2.0
"""


def test_symbol_pseudos_match_gnu_as(tmp_path):
    need_gnu()
    prog = asm().assemble(SYMBOLS, "sym.s")
    data = prog.sections[".data"]
    elf, err = gnu_link(SYMBOLS, tmp_path, 0, {".data": data.base})
    assert elf is not None, err
    assert bytes(prog.sections[".text"].data) == section_bytes(elf, ".text", tmp_path)
    assert bytes(data.data) == section_bytes(elf, ".data", tmp_path)


VECTOR_FIXED = """
    vsetvli t0, a0, e32, m1, ta, ma
    vsetvli t0, a0, e8, m8, tu, mu
    vsetvli t0, a0, e16, mf2, ta, mu
    vsetvli zero, zero, e32, m2
    vsetvli t0, a0, e8
    vsetivli zero, 31, e16, m4, ta, ma
    vsetvl t0, a0, a1
    vle8.v v8, (a0)
    vle32.v v8, (a0), v0.t
    vlse16.v v8, (a0), a1
    vluxei32.v v8, (a0), v16
    vlseg4e8.v v8, (a0)
    vl8re32.v v8, (a0)
    vs2r.v v2, (a0)
    vwmacc.vv v8, v2, v3
    vwmaccus.vx v8, a0, v3
    vnclip.wi v1, v8, 3, v0.t
    vredsum.vs v1, v8, v9
    vmerge.vxm v4, v8, a1, v0
    vmv.v.i v4, -16
    vmv4r.v v4, v8
    vmsgt.vi v0, v8, 15
    vrgatherei16.vv v4, v8, v12
    vcompress.vm v4, v8, v0
    csrr a0, vlenb
    csrr a0, vl
    csrwi vxrm, 2
    rdcycle a0
    rdinstret a1
"""


def test_vector_and_csr_forms_match_gnu_as(tmp_path):
    need_gnu()
    elf, err = gnu_link(VECTOR_FIXED, tmp_path)
    assert elf is not None, err
    assert bytes(asm().assemble(VECTOR_FIXED, "v.s").sections[".text"].data) == section_bytes(elf, ".text", tmp_path)


# ---- (b) clang-19 -O2 output ------------------------------------------------------------------------------

KERNELS = sorted(HERE.glob("*.c"))


@pytest.mark.parametrize("zvl", ["", "_zvl128b"], ids=["zve32x", "zvl128b"])
@pytest.mark.parametrize("src", KERNELS, ids=[k.stem for k in KERNELS])
def test_clang_output_matches_gnu_as(tmp_path, src, zvl):
    need_gnu()
    if CLANG is None:
        pytest.skip("clang-19 missing: apt-get install clang-19")
    s = tmp_path / (src.stem + ".s")
    p = run([CLANG, "--target=riscv32", f"-march={MARCH}{zvl}", "-mabi=ilp32", "-O2", "-ffreestanding",
             "-fno-asynchronous-unwind-tables", "-fno-addrsig", "-S", "-o", str(s), str(src)])
    assert p.returncode == 0, p.stderr
    text = s.read_text()
    prog = asm().assemble(text, s.name)
    # GNU ld's default script gathers .rodata.* into .rodata (and .data.* into .data): place those
    # output sections where our assembler put the one input section of each kind.
    out = {}
    for n, sec in prog.sections.items():
        if n != ".text" and sec.data:
            kind = next((k for k in (".rodata", ".sdata", ".data", ".srodata") if n == k or n.startswith(k + ".")), n)
            assert kind not in out, f"two sections {out[kind][0]} and {n} end up in {kind}"
            out[kind] = (n, sec)
    elf, err = gnu_link(text, tmp_path, 0, {k: sec.base for k, (n, sec) in out.items()})
    assert elf is not None, err
    assert bytes(prog.sections[".text"].data) == section_bytes(elf, ".text", tmp_path), text
    for kind, (n, sec) in out.items():
        assert bytes(sec.data) == section_bytes(elf, kind, tmp_path), n


def test_clang_vectorises_the_int8_kernels(tmp_path):
    """The C kernels really exercise the vector unit (else (b) would test only scalar code)."""
    if CLANG is None:
        pytest.skip("clang-19 missing: apt-get install clang-19")
    found = set()
    for src in KERNELS:
        s = tmp_path / (src.stem + ".s")
        run([CLANG, "--target=riscv32", f"-march={MARCH}_zvl128b", "-mabi=ilp32", "-O2", "-S", "-o", str(s), str(src)])
        found |= set(re.findall(r"^\s+(v[a-z0-9.]+)", s.read_text(), re.M))
    assert "vsetvli" in found and any(m.startswith("vle") for m in found), found


# ---- (c) execution against qemu-riscv32 -------------------------------------------------------------------

BUF = 0x100000  # DTCM base: the same address in both worlds (qemu: a .buf section linked there)
DATA, FLOATS, DUMP = 512, 1024, 2048  # offsets in the buffer: memory operands, float inputs, register dump
DUMP_BYTES = 788  # x, f, v registers, vl, vtype, vxsat, vxrm, vstart
STATE = [1, 2] + list(range(5, 31))  # registers random code reads and writes (gp, tp: buffer pointers; t6: loop counter)
QEMU_CPU = "rv32,v=true,vlen=128,elen=32,vext_spec=v1.0,zbb=true"
NICE = [k / 8 for k in range(-64, 65) if k] + [0.0, 1e6, -3e5, 0.0009765625]

R3 = ["add", "sub", "sll", "slt", "sltu", "xor", "srl", "sra", "or", "and", "mul", "mulh", "mulhsu", "mulhu",
      "div", "divu", "rem", "remu", "andn", "orn", "xnor", "min", "minu", "max", "maxu", "rol", "ror"]
RI = ["addi", "slti", "sltiu", "xori", "ori", "andi"]
RSH = ["slli", "srli", "srai", "rori"]
R1 = ["clz", "ctz", "cpop", "sext.b", "sext.h", "zext.h", "orc.b", "rev8", "neg", "not", "seqz", "snez", "zext.b"]
F3 = ["fadd.s", "fsub.s", "fmul.s", "fsgnj.s", "fsgnjn.s", "fsgnjx.s"]
F4 = ["fmadd.s", "fmsub.s", "fnmsub.s", "fnmadd.s"]
FCMP = ["feq.s", "flt.s", "fle.s"]
V_IVV = ["vadd", "vsub", "vand", "vor", "vxor", "vmin", "vmax", "vminu", "vmaxu", "vsll", "vsrl", "vsra",
         "vsadd", "vsaddu", "vssub", "vssubu", "vssrl", "vssra", "vsmul", "vmseq", "vmsne", "vmslt", "vmsltu",
         "vmsle", "vmsleu"]
V_IVX_ONLY = ["vrsub", "vmsgt", "vmsgtu"]
V_IVI = ["vadd", "vrsub", "vand", "vor", "vxor", "vsll", "vsrl", "vsra", "vsadd", "vsaddu", "vssrl", "vssra",
         "vmseq", "vmsne", "vmsle", "vmsleu", "vmsgt", "vmsgtu"]
V_MVV = ["vmul", "vmulh", "vmulhu", "vmulhsu", "vdiv", "vdivu", "vrem", "vremu", "vaadd", "vaaddu", "vasub", "vasubu"]
V_MACC = ["vmacc", "vnmsac", "vmadd", "vnmsub"]
V_RED = ["vredsum", "vredand", "vredor", "vredxor", "vredmin", "vredminu", "vredmax", "vredmaxu"]
V_WIDE = ["vwadd", "vwaddu", "vwsub", "vwsubu", "vwmul", "vwmulu", "vwmulsu", "vwmacc", "vwmaccu", "vwmaccsu"]
V_NARROW = ["vnsrl", "vnsra", "vnclip", "vnclipu"]
V_MASK = ["vmand", "vmnand", "vmandn", "vmxor", "vmor", "vmnor", "vmorn", "vmxnor"]
SHIFT_IMM = {"vsll", "vsrl", "vsra", "vssrl", "vssra"}


@st.composite
def exec_program(draw, loop: bool):
    """Random body: scalar integer, M, Zbb, F and vector instructions, forward branches."""
    regs = [r for r in STATE if not (loop and r == 31)]
    x = lambda: f"x{draw(st.sampled_from(regs))}"
    vr = lambda: draw(st.integers(0, 31))
    lines = []
    sew = None
    pending = None  # (label number, instructions until it is placed)
    n = draw(st.integers(1, 30))
    for _ in range(n):
        # a forward branch never skips a vsetivli: the vector code after it relies on its vtype
        kinds = ["r3", "ri", "rsh", "r1", "lui", "ld", "st", "f3", "f4", "fcmp", "fcvt", "fmv", "fcls", "flsw"] + \
            (["br", "vset", "vset"] if pending is None else []) + (["v"] * 6 if sew else [])
        k = draw(st.sampled_from(kinds))
        if k == "r3":
            lines.append(f"{draw(st.sampled_from(R3))} {x()}, {x()}, {x()}")
        elif k == "ri":
            lines.append(f"{draw(st.sampled_from(RI))} {x()}, {x()}, {draw(st.integers(-2048, 2047))}")
        elif k == "rsh":
            lines.append(f"{draw(st.sampled_from(RSH))} {x()}, {x()}, {draw(st.integers(0, 31))}")
        elif k == "r1":
            lines.append(f"{draw(st.sampled_from(R1))} {x()}, {x()}")
        elif k == "lui":
            lines.append(f"{draw(st.sampled_from(['lui', 'li']))} {x()}, {draw(st.integers(0, 0xfffff))}")
        elif k == "ld":
            op, size = draw(st.sampled_from([("lb", 1), ("lbu", 1), ("lh", 2), ("lhu", 2), ("lw", 4)]))
            lines.append(f"{op} {x()}, {DATA + size * draw(st.integers(0, 511 // size))}(tp)")
        elif k == "st":
            op, size = draw(st.sampled_from([("sb", 1), ("sh", 2), ("sw", 4)]))
            lines.append(f"{op} {x()}, {DATA + size * draw(st.integers(0, 511 // size))}(tp)")
        elif k == "f3":
            lines.append(f"{draw(st.sampled_from(F3))} f{vr()}, f{vr()}, f{vr()}")
        elif k == "f4":
            lines.append(f"{draw(st.sampled_from(F4))} f{vr()}, f{vr()}, f{vr()}, f{vr()}")
        elif k == "fcmp":
            lines.append(f"{draw(st.sampled_from(FCMP))} {x()}, f{vr()}, f{vr()}")
        elif k == "fcvt":  # float -> int only from a value just made from an int (never NaN)
            f = vr()
            lines.append(f"fcvt.s.{draw(st.sampled_from(['w', 'wu']))} f{f}, {x()}")
            lines.append(f"fcvt.{draw(st.sampled_from(['w', 'wu']))}.s {x()}, f{f}, rtz")
        elif k == "fmv":
            lines.append(f"fmv.x.w {x()}, f{vr()}")
        elif k == "fcls":
            lines.append(f"fclass.s {x()}, f{vr()}")
        elif k == "flsw":  # only the float area: a NaN payload loaded from random bytes would be canonical here
            off = FLOATS + 4 * draw(st.integers(0, 31))
            lines.append(f"{draw(st.sampled_from(['flw', 'fsw']))} f{vr()}, {off}(tp)")
        elif k == "br":
            label = draw(st.integers(2, 8))
            a, b = x(), x()
            lines.append(f"{draw(st.sampled_from(['beq', 'bne', 'blt', 'bge', 'bltu', 'bgeu']))} {a}, {b}, {label}f")
            pending = (label, draw(st.integers(1, 3)))
            continue
        elif k == "vset":
            e = draw(st.sampled_from([8, 16, 32]))
            lm = draw(st.sampled_from(LMULS[e]))
            sew = (e, int(lm[1:]) if lm[1:].isdigit() else 1)
            lines.append(f"vsetivli x{draw(st.sampled_from([0] + regs))}, {draw(st.integers(0, 31))}, e{e}, {lm}, tu, mu")
            lines.append(f"csrwi vxrm, {draw(st.integers(0, 3))}")
        else:
            lines.extend(draw(vector_insn(sew, x, vr)))
        if pending is not None:
            pending = (pending[0], pending[1] - 1)
            if pending[1] == 0:
                lines.append(f"{pending[0]}:")
                pending = None
    if pending is not None:
        lines.append(f"{pending[0]}:")
    return lines


LMULS = {8: ["mf4", "mf2", "m1", "m2", "m4", "m8"], 16: ["mf2", "m1", "m2", "m4", "m8"], 32: ["m1", "m2", "m4", "m8"]}


@st.composite
def vector_insn(draw, vt, x, vr):
    """One legal vector instruction for vtype vt = (sew, registers per group): group operands
    aligned to LMUL, no overlaps that RVV forbids (qemu raises SIGILL on those)."""
    sew, g = vt
    masked = draw(st.booleans())
    m = ", v0.t" if masked else ""
    span = lambda r, n: set(range(r, r + n))
    grp = lambda n=g, avoid=(), lo=0: draw(st.sampled_from(
        [r for r in range(lo, 32, n) if not span(r, n) & set(avoid)] or [None]))
    vd = grp(lo=g if masked else 0)
    a, b = grp(), grp()
    k = draw(st.sampled_from(["vv", "vx", "vi", "m", "macc", "red", "wide", "narrow", "mask", "cmp", "mv", "slide",
                              "gather", "mem", "xs", "misc"]))
    if k == "vv":
        return [f"{draw(st.sampled_from(V_IVV[:19]))}.vv v{vd}, v{a}, v{b}{m}"]
    if k == "vx":
        return [f"{draw(st.sampled_from(V_IVV[:19] + ['vrsub']))}.vx v{vd}, v{a}, {x()}{m}"]
    if k == "vi":
        op = draw(st.sampled_from(V_IVI[:12]))
        imm = draw(st.integers(0, 31)) if op in SHIFT_IMM else draw(st.integers(-16, 15))
        return [f"{op}.vi v{vd}, v{a}, {imm}{m}"]
    if k == "cmp":  # a mask destination outside the source groups
        vd = draw(st.sampled_from([r for r in range(1 if masked else 0, 32) if r not in span(a, g) | span(b, g)]))
        op = draw(st.sampled_from(V_IVV[19:] + V_IVX_ONLY[1:] + V_IVI[12:]))
        forms = [f"{op}.vx v{vd}, v{a}, {x()}{m}"]
        if op in V_IVV:
            forms.append(f"{op}.vv v{vd}, v{a}, v{b}{m}")
        if op in V_IVI:
            forms.append(f"{op}.vi v{vd}, v{a}, {draw(st.integers(-16, 15))}{m}")
        return [draw(st.sampled_from(forms))]
    if k == "m":
        op = draw(st.sampled_from(V_MVV))
        return [f"{op}.vv v{vd}, v{a}, v{b}{m}" if draw(st.booleans()) else f"{op}.vx v{vd}, v{a}, {x()}{m}"]
    if k == "macc":
        op = draw(st.sampled_from(V_MACC))
        return [f"{op}.vv v{vd}, v{a}, v{b}{m}" if draw(st.booleans()) else f"{op}.vx v{vd}, {x()}, v{b}{m}"]
    if k == "red":
        return [f"{draw(st.sampled_from(V_RED))}.vs v{vr()}, v{a}, v{vr()}{m}"]
    if k in ("wide", "narrow") and (sew == 32 or g == 8):
        return []
    if k == "wide":  # vd: a 2*LMUL group that overlaps neither source
        vd = grp(2 * g, avoid=span(a, g) | span(b, g), lo=2 * g if masked else 0)
        if vd is None:
            return []
        op = draw(st.sampled_from(V_WIDE))
        if op.startswith("vwmacc"):
            return [f"{op}.vv v{vd}, v{a}, v{b}{m}"]
        return [f"{op}.vv v{vd}, v{a}, v{b}{m}" if draw(st.booleans()) else f"{op}.vx v{vd}, v{a}, {x()}{m}"]
    if k == "narrow":  # vs2: a 2*LMUL group that vd does not overlap
        s2 = grp(2 * g, avoid=span(vd, g))
        if s2 is None:
            return []
        op = draw(st.sampled_from(V_NARROW))
        form = draw(st.sampled_from(["wv", "wx", "wi"]))
        last = {"wv": f"v{b}", "wx": x(), "wi": str(draw(st.integers(0, 31)))}[form]
        return [f"{op}.{form} v{vd}, v{s2}, {last}{m}"]
    if k == "mask":
        return [f"{draw(st.sampled_from(V_MASK))}.mm v{vr()}, v{vr()}, v{vr()}"]
    if k == "mv":
        return [draw(st.sampled_from([f"vmv.v.v v{vd}, v{a}", f"vmv.v.x v{vd}, {x()}", f"vmv.v.i v{vd}, {draw(st.integers(-16, 15))}",
                                      f"vmerge.vvm v{grp(lo=g)}, v{a}, v{b}, v0", f"vmerge.vxm v{grp(lo=g)}, v{a}, {x()}, v0",
                                      f"vmv.s.x v{vr()}, {x()}", f"vmv1r.v v{vr()}, v{vr()}"]))]
    if k == "slide":
        a = grp(avoid=span(vd, g))
        return [draw(st.sampled_from([f"vslideup.vx v{vd}, v{a}, {x()}{m}", f"vslideup.vi v{vd}, v{a}, {draw(st.integers(0, 31))}{m}",
                                      f"vslidedown.vx v{vd}, v{a}, {x()}{m}", f"vslidedown.vi v{vd}, v{a}, {draw(st.integers(0, 31))}{m}",
                                      f"vslide1up.vx v{vd}, v{a}, {x()}{m}", f"vslide1down.vx v{vd}, v{a}, {x()}{m}"]))]
    if k == "gather":
        a, b = grp(avoid=span(vd, g)), grp(avoid=span(vd, g))
        return [draw(st.sampled_from([f"vrgather.vv v{vd}, v{a}, v{b}{m}", f"vrgather.vx v{vd}, v{a}, {x()}{m}",
                                      f"vrgather.vi v{vd}, v{a}, {draw(st.integers(0, 31))}{m}"]))]
    if k == "mem":
        off = DATA + draw(st.integers(0, 60)) * 4
        pre = f"addi t5, tp, {off}"
        if draw(st.booleans()):
            return [pre, f"{draw(st.sampled_from(['vle', 'vse']))}{sew}.v v{vd}, (t5){m}"]
        return [pre, f"li t4, {draw(st.integers(-4, 8))}", f"{draw(st.sampled_from(['vlse', 'vsse']))}{sew}.v v{vd}, (t5), t4{m}"]
    if k == "xs":
        return [draw(st.sampled_from([f"vmv.x.s {x()}, v{vr()}", f"vcpop.m {x()}, v{vr()}{m}", f"vfirst.m {x()}, v{vr()}{m}"]))]
    forms = [f"vid.v v{vd}{m}"]
    if sew >= 16 and g >= 1:  # vsext.vf2: vs2 has EMUL = LMUL/2 and must not overlap vd
        h = max(1, g // 2)
        s2 = grp(h, avoid=span(vd, g))
        if s2 is not None:
            forms.append(f"vsext.vf2 v{vd}, v{s2}{m}")
    if sew == 32:
        q = max(1, g // 4)
        s2 = grp(q, avoid=span(vd, g))
        if s2 is not None:
            forms.append(f"vzext.vf4 v{vd}, v{s2}{m}")
    return [draw(st.sampled_from(forms))]


def prelude(xs, fs_count=32):
    out = [f"li tp, {BUF:#x}", f"li gp, {BUF + DUMP:#x}"]
    for k in range(4):
        out += [f"addi t0, tp, {128 * k}", f"vl8re8.v v{8 * k}, (t0)"]
    out += [f"flw f{k}, {FLOATS + 4 * k}(tp)" for k in range(fs_count)]
    out += [f"li x{r}, {v}" for r, v in zip(STATE + [31], xs)]
    return out


# vstart first: the whole-register stores of the dump start at element vstart, and reset it
QEMU_TAIL = [f"sw x{r}, {4 * r}(gp)" for r in range(1, 32)] + [f"fsw f{k}, {128 + 4 * k}(gp)" for k in range(32)] + \
    ["csrr t0, vstart", "sw t0, 784(gp)", "csrwi vstart, 0"] + [f"addi t0, gp, {256 + 128 * k}\nvs8r.v v{8 * k}, (t0)" for k in range(4)] + \
    ["csrr t0, vl", "sw t0, 768(gp)", "csrr t0, vtype", "sw t0, 772(gp)", "csrr t0, vxsat", "sw t0, 776(gp)",
     "csrr t0, vxrm", "sw t0, 780(gp)",
     "li a7, 64", "li a0, 1", f"li a1, {BUF:#x}", f"li a2, {DUMP + DUMP_BYTES}", "ecall", "li a7, 93", "li a0, 0", "ecall"]


def buffer_bytes(seed_bytes: bytes, floats: list) -> bytes:
    b = bytearray(seed_bytes[:FLOATS].ljust(FLOATS, b"\0"))
    b += b"".join(struct.pack("<f", f) for f in floats)
    return bytes(b)


def run_qemu(src_lines: list, init: bytes, tmp: Path) -> bytes:
    body = "\n".join(src_lines)
    data = ", ".join(str(c) for c in init)
    src = (f"    .text\n    .globl _start\n_start:\n{body}\n" + "\n".join(QEMU_TAIL) +
           f"\n    .section .buf,\"aw\",@progbits\n    .byte {data}\n    .zero {DUMP + 1024 - len(init)}\n")
    elf, err = gnu_link(src, tmp, 0x10000, {".buf": BUF})
    assert elf is not None, err
    p = subprocess.run([QEMU, "-cpu", QEMU_CPU, str(elf)], capture_output=True, timeout=30)
    assert p.returncode == 0, p.stderr.decode() + "\n" + src
    return p.stdout


def run_ours(src_lines: list, init: bytes, machine_cls):
    m = machine_cls(coral())
    m.load(asm().assemble("\n".join(src_lines) + "\nebreak\n", "rand.s"))
    dtcm = m.arrays["dtcm"]
    dtcm[:len(init)] = np.frombuffer(init, dtype=np.uint8)
    r = m.run(100_000)
    status = r.status if hasattr(r, "status") else r
    assert status == "halted", (status, getattr(r, "trap", None))
    a = m.arrays
    return {"x": [int(a["x"][i]) & 0xffffffff for i in range(32)],
            "f": [int(v) & 0xffffffff for v in a["f"]],
            "v": bytes(np.asarray(a["v"]).astype(np.uint8).tobytes()),
            "vl": int(a["vl"][0]) if a["vl"].shape else int(a["vl"]),
            "vtype": int(a["vtype"][0]) if a["vtype"].shape else int(a["vtype"]),
            **{k: int(a[k][0]) if a[k].shape else int(a[k]) for k in ("vxsat", "vxrm", "vstart")},
            "mem": bytes(np.asarray(dtcm[DATA:DUMP]).tobytes())}


def parse_dump(raw: bytes) -> dict:
    d = raw[DUMP:]
    words = struct.unpack(f"<{DUMP_BYTES // 4}I", d[:DUMP_BYTES])
    return {"x": [0] + list(words[1:32]), "f": list(words[32:64]), "v": d[256:768], "vl": words[192],
            "vtype": words[193], "vxsat": words[194], "vxrm": words[195], "vstart": words[196], "mem": raw[DATA:DUMP]}


def state_differences(who: str, got: dict, want: dict) -> list[str]:
    """Each difference between our state and qemu's, one line each ([] when equal)."""
    out = []
    for key in ("x", "f"):
        out += [f"{who}: {key}{i}: ours {g:#x} qemu {w:#x}" for i, (g, w) in enumerate(zip(got[key], want[key])) if g != w]
    out += [f"{who}: {key}: ours {got[key]:#x} qemu {want[key]:#x}" for key in ("vl", "vtype", "vxsat", "vxrm", "vstart")
            if got[key] != want[key]]
    for r in range(32):
        g, w = got["v"][16 * r:16 * r + 16], want["v"][16 * r:16 * r + 16]
        if g != w:
            out.append(f"{who}: v{r}: ours {g[::-1].hex()} qemu {w[::-1].hex()} (element 0 on the right)")
    bad = [i for i in range(len(want["mem"])) if got["mem"][i] != want["mem"][i]]
    if bad:
        out.append(f"{who}: memory bytes {DATA + bad[0]}..{DATA + bad[-1]} ({len(bad)}) differ, first: ours "
                   f"{got['mem'][bad[0]]:#x} qemu {want['mem'][bad[0]]:#x}")
    return out


def machines():
    from kcgen.sim.pyref import RefMachine
    from kcgen.sim.simulator import Simulator
    return [RefMachine, Simulator]


@pytest.mark.parametrize("loop", [False, True], ids=["straight", "loop"])
@settings(max_examples=30, deadline=None, derandomize=True, suppress_health_check=QUIET)
@given(data=st.data())
def test_random_programs_match_qemu(loop, data):
    need_gnu()
    if QEMU is None:
        pytest.skip("qemu-riscv32 missing: apt-get install qemu-user")
    body = data.draw(exec_program(loop), label="body")
    xs = data.draw(st.lists(st.integers(0, 2 ** 32 - 1), min_size=len(STATE) + 1, max_size=len(STATE) + 1), label="x")
    init = buffer_bytes(data.draw(st.binary(min_size=FLOATS, max_size=FLOATS), label="mem"),
                        data.draw(st.lists(st.sampled_from(NICE), min_size=32, max_size=32), label="f"))
    lines = prelude(xs)
    if loop:
        lines += [f"li t6, {data.draw(st.integers(1, 4))}", "9:"] + body + ["addi t6, t6, -1", "bnez t6, 9b"]
    else:
        lines += body
    with tempfile.TemporaryDirectory() as d:
        want = parse_dump(run_qemu(lines, init, Path(d)))
    for cls in machines():
        diff = state_differences(cls.__name__, run_ours(lines, init, cls), want)
        assert not diff, "\n".join(diff[:8] + ["--- program"] + lines)


# Vector programs of tests/targets/coral_vector_programs.py: every vector instruction coral has,
# every legal SEW/LMUL, ta/tu, ma/mu, masks, vl 0..VLMAX and AVL > VLMAX, vxrm/vxsat, vstart. 8 x 40 fixed
# seeds here (about 25 s); the module's command line runs thousands offline.
# The last two chunks also write vstart before some instructions.
VECTOR_SEED_CHUNKS = [(range(k * 40, (k + 1) * 40), k >= 6) for k in range(8)]


@pytest.mark.parametrize("seeds,vstart", VECTOR_SEED_CHUNKS,
                         ids=[f"seeds{r.start}-{r.stop - 1}{'-vstart' if v else ''}" for r, v in VECTOR_SEED_CHUNKS])
def test_random_vector_programs_match_qemu(tmp_path, seeds, vstart):
    need_gnu()
    if QEMU is None:
        pytest.skip("qemu-riscv32 missing: apt-get install qemu-user")
    from tests.targets import coral_vector_programs as cvp
    for seed in seeds:
        body = cvp.program(seed, vstart=vstart)
        diff = cvp.differences(body, *cvp.inputs(seed), tmp_path)
        assert diff is not None, f"seed {seed}: qemu refuses the program (the generator drew an illegal one)\n" + "\n".join(body)
        assert not diff, f"seed {seed}:\n" + "\n".join(diff[:8] + ["--- program"] + body)


# Minimised programs of differences found against qemu, each fixed (see the Deviations text).
VECTOR_REGRESSIONS = {
    # a widening destination at LMUL = 1/2 is one register (EMUL 1): any register, not an even one
    # (RVV 1.0 section 3.4.2, 5.2); we trapped "not aligned to 2*LMUL"
    "widen_fractional_lmul_odd_vd": ["vsetivli x0, 8, e8, mf2, tu, mu", "vwsub.vx v19, v22, x7",
                                     "vwmaccu.vv v3, v4, v5", "vwadd.wv v9, v9, v6"],
    # vstart (RVV 1.0 section 3.7): elements below it are kept, whatever the instruction, and it is
    # reset to 0 afterwards; whole-register forms count it in elements of their EEW (vmv<n>r: SEW).
    # We ignored it (and left it set). Each vstart here is below vl: qemu 7.2 leaves vstart >= vl
    # set, and any vstart after vslideup, vmv.x.s and vmv.s.x, which the spec says must be reset.
    "vstart_resumes": ["vsetivli x0, 10, e8, m1, tu, mu", "csrwi vstart, 3", "vadd.vv v1, v2, v3",
                       "csrwi vstart, 2", "vmand.mm v4, v5, v6", "csrwi vstart, 5", "vmerge.vxm v7, v8, x7, v0",
                       "addi t5, tp, 600", "csrwi vstart, 1", "vse8.v v9, (t5)", "csrwi vstart, 4", "vle8.v v10, (t5), v0.t",
                       "csrwi vstart, 2", "vl2re32.v v12, (t5)", "csrwi vstart, 3", "vs1r.v v13, (t5)",
                       "vsetivli x0, 4, e16, m1, tu, mu", "csrwi vstart, 1", "vmv2r.v v14, v16",
                       "csrwi vstart, 2", "vlseg2e16.v v18, (t5)", "csrwi vstart, 1", "vslidedown.vi v20, v21, 1"],
}


@pytest.mark.parametrize("op", ["vredsum.vs v1, v2, v3", "vwredsumu.vs v1, v2, v3", "vcpop.m x6, v2",
                                "vfirst.m x6, v2", "viota.m v1, v2", "vcompress.vm v1, v2, v3", "vmsbf.m v1, v2",
                                "vmsif.m v1, v2", "vmsof.m v1, v2"])
def test_vstart_nonzero_traps_where_qemu_refuses(tmp_path, op):
    """RVV 1.0 sections 14, 15.2-15.6, 15.8, 16.5: these raise an illegal instruction when vstart != 0."""
    body = ["vsetivli x0, 8, e8, m1, tu, mu", "csrwi vstart, 1", op]
    _refused_and_trapped(tmp_path, body, body[:1] + body[2:], seed=2)  # with vstart 0 it runs


def _refused_and_trapped(tmp_path, bad: list[str], good: list[str], seed: int) -> None:
    """qemu refuses `bad` (an illegal instruction) and both our simulators trap on it; `good`, its
    legal twin, runs as on qemu."""
    need_gnu()
    if QEMU is None:
        pytest.skip("qemu-riscv32 missing: apt-get install qemu-user")
    from tests.targets import coral_vector_programs as cvp
    assert cvp.differences(bad, *cvp.inputs(seed), tmp_path) is None
    assert cvp.differences(good, *cvp.inputs(seed), tmp_path) == []
    for cls in machines():
        m = cls(coral())
        m.load(asm().assemble("\n".join(bad) + "\nebreak\n", "v.s"))
        r = m.run(100)
        assert (r.status if hasattr(r, "status") else r) == "trap", cls.__name__


# Operands RVV 1.0 reserves (qemu: illegal instruction), each with a legal twin that runs as on
# qemu; the vtype they run under.
M1, M4 = "vsetivli x0, 8, e8, m1, tu, mu", "vsetivli x0, 8, e8, m4, tu, mu"
RESERVED_OPERANDS = {
    "vadc_vd_v0": (M1, "vadc.vvm v0, v2, v4, v0", "vadc.vvm v1, v2, v4, v0"),  # 11.4: v0 holds the carries
    "vsbc_vd_v0": (M1, "vsbc.vxm v0, v2, x7, v0", "vsbc.vxm v6, v2, x7, v0"),
    "vmsbf_vd_is_source": (M1, "vmsbf.m v2, v2", "vmsbf.m v3, v2"),  # 15.4-15.6: vd overlaps neither vs2
    "vmsif_masked_vd_v0": (M1, "vmsif.m v0, v2, v0.t", "vmsif.m v1, v2, v0.t"),  # ... nor, when masked, v0
    "vmsof_vd_is_source": (M1, "vmsof.m v5, v5, v0.t", "vmsof.m v4, v5, v0.t"),
    # 7.8: EMUL * NFIELDS <= 8 (here 4 * 3)
    "vlsseg_too_many_fields": (M4, "vlsseg3e8.v v8, (t5), x0", "vlsseg2e8.v v8, (t5), x0"),
    "vssseg_too_many_fields": (M4, "vssseg3e8.v v8, (t5), x0", "vssseg2e8.v v8, (t5), x0"),
    "vluxseg_too_many_fields": (M4, "vluxseg3ei8.v v8, (t5), v4", "vluxseg2ei8.v v8, (t5), v4"),
    "vsoxseg_too_many_fields": (M4, "vsoxseg3ei8.v v8, (t5), v4", "vsoxseg2ei8.v v8, (t5), v4"),
    "vlseg_too_many_fields": (M4, "vlseg3e8.v v8, (t5)", "vlseg2e8.v v8, (t5)"),
    "vsseg_too_many_fields": (M4, "vsseg3e8.v v8, (t5)", "vsseg2e8.v v8, (t5)"),
    # 5.3: a masked instruction's destination (other than a mask or a reduction's scalar) cannot overlap v0
    "vadd_masked_vd_v0": (M1, "vadd.vv v0, v1, v2, v0.t", "vadd.vv v3, v1, v2, v0.t"),
    "vmacc_masked_vd_v0": (M1, "vmacc.vx v0, x7, v2, v0.t", "vmacc.vx v1, x7, v2, v0.t"),
    "vmerge_vd_v0": (M1, "vmerge.vim v0, v1, 3, v0", "vmerge.vim v1, v1, 3, v0"),
    "vle_masked_vd_v0": (M1, "vle8.v v0, (t5), v0.t", "vle8.v v1, (t5), v0.t"),
    "vlse_masked_vd_v0": (M4, "vlse8.v v0, (t5), x0, v0.t", "vlse8.v v4, (t5), x0, v0.t"),
    "vloxei_masked_vd_v0": (M1, "vloxei8.v v0, (t5), v2, v0.t", "vloxei8.v v1, (t5), v2, v0.t"),
    "vlseg_masked_vd_v0": (M1, "vlseg2e8.v v0, (t5), v0.t", "vlseg2e8.v v2, (t5), v0.t"),
    "vid_masked_vd_v0": (M4, "vid.v v0, v0.t", "vid.v v4, v0.t"),
    "viota_masked_vd_v0": (M1, "viota.m v0, v2, v0.t", "viota.m v1, v2, v0.t"),
    "vwadd_masked_vd_v0": (M1, "vwadd.vx v0, v2, x7, v0.t", "vwadd.vx v4, v2, x7, v0.t"),
    "vnsrl_masked_vd_v0": (M1, "vnsrl.wi v0, v2, 1, v0.t", "vnsrl.wi v1, v2, 1, v0.t"),
    "vzext_masked_vd_v0": ("vsetivli x0, 8, e16, m1, tu, mu", "vzext.vf2 v0, v2, v0.t", "vzext.vf2 v1, v2, v0.t"),
    "vslidedown_masked_vd_v0": (M1, "vslidedown.vi v0, v2, 1, v0.t", "vslidedown.vi v1, v2, 1, v0.t"),
    "vrgather_masked_vd_v0": (M1, "vrgather.vx v0, v2, x7, v0.t", "vrgather.vx v1, v2, x7, v0.t"),
    # 5.2: a destination of another EEW overlaps a source only in the highest (widening, extension) or
    # lowest (narrowing, mask results) part; slides up, gathers, compress and viota not at all
    "vwadd_vd_low_half_on_source": (M1, "vwadd.vv v4, v4, v6", "vwadd.vv v4, v5, v6"),
    "vwmacc_vd_low_half_on_source": (M1, "vwmacc.vx v4, x7, v4", "vwmacc.vx v4, x7, v5"),
    "vwadd_wv_narrow_on_low_half": (M1, "vwadd.wv v4, v6, v4", "vwadd.wv v4, v6, v5"),
    "vwmul_fractional_overlap": ("vsetivli x0, 4, e8, mf2, tu, mu", "vwmul.vv v4, v4, v6", "vwmul.vv v4, v5, v6"),
    "vnsrl_vd_high_part_of_source": (M1, "vnsrl.wv v5, v4, v7", "vnsrl.wv v4, v4, v7"),
    "vzext_source_low_part": ("vsetivli x0, 8, e16, m2, tu, mu", "vzext.vf2 v4, v4", "vzext.vf2 v4, v5"),
    "vsext_vf4_source_low_part": ("vsetivli x0, 8, e32, m4, tu, mu", "vsext.vf4 v4, v4", "vsext.vf4 v4, v7"),
    "vmseq_vd_high_register_of_source": ("vsetivli x0, 8, e8, m2, tu, mu", "vmseq.vv v5, v4, v2", "vmseq.vv v4, v4, v2"),
    "vmadc_vd_high_register_of_source": ("vsetivli x0, 8, e8, m2, tu, mu", "vmadc.vvm v3, v4, v2, v0", "vmadc.vvm v2, v4, v2, v0"),
    "vslideup_vd_on_source": (M1, "vslideup.vi v4, v4, 1", "vslideup.vi v4, v5, 1"),
    "vslide1up_vd_on_source": (M1, "vslide1up.vx v4, v4, x7", "vslide1down.vx v4, v4, x7"),
    "vrgather_vd_on_index": (M1, "vrgather.vv v4, v5, v4", "vrgather.vv v4, v5, v6"),
    "vrgatherei16_vd_on_index": (M1, "vrgatherei16.vv v4, v6, v4", "vrgatherei16.vv v4, v6, v2"),
    "vcompress_vd_on_mask": (M1, "vcompress.vm v4, v5, v4", "vcompress.vm v4, v5, v6"),
    "viota_vd_on_source": (M1, "viota.m v4, v4", "viota.m v4, v5"),
    "vloxseg_vd_on_index": (M1, "vloxseg2ei8.v v4, (t5), v5", "vloxseg2ei8.v v4, (t5), v6"),
}


@pytest.mark.parametrize("name", list(RESERVED_OPERANDS))
def test_reserved_operands_trap_where_qemu_refuses(tmp_path, name):
    vset, bad, good = RESERVED_OPERANDS[name]
    setup = [vset, "addi t5, tp, 600"]
    _refused_and_trapped(tmp_path, setup + [bad], setup + [good], seed=3)


@pytest.mark.parametrize("name", list(VECTOR_REGRESSIONS))
def test_vector_regressions_match_qemu(tmp_path, name):
    need_gnu()
    if QEMU is None:
        pytest.skip("qemu-riscv32 missing: apt-get install qemu-user")
    from tests.targets import coral_vector_programs as cvp
    diff = cvp.differences(VECTOR_REGRESSIONS[name], *cvp.inputs(1), tmp_path)
    assert diff == [], diff


# F in every rounding mode (static, and dyn through frm changed on the way) with NaN payloads: x, f, fcsr
# and the float area compared with qemu
F_MODES = ["", ", rne", ", rtz", ", rdn", ", rup", ", rmm", ", dyn"]
F_EDGES = [0x00000000, 0x80000000, 0x00000001, 0x807FFFFF, 0x00800000, 0x7F7FFFFF, 0xFF7FFFFF, 0x7F800000,
           0xFF800000, 0x3F800000, 0x3F800001, 0x4B800000, 0xCF000000, 0x4F800000, 0x3F000000, 0xBFC00000]
F_NANS = [0x7FC00000, 0x7F800001, 0x7FA00000, 0x7FC12345, 0xFFC00001, 0xFF800002]
FP_TAIL = [f"sw x{r}, {4 * r}(gp)" for r in range(1, 32)] + [f"fsw f{k}, {128 + 4 * k}(gp)" for k in range(32)] + \
    ["frcsr t0", "sw t0, 0(gp)",  # fcsr in x0's slot
     "li a7, 64", "li a0, 1", f"li a1, {BUF + FLOATS:#x}", f"li a2, {DUMP - FLOATS + 256}", "ecall", "li a7, 93", "li a0, 0", "ecall"]


@st.composite
def fp_program(draw):
    """Random F code: every instruction, rounding mode and frm change a kernel may use."""
    x = lambda: f"x{draw(st.sampled_from(STATE))}"
    f = lambda: f"f{draw(st.integers(0, 31))}"
    rm = lambda: draw(st.sampled_from(F_MODES))
    lines = [f"csrwi frm, {draw(st.integers(0, 4))}"]
    for _ in range(draw(st.integers(1, 30))):
        k = draw(st.sampled_from(["f3", "f3", "f4", "f4", "sqrt", "sgn", "minmax", "cmp", "f2i", "f2i", "i2f", "mv",
                                  "cls", "flsw", "frm", "fflags"]))
        if k == "f3":
            lines.append(f"{draw(st.sampled_from(['fadd.s', 'fsub.s', 'fmul.s', 'fdiv.s']))} {f()}, {f()}, {f()}{rm()}")
        elif k == "f4":
            lines.append(f"{draw(st.sampled_from(F4))} {f()}, {f()}, {f()}, {f()}{rm()}")
        elif k == "sqrt":
            lines.append(f"fsqrt.s {f()}, {f()}{rm()}")
        elif k == "sgn":
            lines.append(f"{draw(st.sampled_from(['fsgnj.s', 'fsgnjn.s', 'fsgnjx.s']))} {f()}, {f()}, {f()}")
        elif k == "minmax":
            lines.append(f"{draw(st.sampled_from(['fmin.s', 'fmax.s']))} {f()}, {f()}, {f()}")
        elif k == "cmp":
            lines.append(f"{draw(st.sampled_from(FCMP))} {x()}, {f()}, {f()}")
        elif k == "f2i":
            lines.append(f"{draw(st.sampled_from(['fcvt.w.s', 'fcvt.wu.s']))} {x()}, {f()}{rm()}")
        elif k == "i2f":
            lines.append(f"{draw(st.sampled_from(['fcvt.s.w', 'fcvt.s.wu']))} {f()}, {x()}{rm()}")
        elif k == "mv":
            lines.append(draw(st.sampled_from([f"fmv.x.w {x()}, {f()}", f"fmv.w.x {f()}, {x()}"])))
        elif k == "cls":
            lines.append(f"fclass.s {x()}, {f()}")
        elif k == "flsw":
            lines.append(f"{draw(st.sampled_from(['flw', 'fsw']))} {f()}, {FLOATS + 4 * draw(st.integers(0, 31))}(tp)")
        elif k == "frm":
            r = x()
            lines += draw(st.sampled_from([[f"csrwi frm, {draw(st.integers(0, 4))}"],
                                           [f"li {r}, {draw(st.integers(0, 4))}", f"fsrm {r}"]]))
        else:
            lines.append(draw(st.sampled_from([f"frflags {x()}", f"fsflags {x()}", f"csrrci {x()}, 0x001, {draw(st.integers(0, 31))}"])))
    return lines


def fp_source(lines: list, init: bytes) -> str:
    """The user program: the lines, then the dump (written to stdout) and exit; the buffer is a
    section to be linked at BUF."""
    data = ", ".join(str(c) for c in init)
    return (".text\n.globl _start\n_start:\n" + "\n".join(lines + FP_TAIL) +
            f"\n.section .buf,\"aw\",@progbits\n.byte {data}\n.zero {DUMP + 1024 - len(init)}\n")


def parse_fp_dump(out: bytes) -> dict:
    words = struct.unpack("<64I", out[DUMP - FLOATS:DUMP - FLOATS + 256])
    return {"fcsr": words[0], "x": list(words[1:32]), "f": list(words[32:64]), "floats": out[:128]}


def run_qemu_fp(lines: list, init: bytes, tmp: Path) -> dict:
    src = fp_source(lines, init)
    elf, err = gnu_link(src, tmp, 0x10000, {".buf": BUF})
    assert elf is not None, err
    p = subprocess.run([QEMU, "-cpu", QEMU_CPU, str(elf)], capture_output=True, timeout=30)
    assert p.returncode == 0, p.stderr.decode() + "\n" + src
    return parse_fp_dump(p.stdout)


def run_spike_fp(lines: list, init: bytes, tmp: Path) -> dict:
    src = fp_source(lines, init)
    status, out = spike.run(src, tmp, isa="rv32imf_zicsr", as_flags=AS_FLAGS, xlen=32, sections={".buf": BUF},
                            memory=((BUF, 0x10000),))
    assert status == 0, f"spike exit status {status}\n" + src
    return parse_fp_dump(out)


def run_ours_fp(lines: list, init: bytes, machine_cls) -> dict:
    m = machine_cls(coral())
    m.load(asm().assemble("\n".join(lines) + "\nebreak\n", "fp.s"))
    dtcm = m.arrays["dtcm"]
    dtcm[:len(init)] = np.frombuffer(init, dtype=np.uint8)
    r = m.run(100_000)
    status = r.status if hasattr(r, "status") else r
    assert status == "halted", (status, getattr(r, "trap", None))
    a = m.arrays
    scalar = lambda n: int(np.asarray(a[n]).reshape(-1)[0])
    return {"fcsr": (scalar("frm") << 5) | scalar("fflags"), "x": [int(a["x"][i]) & 0xffffffff for i in range(1, 32)],
            "f": [int(v) & 0xffffffff for v in a["f"]], "floats": bytes(np.asarray(dtcm[FLOATS:FLOATS + 128]).tobytes())}


@settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=QUIET)
@given(data=st.data())
def test_random_fp_programs_match_qemu(data):
    need_gnu()
    if QEMU is None:
        pytest.skip("qemu-riscv32 missing: apt-get install qemu-user")
    body, lines, init = fp_case(data)
    with tempfile.TemporaryDirectory() as d:
        want = run_qemu_fp(lines, init, Path(d))
    for cls in machines():
        got = run_ours_fp(lines, init, cls)
        for key in ("fcsr", "x", "f", "floats"):
            assert got[key] == want[key], (cls.__name__, key, got[key], want[key], "\n".join(body))


@settings(max_examples=30, deadline=None, derandomize=True, suppress_health_check=QUIET)
@given(data=st.data())
def test_random_fp_programs_match_spike(data):
    """The same random F programs, second oracle: spike (riscv-isa-sim) runs them bare-metal; x, f,
    fcsr and the float area must equal our C simulator's."""
    if spike.MISSING:
        pytest.skip(spike.MISSING)
    body, lines, init = fp_case(data)
    with tempfile.TemporaryDirectory() as d:
        want = run_spike_fp(lines, init, Path(d))
    from kcgen.sim.simulator import Simulator
    got = run_ours_fp(lines, init, Simulator)
    for key in ("fcsr", "x", "f", "floats"):
        assert got[key] == want[key], (key, got[key], want[key], "\n".join(body))


def fp_case(data):
    """A random F program with its starting registers and float inputs: (body, all lines, buffer)."""
    body = data.draw(fp_program(), label="body")
    xs = data.draw(st.lists(st.one_of(st.integers(0, 2 ** 32 - 1), st.sampled_from([0, 1, 0x7fffffff, 0x80000000, 0xffffffff,
                                                                                      16777217, 0xfeffffff])),
                            min_size=len(STATE), max_size=len(STATE)), label="x")
    fbits = data.draw(st.lists(st.one_of(st.sampled_from(F_EDGES + F_NANS), st.integers(0, 2 ** 32 - 1),
                                         st.sampled_from(NICE).map(lambda v: struct.unpack("<I", struct.pack("<f", v))[0])),
                               min_size=32, max_size=32), label="f")
    init = bytes(FLOATS) + struct.pack("<32I", *fbits)
    lines = [f"li tp, {BUF:#x}", f"li gp, {BUF + DUMP:#x}"] + [f"flw f{k}, {FLOATS + 4 * k}(tp)" for k in range(32)] + \
        [f"li x{r}, {v}" for r, v in zip(STATE, xs)] + body
    return body, lines, init


# ---- (d) the examples of the description ------------------------------------------------------------------

def _example_ids():
    from kcgen.sim.examples import examples
    return [c.id for c in examples(coral())]


@pytest.mark.parametrize("machine", ["RefMachine", "Simulator"])
def test_every_example_passes(machine):
    from kcgen.sim.examples import examples, run_example
    cls = {c.__name__: c for c in machines()}[machine]
    failures = [r.message() for r in (run_example(coral(), c, cls) for c in examples(coral())) if not r.ok]
    assert not failures, "\n".join(failures)


def test_every_instruction_group_has_examples():
    ids = _example_ids()
    assert len(ids) >= 100
    owners = {i.split("#")[0] for i in ids}
    for must in ("VSETVLI", "VLE32", "VSE16", "VLSE32", "VADD_VV", "VWMACC_VV", "VNCLIP_WI", "VREDSUM_VS",
                 "VMSLT_VX", "VMERGE_VIM", "VSLIDEUP_VX", "VRGATHER_VV", "VMV_X_S", "MUL", "DIV", "FMADD_S", "CLZ", "li", "isa"):
        assert must in owners, must


# ---- timing: hand-computed cycle counts of the model ------------------------------------------------------

TIMING = {
    # four ALU ops issue together; ebreak (the 5th) in the next cycle; results ready one cycle later
    "addi a0, a0, 1\naddi a1, a1, 1\naddi a2, a2, 1\naddi a3, a3, 1\nebreak": 2,
    "\n".join(f"addi a{i}, a{i}, 1" for i in range(8)) + "\nebreak": 3,
    # a dependence chain issues one per cycle
    "addi a0, a0, 1\naddi a0, a0, 1\naddi a0, a0, 1\naddi a0, a0, 1\nebreak": 4,
    # one pipelined multiplier: one mul per cycle, 2-cycle latency
    "\n".join(f"mul a{i}, a{i}, a{i}" for i in range(4)) + "\nebreak": 5,
    "mul a0, a0, a0\nmul a0, a0, a0\nebreak": 4,
    # e32/m8: vl = 32 elements = 8 element groups: 8 busy cycles, ready one cycle later
    "vsetvli t0, zero, e32, m8, ta, ma\nvadd.vv v8, v16, v24\nebreak": 10,
    "vsetivli zero, 4, e32, m1, ta, ma\nvadd.vv v1, v2, v3\nebreak": 3,
}


@pytest.mark.parametrize("src", list(TIMING), ids=[f"t{i}" for i in range(len(TIMING))])
def test_cycle_counts(src):
    from kcgen.sim.simulator import Simulator
    sim = Simulator(coral())
    sim.load(asm().assemble(src, "t.s"))
    r = sim.run(1000)
    assert r.status == "halted" and r.cycles == TIMING[src], r.cycles
