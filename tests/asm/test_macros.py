"""The GNU as macro layer (.macro, .rept/.irp/.irpc, the .if family, .set/=, .purgem, .exitm,
.err/.error/.warning), on every target.

  * RISC-V (coral rv32, boom rv64): GNU as is the oracle. The corpus in tests/asm/macros/ and
    random nested .rept/.irp/.if/.set/macro programs are assembled by both; the bytes must match.
  * Every target (plena and amdnpu have no external assembler): expansion equivalence. A random
    macro-using program assembles to exactly the bytes of its expansion, which the test writes
    out itself (the generator evaluates .rept, .irp, .if and .set as it writes the program).
  * Errors inside an expansion name the body line, then each expansion level in a note.
  * Source positions: records of expanded instructions carry the line they were written on.
"""
from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import isadl
from kcgen.asm import AsmError, Assembler, macros


ROOT = Path(__file__).resolve().parents[2]
CORPUS = sorted((Path(__file__).resolve().parent / "macros").glob("*.s"))
TARGETS = {name: ROOT / "targets" / f"{name}.isa" for name in ("coral", "boom", "plena", "amdnpu")}
TOOLS = {t: shutil.which(f"riscv64-unknown-elf-{t}") for t in ("as", "ld", "objcopy")}
GNU = {  # target: (as flags, ld emulation)
    "coral": (["-march=rv32imf_zve32x_zicsr_zifencei_zbb", "-mabi=ilp32", "-mno-relax", "-mno-arch-attr"], "elf32lriscv"),
    "boom": (["-march=rv64imfd", "-mabi=lp64d", "-mno-relax", "-mno-arch-attr"], "elf64lriscv"),
}
needs_gnu = pytest.mark.skipif(not all(TOOLS.values()),
                               reason="GNU binutils for RISC-V missing: apt-get install binutils-riscv64-unknown-elf")
QUIET = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture]


@functools.lru_cache(maxsize=None)
def assembler(target: str) -> Assembler:
    return Assembler(isadl.load(TARGETS[target]))


