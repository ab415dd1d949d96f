"""The assembler's line lanes (kcgen.asm.fastpath.compile_lane) against the general path.

A lane encodes a whole line `mnemonic operands` in pass 1, or says None and leaves the line to
the general reader. Whatever the line -- valid, or wrong in any way (immediates out of range,
unknown registers, symbols, extra or missing operands, odd spacing and case, stray brackets,
comments, labels) -- assembling with the lanes on and off must give the same bytes, symbols,
source map and warnings, or the same diagnostics. Run on every fixture of tests/asm/common.py and
on forms16 (mnemonics with several forms, which the others lack outside the VLIW fixture, where
bundles keep every line off the lanes).
"""
from __future__ import annotations

import functools
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import isadl
from kcgen.asm import AsmError, Assembler
from kcgen.asm.assembler import _Run

from .common import NAMES, has_labels, insensitive, spec, write_insn

SETTINGS = settings(max_examples=250, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


FORMS16 = Path(__file__).resolve().parent / "fixtures" / "forms16.isa"
LANE_NAMES = NAMES + ("forms16",)


@functools.lru_cache(maxsize=None)
def lane_spec(name: str):
    return isadl.load(FORMS16) if name == "forms16" else spec(name)


@functools.lru_cache(maxsize=None)
def assembler(name: str, lanes: bool = True) -> Assembler:
    a = Assembler(lane_spec(name))
    a._fast_lane = lanes
    return a


def general_assembler(name: str) -> Assembler:
    return assembler(name, False)


def comment(name: str) -> str:
    return assembler(name).comments[0]


def outcome(a: Assembler, text: str):
    try:
        p = a.assemble(text, "t.s")
    except AsmError as exc:
        return "error", [(d.loc.line, d.loc.column, d.severity, d.message) for d in exc.diagnostics], str(exc)
    return ("ok", p.image(), {k: (v.base, bytes(v.data)) for k, v in p.sections.items()}, p.symbols, p.entry,
            p.records, [(w.loc.line, w.loc.column, w.message) for w in p.warnings])


# ---- random lines --------------------------------------------------------------------------------------------

EDGES = [0, 1, -1, 2, 3, 4, 7, 8, 15, 16, 31, 32, 63, 64, 127, 128, 255, 256, -128, -129, -256, -257, 511, 512, 1023,
         1024, 2047, 2048, -2048, -2049, 4095, 4096, 0x7FFF, 0x8000, 0xFFFF, 0x10000, (1 << 17) - 1, 1 << 17,
         (1 << 18) - 1, 1 << 18, (1 << 20) - 1, 1 << 20, (1 << 21) - 1, (1 << 22) - 1, 1 << 22, 0x7FFFFFFF,
         0x80000000, -0x80000000, -0x80000001, 0xFFFFFFFF, 1 << 32, -(1 << 40)]


@st.composite
def number_text(draw, near: tuple = ()) -> str:
    """A number in one of the ways the dialects read, at or next to one of the edges `near` or EDGES."""
    edges = st.sampled_from(EDGES)
    if near:
        edges = st.one_of(st.sampled_from([e + d for e in near for d in (-1, 0, 1)]), edges)
    v = draw(st.one_of(edges, edges, st.integers(-(1 << 33), 1 << 33)))
    a = abs(v)
    sign = "-" if v < 0 else ""
    return draw(st.sampled_from([str(v), sign + hex(a), sign + hex(a).upper().replace("X", "x"), sign + bin(a),
                                 sign + "0" + oct(a)[2:], sign + f"{a:_}", "+" + str(a), f"{v} ", f"0x_{a:x}"]))


@functools.lru_cache(maxsize=None)
def registers(name: str) -> tuple[str, ...]:
    return tuple(sorted(lane_spec(name).regnames)) + ("x99", "r9", "a22", "gp0", "zz", "q1", "S1", "fp", "pc")


@functools.lru_cache(maxsize=None)
def registers_of(name: str, file: str) -> tuple[str, ...]:
    return tuple(sorted(n for n, (f, _) in lane_spec(name).regnames.items() if f == file))


@functools.lru_cache(maxsize=None)
def enum_spellings(name: str) -> tuple[str, ...]:
    return tuple(i.name for e in lane_spec(name).isa.enums for i in e.items) + ("nope",)


def token(name: str) -> st.SearchStrategy[str]:
    reg = st.sampled_from(registers(name))
    return st.one_of(number_text(), reg, st.sampled_from(enum_spellings(name)),
                     st.tuples(number_text(), reg).map(lambda t: f"{t[0]}({t[1]})"),
                     reg.map(lambda r: f"[{r}]"), reg.map(lambda r: f"({r})"),
                     st.sampled_from(["here", "N", "nowhere", "1b", "1f", ".", "N+1", "%lo(8)", "%hi(here)", "#3",
                                      "# 3", "#-1", "(sp)", "0(sp)", "[p0, #0]", "", " ", "'a'", "1:", "a,b",
                                      "4(r1, r2)", "4(r1))", "(4(r1)", "[r1", "r1]", "$3", "$ -1", "$$2", "$0x1f",
                                      "$r1", "$(4)", "$4(r2)"]))


@functools.lru_cache(maxsize=None)
def mnemonics(name: str) -> tuple[str, ...]:
    s = lane_spec(name)
    return tuple(sorted({i.template.mnemonic for i in s.instructions.values()} | {t.mnemonic for t in s.pseudos.values()}))


SEPARATORS = re.compile(r"([\s,()\[\]#]+)")


@st.composite
def mutated(draw, name: str, text: str) -> str:
    """The line with 0 to 3 random changes (each often turns it into an error)."""
    for _ in range(draw(st.sampled_from([0, 0, 1, 1, 2, 3]))):
        how = draw(st.integers(0, 9))
        parts = SEPARATORS.split(text)
        words = [i for i, w in enumerate(parts) if w and not SEPARATORS.fullmatch(w)]
        if how <= 2 and len(words) > 1:  # another operand token
            i = draw(st.sampled_from(words[1:]))
            parts[i] = draw(token(name))
            text = "".join(parts)
        elif how == 3:
            text = draw(st.sampled_from([text.upper(), text.lower(), text.swapcase()]))
        elif how == 4:
            text = text.replace(",", draw(st.sampled_from([",", " ,", ",  ", "\t,\t", ",,", ""])))
        elif how == 5:
            text = text + draw(st.sampled_from([", ", ","])) + draw(token(name))
        elif how == 6 and "," in text:
            text = text[:text.rindex(",")]
        elif how == 7:
            i = draw(st.integers(0, len(text)))
            text = text[:i] + draw(st.sampled_from(["(", ")", "[", "]", ":", "'", '"', "#", ";", "//", " ", "\t",
                                                    "\r", "\x0c", "\u00a0", "%", "x"])) + text[i:]
        elif how == 8 and words:
            parts[words[0]] += draw(st.sampled_from(["x", ".w", "_", "1"]))
            text = "".join(parts)
        elif how == 9 and len(words) > 1:
            i = draw(st.sampled_from(words[1:]))
            parts[i] = parts[i].upper() if draw(st.booleans()) else parts[i].lower()
            text = "".join(parts)
    return text


@st.composite
def free_line(draw, name: str) -> str:
    """A mnemonic of the ISA and random operand tokens."""
    words = draw(st.lists(token(name), max_size=4))
    sep = draw(st.sampled_from([", ", ",", " , ", ",\t"]))
    mnemonic = draw(st.sampled_from(mnemonics(name)))
    return mnemonic + (draw(st.sampled_from([" ", "\t", "  "])) + sep.join(words) if words else "")


@st.composite
def template_line(draw, name: str) -> str:
    """An instruction or pseudo written through its syntax template with operands of about the
    right kind: registers of any file, numbers near any range edge."""
    s = lane_spec(name)
    which = draw(st.sampled_from(sorted(s.instructions) + sorted(s.pseudos)))
    if which in s.instructions:
        tpl, specs = s.instructions[which].template, s.instructions[which].operands
    else:
        tpl, specs = s.pseudos[which], s.pseudo_operands[which]
    out = [tpl.mnemonic]
    for part in tpl.parts:
        if isinstance(part, str):
            out.append(part)
            continue
        o = specs[part.name]
        if o.kind == "reg":
            own = st.sampled_from(registers_of(name, o.regfile))
            out.append(draw(st.one_of(own, own, st.sampled_from(registers(name)))))
        elif o.kind == "enum":
            out.append(draw(st.sampled_from(enum_spellings(name))))
        else:
            out.append(draw(st.sampled_from(["", "", "$", "$ "])) + draw(number_text((o.lo, o.hi, 0))))
    text = "".join(out)
    if draw(st.integers(0, 3)) == 0 and "," in text:  # leave out trailing operands (optional ones, or not)
        text = text[:text.rindex(",")]
    return text


@st.composite
def line(draw, name: str) -> str:
    kind = draw(st.integers(0, 11))
    if kind >= 10 or (kind <= 6 and name not in NAMES):
        return draw(mutated(name, draw(st.one_of(free_line(name), template_line(name), template_line(name)))))
    if kind <= 6:
        s = spec(name)
        insn = draw(st.sampled_from(sorted(s.instructions) + sorted(s.pseudos)))
        text = draw(write_insn(name, insn, free_labels=("here",) if has_labels(name) else ())).text
        text = draw(mutated(name, text))
        indent = draw(st.sampled_from(["", "    ", "\t", "  \t ", " "]))
        tail = draw(st.sampled_from(["", "", "", " ", "\t", "  " + comment(name) + " note", comment(name)]))
        return indent + text + tail
    if kind == 7:
        return draw(st.sampled_from(["", "   ", comment(name) + " a comment", "here:", "1:", "here: " + (
            "ebreak" if name == "rv32i_mini" else "stop"), "    .equ N, 5", "    .set N, 7", "    .text",
            "    .data", "    .word 3", "    .align 2", "    .byte 1, 2, 3"]))
    return draw(st.sampled_from(["nop", "ret", "li a0, N", "li a0, here", "mv a0, a1", "beq a0, a1, here",
                                 "j 1f", "addi a0, a0, N", "addi a0, a0, %lo(here)", "lw a0, (sp)",
                                 "stop", "li r0, 5", "mov r1, r2", "b eq, 2", "C_LOOP_START gp1, 2",
                                 "C_LOOP_END gp1", "V_ADD_VV gp1, gp2, gp3", "M_MM 0, gp1, gp2",
                                 "add r1, r2, r3 ; lda r4, [p0, #8]", "done"]))


@st.composite
def program(draw, name: str) -> str:
    lines = draw(st.lists(line(name), min_size=1, max_size=8))
    return "\n".join(lines) + draw(st.sampled_from(["\n", "", "\r\n"]))


@pytest.mark.parametrize("name", LANE_NAMES)
@SETTINGS
@given(data=st.data())
def test_lanes_change_nothing_but_speed(name, data):
    text = data.draw(program(name))
    assert outcome(assembler(name), text) == outcome(general_assembler(name), text)


@pytest.mark.parametrize("name", LANE_NAMES)
@SETTINGS
@given(data=st.data())
def test_template_lines_agree(name, data):
    # One line written through a syntax template, no other damage: most of them reach the point
    # where a form has matched and its ranges decide.
    text = data.draw(template_line(name)) + "\n"
    assert outcome(assembler(name), text) == outcome(general_assembler(name), text)


# ---- the lanes are really taken --------------------------------------------------------------------------------

LANED = {
    "rv32i_mini": "addi a0, a1, -1\n  lw t0, 8(sp)\nsw a2, -4(s0)\nli a0, 0x12345678\nli a1, 5\nmv a0, a1\n"
                  "lui a0, 0x12345\nslli a0, a0, 3\n",
    "plena_mini": "S_ADDI_INT gp1, gp2, 5\nV_ADD_VV gp1, gp2, gp3\nV_ADD_VV gp1, gp2, gp3, 5\nM_MM 0, gp1, gp2\n",
    "toy16": "SHIFT R1, SP, 3\nshift r1, r2, 1, ROR.W\ncmpi r3, r0, 255\nmov r1, r2\nldh r1, 6(r2)\n",
    "forms16": "mov r1, 3\nmov r1, r2\nmov q1, q2\nmov q1, q2, 5\nld r1, 4(r2)\nld r1, [r2]\n"
               "ld q1, 4(r2)\nclr r3\nseti r1\nseti r1, -2\nmovw r1, 5\nmov r1, $-3\nld r1, $ 4(r2)\n",
}


@pytest.mark.parametrize("name", sorted(LANED))
def test_common_lines_take_the_lanes(name):
    run = _Run(assembler(name), LANED[name], "t.s")
    program = run.run()
    assert run.items == [], [i.text for i in run.items]
    assert outcome(assembler(name), LANED[name]) == outcome(general_assembler(name), LANED[name])
    assert len(program.placed) >= LANED[name].count("\n")


def test_no_lanes_for_bundles_pc_relative_warnings_or_hardware_loops():
    assert assembler("vliw_mini").lanes == {}
    rv = assembler("rv32i_mini").lanes
    assert "beq" not in rv and "jal" not in rv and "j" not in rv and "nop" not in rv
    assert "li" not in assembler("toy16").lanes  # its LI has a warn clause
    plena = assembler("plena_mini").lanes
    assert "C_LOOP_START" not in plena and "C_LOOP_END" not in plena


def test_lane_source_is_kept_for_reading():
    src = assembler("rv32i_mini").lanes["lw"].source
    assert src.startswith("def lane(t):") and "word.to_bytes(4, 'little')" in src
    assert "lane_" in assembler("rv32i_mini").lanes["li"].source


@pytest.mark.parametrize("lanes", [True, False])
def test_a_range_error_in_the_first_matching_form_is_reported_not_skipped(lanes):
    # mov r1, 20: the first form (i5) matches and decides; the second (u9) would take 20 but is
    # never tried (the generic path's rule, which the lanes keep).
    with pytest.raises(AsmError) as info:
        assembler("forms16", lanes).assemble("mov r1, 3\n  mov r1, 20\n", "t.s")
    d = info.value.diagnostics[0]
    assert (d.loc.line, d.loc.column, d.message) == (2, 11, "immediate 20 is out of range for imm: i5 takes -16..15")


def test_insensitive_dialect_lane_uses_folded_mnemonics():
    assert "shift" in assembler("toy16").lanes and insensitive("toy16")