def gnu_sections(target: str, text: str, workdir: Path, bases: dict[str, int]) -> dict[str, bytes]:
    """Assemble with GNU as, link each section at our address; each section's bytes."""
    flags, emulation = GNU[target]
    src, obj, elf, script = (workdir / n for n in ("g.s", "g.o", "g.elf", "g.ld"))
    src.write_text(text)
    script.write_text("SECTIONS {\n" + "".join(f"  {n} {a:#x} : {{ *({n}) }}\n" for n, a in bases.items())
                      + "  /DISCARD/ : { *(.comment) *(.note*) *(.riscv.attributes) }\n}\n")
    steps = [[TOOLS["as"], *flags, "-o", str(obj), str(src)],
             [TOOLS["ld"], "-m", emulation, "--no-relax", "-e", hex(bases[".text"]), "-T", str(script),
              "-o", str(elf), str(obj)]]
    for cmd in steps:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, f"{Path(cmd[0]).name} failed:\n{proc.stderr}\n--- source\n{text}"
    out = {}
    for n in bases:
        binf = workdir / f"g{n}.bin"
        proc = subprocess.run([TOOLS["objcopy"], "-O", "binary", "-j", n, str(elf), str(binf)],
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        out[n] = binf.read_bytes()
    return out


def compare_with_gnu(target: str, text: str, workdir: Path) -> None:
    program = assembler(target).assemble(text, "ours.s")
    bases = {n: s.base for n, s in program.sections.items() if s.data}
    expected = gnu_sections(target, text, workdir, bases)
    for n, want in expected.items():
        got = bytes(program.sections[n].data)
        if len(got) > len(want) and not any(got[len(want):]):
            got = got[:len(want)]  # our section ends padded to its alignment; objcopy stops at its size
        assert got == want, (f"section {n} differs from GNU as:\n  ours {got.hex()}\n  gnu  {want.hex()}"
                             f"\n--- source\n{text}")


# ---- the corpus against GNU as ------------------------------------------------------------------------------

@needs_gnu
@pytest.mark.parametrize("target", sorted(GNU))
@pytest.mark.parametrize("path", CORPUS, ids=[p.stem for p in CORPUS])
def test_corpus_matches_gnu_as(target, path, tmp_path):
    compare_with_gnu(target, path.read_text(), tmp_path)


def test_corpus_is_not_trivial():
    """Each corpus file expands to many instructions (a corpus of empty expansions proves nothing)."""
    assert len(CORPUS) >= 3
    for path in CORPUS:
        program = assembler("coral").assemble(path.read_text(), str(path))
        assert program.expanded and len(program.records) >= 20, path.name


def test_warning_directive_is_a_located_warning():
    text = (ROOT / "tests/asm/macros/conditionals.s").read_text()
    program = assembler("coral").assemble(text, "c.s")
    line = text.splitlines().index('    .warning "a warning does not stop the assembly"') + 1
    assert [(w.loc.line, w.loc.column, w.severity, w.message) for w in program.warnings] == \
        [(line, 5, "warning", "a warning does not stop the assembly")]


# ---- random nested programs: the generator writes the program and its expansion --------------------------

# Per target: one instruction `op reg, reg, imm` on a register of index k, a range of immediates
# all targets take, and whether the dialect has .set (plena and amdnpu have no symbols).
LEAF = {
    "coral": (lambda k, imm: f"addi a{k}, a{k}, {imm}", 1023, True),
    "boom": (lambda k, imm: f"addi a{k}, a{k}, {imm}", 1023, True),
    "plena": (lambda k, imm: f"S_ADDI_INT gp{k}, gp{k}, {imm}", 1023, False),
    "amdnpu": (lambda k, imm: f"add r{k}, r{k}, #{imm}", 63, False),
}


@st.composite
def block(draw, target: str, depth: int, scope: tuple):
    """A list of nodes: ("insn", k, imm), ("set", n), ("rept", n, body), ("irp", name, values, body),
    ("if", [(cond, body), ...], else_body | None), ("call", k, amount | None, how the arguments are written)."""
    _, top, has_set = LEAF[target]
    kinds = ["insn", "insn", "call"] + (["set"] if has_set else [])
    if depth < 3:
        kinds += ["rept", "irp", "if"] * (2 if depth < 2 else 1)
    nodes = []
    for _ in range(draw(st.integers(3, 6) if depth == 0 else st.integers(1, 3))):
        kind = draw(st.sampled_from(kinds))
        if kind == "insn":
            imm = draw(st.one_of([st.tuples(st.just("num"), st.integers(0, top))]
                                 + ([st.tuples(st.just("sym"), st.sampled_from(scope))] if scope else [])
                                 + ([st.just(("v",))] if has_set else [])))
            nodes.append(("insn", draw(st.integers(0, 3)), imm))
        elif kind == "set":
            nodes.append(("set", draw(st.integers(0, 5))))
        elif kind == "call":
            nodes.append(("call", draw(st.integers(0, 3)), draw(st.one_of(st.none(), st.integers(0, top))),
                          draw(st.sampled_from(["commas", "blanks", "names"]))))
        elif kind == "rept":
            nodes.append(("rept", draw(st.sampled_from([2, 3, 1, 0])), draw(block(target, depth + 1, scope))))
        elif kind == "irp":
            name = f"s{depth}"
            values = draw(st.lists(st.integers(0, top), min_size=1, max_size=3))  # (none: in the corpus)
            nodes.append(("irp", name, values, draw(block(target, depth + 1, scope + (name,)))))
        else:
            branches = []
            for _ in range(draw(st.integers(1, 3))):
                lhs = draw(st.sampled_from(scope + ((("v",),) if has_set else ()))) if scope or has_set else None
                op = draw(st.sampled_from(["==", "!=", "<", ">", "<=", ">=", "&"]))
                cond = (lhs, op, draw(st.integers(0, 8)))
                branches.append((cond, draw(block(target, depth + 1, scope))))
            other = draw(st.one_of(st.none(), block(target, depth + 1, scope)))
            nodes.append(("if", branches, other))
    return nodes


def render(target: str, nodes: list) -> tuple[str, str]:
    """(the program with macro directives, its expansion written out by hand) for nodes."""
    leaf, top, has_set = LEAF[target]
    src = ([".set v, 0"] if has_set else []) + [".macro bump k, amount=1", leaf("\\k", "\\amount"), ".endm"]
    flat: list[str] = []
    state = {"v": 0}

    def value(term, env):
        if term == ("v",):
            return state["v"]
        return env[term] if isinstance(term, str) else term

    def text_of(term):
        return "v" if term == ("v",) else f"\\{term}" if isinstance(term, str) else str(term)

    def walk(nodes, env, out, expand):
        for node in nodes:
            kind = node[0]
            if kind == "insn":
                _, k, imm = node
                written = {"num": lambda: str(imm[1]), "sym": lambda: f"\\{imm[1]}", "v": lambda: f"(v & {top})"}[imm[0]]()
                out.append(leaf(k, written))
                if expand:
                    n = imm[1] if imm[0] == "num" else env[imm[1]] if imm[0] == "sym" else state["v"] & top
                    flat.append(leaf(k, n))
            elif kind == "set":
                out.append(f".set v, v + {node[1]}")
                if expand:
                    state["v"] += node[1]
            elif kind == "call":
                _, k, amount, style = node
                if amount is None:
                    out.append(f"bump k={k}" if style == "names" else f"bump {k}")
                else:
                    out.append({"commas": f"bump {k}, {amount}", "blanks": f"bump {k} {amount}",
                                "names": f"bump amount={amount}, k={k}"}[style])
                if expand:
                    flat.append(leaf(k, amount if amount is not None else 1))
            elif kind == "rept":
                _, n, body = node
                out.append(f".rept {n}")
                inner: list[str] = []
                walk(body, env, inner, False)  # the body as written, once
                out.extend(inner)
                out.append(".endr")
                if expand:
                    for _ in range(n):
                        walk(body, env, [], True)
            elif kind == "irp":
                _, name, values, body = node
                out.append(f".irp {name}, " + ", ".join(map(str, values)))
                walk(body, env, out, False)
                out.append(".endr")
                if expand:
                    for v in values:
                        walk(body, {**env, name: v}, [], True)
            else:
                _, branches, other = node
                taken = False
                for i, ((lhs, op, rhs), body) in enumerate(branches):
                    cond = f"({1 if lhs is None else text_of(lhs)} {op} {rhs})"
                    out.append((".if " if i == 0 else ".elseif ") + cond)
                    hit = False
                    if expand and not taken:
                        x = 1 if lhs is None else value(lhs, env)
                        hit = bool(x & rhs) if op == "&" else eval(f"{x} {op} {rhs}")  # noqa: S307 - numbers only
                    walk(body, env, out, expand and hit)
                    taken = taken or hit
                if other is not None:
                    out.append(".else")
                    walk(other, env, out, expand and not taken)
                out.append(".endif")

    walk(nodes, {}, src, True)
    return "\n".join(src) + "\n", "\n".join(flat) + "\n"


@pytest.mark.parametrize("target", sorted(TARGETS))
@settings(max_examples=30, deadline=None, suppress_health_check=QUIET, derandomize=True)
@given(data=st.data())
def test_random_nested_programs_assemble_as_their_expansion(target, data):
    nodes = data.draw(block(target, 0, ()))
    text, flat = render(target, nodes)
    asm = assembler(target)
    got = asm.assemble(text, "macro.s").image()
    want = asm.assemble(flat, "flat.s").image() if flat.strip() else b""
    assert got == want, f"--- program\n{text}--- expansion\n{flat}"


@needs_gnu
@pytest.mark.parametrize("target", sorted(GNU))
@settings(max_examples=25, deadline=None, suppress_health_check=QUIET, derandomize=True)
@given(data=st.data())
def test_random_nested_programs_match_gnu_as(target, data, tmp_path_factory):
    nodes = data.draw(block(target, 0, ()))
    text, _ = render(target, nodes)
    text += "    nop\n"  # never an empty .text
    compare_with_gnu(target, text, tmp_path_factory.mktemp("gnu"))


# ---- locations --------------------------------------------------------------------------------------------

def _error(target: str, text: str) -> AsmError:
    with pytest.raises(AsmError) as info:
        assembler(target).assemble(text, "m.s")
    return info.value


def test_error_inside_a_macro_inside_a_rept_names_every_level():
    text = ".macro m a\n  foo \\a\n.endm\nnop\n.rept 2\n  m 3\n.endr\n"
    exc = _error("coral", text)
    d = exc.diagnostics[0]
    assert (d.loc.line, d.loc.column, d.message) == (2, 3, "unknown instruction 'foo'")
    assert [(n.loc.line, n.loc.column, n.severity, n.message) for n in d.notes] == [
        (6, 3, "note", "in macro 'm' invoked here"), (5, 1, "note", "in the .rept repeated here")]
    assert len([x for x in exc.diagnostics if x.severity == "error"]) == 1  # both repetitions: one report
    assert str(exc).splitlines() == ["m.s:2:3: error: unknown instruction 'foo'", "  foo \\a", "  ^",
                                     "m.s:6:3: note: in macro 'm' invoked here",
                                     "m.s:5:1: note: in the .rept repeated here"]


def test_column_after_substitution_points_into_the_body_as_written():
    # `\reg` becomes `a99`: the error column is that of `\reg` in the body line.
    text = ".macro m reg\n  addi \\reg, zero, 1\n.endm\n  m a99\n"
    d = _error("coral", text).diagnostics[0]
    assert (d.loc.line, d.loc.column) == (2, 8), str(d.render())
    assert d.message.startswith("unknown register 'a99'")


def test_cli_prints_the_notes(tmp_path):
    src = tmp_path / "k.s"
    src.write_text(".irp r, a0, q9\n  addi \\r, \\r, 1\n.endr\n")
    proc = subprocess.run([sys.executable, "-m", "kcgen", "asm", "coral", str(src)], capture_output=True, text=True,
                          cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    lines = proc.stderr.splitlines()
    assert lines[0].startswith(f"{src}:2:8: error: unknown register 'q9'")
    assert f"{src}:1:1: note: in the .irp repeated here" in lines


def test_records_of_expanded_lines_carry_the_body_line():
    text = "nop\n.rept 2\n  addi a0, a0, 1\n  addi a1, a1, 2\n.endr\n.macro m\n  addi a2, a2, 3\n.endm\n  m\nnop\n"
    program = assembler("coral").assemble(text, "r.s")
    assert [(r[0], r[3], r[4]) for r in program.records] == [
        (0, 1, "nop"), (4, 3, "addi a0, a0, 1"), (8, 4, "addi a1, a1, 2"), (12, 3, "addi a0, a0, 1"),
        (16, 4, "addi a1, a1, 2"), (20, 7, "addi a2, a2, 3"), (24, 10, "nop")]
    assert program.source_line(20) == 7


def test_set_inside_a_rept_is_seen_in_order():
    # .set redefines a symbol: every use sees the definition in force where it is expanded.
    text = ".set i, 0\n.rept 4\n  addi a0, a0, i\n  .set i, i + 1\n.endr\n"
    words = assembler("coral").assemble(text, "s.s").words(4)
    assert [w >> 20 for w in words] == [0, 1, 2, 3]


@pytest.mark.parametrize("target", ["plena", "amdnpu"])
def test_no_directive_dialects_take_the_macro_layer(target):
    leaf = LEAF[target][0]
    text = "\n".join([".irp k, 0, 1", leaf(0, "\\k + 2"), ".endr", ".if 1 > 2", leaf(1, 5), ".else", leaf(1, 6),
                      ".endif"]) + "\n"
    flat = "\n".join([leaf(0, 2), leaf(0, 3), leaf(1, 6)]) + "\n"
    asm = assembler(target)
    assert asm.assemble(text, "m.s").image() == asm.assemble(flat, "f.s").image()


# ---- bounds ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, message", [
    (".rept 1000000000\nnop\n.endr\n", ".rept 1000000000 would expand to 1000000000 lines"),
    (".rept 2000\n.rept 2000\nnop\n.endr\n.endr\n", ".rept 2000 would expand to 4002000 lines"),
    (".macro r\nr\n.endm\nr\n", "macros nested too deeply"),
    (".macro r\nr\nr\n.endm\nr\n", "macros nested too deeply"),
])
def test_runaway_expansions_stop_quickly_with_an_error(text, message):
    start = time.perf_counter()
    exc = _error("coral", text)
    assert time.perf_counter() - start < 15
    assert any(message in d.message for d in exc.diagnostics), str(exc)


@pytest.mark.parametrize("text", [
    ".set n, 200\n.rept n\n.rept n\n  addi a0, a0, 1\n.endr\n.endr\n",  # counts the estimate cannot see
    ".macro r n\n.if \\n\nr \\n-1\nr \\n-1\n.endif\n.endm\nr 30\n",  # 2**30 calls, never 30 deep
])
def test_the_expanded_lines_are_bounded_in_all(text, monkeypatch):
    monkeypatch.setattr(macros, "MAX_EXPANDED_LINES", 5000)  # the mechanism, without 2**18 lines of work
    exc = _error("coral", text)
    assert len(exc.diagnostics) == 1 and "the assembler's limit of 5000 expanded lines" in exc.diagnostics[0].message, \
        str(exc)  # the assembly stops there


def test_a_huge_rept_of_nothing_is_instant():
    start = time.perf_counter()
    assembler("coral").assemble(".rept 1000000000\n.endr\nnop\n", "e.s")
    assert time.perf_counter() - start < 1


# ---- hand-written expansions: the dialects without an external assembler ---------------------------------

HAND = {
    "plena": ("""\
; every directive of the macro layer, in a dialect with no directives of its own
.macro ld_st dst, src=gp1, off:req
S_LD_INT \\dst, \\src, \\off
S_ST_INT \\dst, \\src, \\off+1     ; the argument is text: \\off+1 is an expression
.endm
.macro sum_all acc, regs:vararg
.irp r, \\regs
S_ADD_INT \\acc, \\acc, \\r
.endr
.endm
.macro pick n
.ifb \\n
S_ADDI_INT gp9, gp9, 100
.exitm
.endif
.ifc \\n,big
S_ADDI_INT gp9, gp9, 200
.elseif \\n > 2
S_ADDI_INT gp9, gp9, \\n
.else
S_ADDI_INT gp9, gp9, 0
.endif
.endm
ld_st gp2, off=8
ld_st gp3 gp4 4
sum_all gp5, gp6, gp7, gp8
.irpc k, 123
S_ADDI_INT gp\\k, gp\\k, \\k\\()0
.endr
pick
pick big
pick 5
pick 1
.rept 2
.rept 2
S_SUB_INT gp1, gp1, gp2
.endr
.endr
.macro sq n
S_ADDI_INT gp10, gp10, \\n*\\n
.endm
.purgem sq
.macro sq n
S_ADDI_INT gp10, gp10, \\n+\\n
.endm
sq 3
.ifdef anything
S_ADDI_INT gp11, gp11, 1
.endif
""", """\
S_LD_INT gp2, gp1, 8
S_ST_INT gp2, gp1, 9
S_LD_INT gp3, gp4, 4
S_ST_INT gp3, gp4, 5
S_ADD_INT gp5, gp5, gp6
S_ADD_INT gp5, gp5, gp7
S_ADD_INT gp5, gp5, gp8
S_ADDI_INT gp1, gp1, 10
S_ADDI_INT gp2, gp2, 20
S_ADDI_INT gp3, gp3, 30
S_ADDI_INT gp9, gp9, 100
S_ADDI_INT gp9, gp9, 200
S_ADDI_INT gp9, gp9, 5
S_ADDI_INT gp9, gp9, 0
S_SUB_INT gp1, gp1, gp2
S_SUB_INT gp1, gp1, gp2
S_SUB_INT gp1, gp1, gp2
S_SUB_INT gp1, gp1, gp2
S_ADDI_INT gp10, gp10, 6
"""),
    "amdnpu": ("""\
// bundles (;) inside bodies, immediates with #, labels made unique with \\@
.macro step reg, by=1
add \\reg, \\reg, #\\by ; mova r6, #\\by
.endm
.macro spin
wait\\@:
add r3, r3, #-1
.endm
start:
.irp r, r0, r1
step \\r
step \\r, by=5
.endr
.rept 3
mova r4, #7
.endr
spin
spin
.if 3 > 2 && !0
mova r5, #(2 == 2)
.endif
done
""", """\
start:
add r0, r0, #1 ; mova r6, #1
add r0, r0, #5 ; mova r6, #5
add r1, r1, #1 ; mova r6, #1
add r1, r1, #5 ; mova r6, #5
mova r4, #7
mova r4, #7
mova r4, #7
wait0:
add r3, r3, #-1
wait1:
add r3, r3, #-1
mova r5, #-1
done
"""),
}


@pytest.mark.parametrize("target", sorted(HAND))
def test_hand_expanded_programs(target):
    text, flat = HAND[target]
    asm = assembler(target)
    got = asm.assemble(text, f"{target}.s")
    want = asm.assemble(flat, f"{target}-flat.s")
    assert len(want.records) >= 10
    assert got.image() == want.image()
