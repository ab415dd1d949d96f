"""Round trips between the generated assembler and disassembler, over every instruction of every fixture.

(a) decode(encode(i)) == i: an instruction written through its syntax template with random operand
    values (every register name and alias, immediates at and between the edges of their range,
    aligned as their field requires, pc-relative targets as labels or as numeric offsets, enum
    spellings, optional operands sometimes left out) assembles to a word that the disassembler
    decodes back to the same instruction and operand values;
(b) assemble(source(bytes)) == bytes for random multi-instruction programs with labels and
    branches (random bundles of instructions in distinct slots for the VLIW fixture).
"""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .common import (NAMES, Written, assembler, bundle_slot_sets, disassembler, entry, has_labels,
                     insns_by_slot, narrowest_format, ops_of, slot_nops, spec, vliw_slot, write_insn)

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
PROGRAM_SETTINGS = settings(max_examples=200, deadline=None,
                            suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

ALL_INSNS = [(name, insn) for name in NAMES for insn in sorted(spec(name).instructions)]
FILLER = {"rv32i_mini": "ebreak", "vliw_mini": "done", "plena_mini": "C_BREAK", "toy16": "stop"}


def hwloop_frame(name: str, insn: str) -> tuple[list[str], list[str]]:
    """Statements around a hardware-loop instruction so that the program is balanced."""
    h = spec(name).isa.hwloop
    if h is None:
        return [], []
    if insn == h.start:
        return [], ["C_LOOP_END gp1"]
    if insn == h.end:
        return ["C_LOOP_START gp1, 1"], []
    return [], []


def single_size(name: str, insn: str) -> int:
    """Bytes of the instruction, or of the narrowest bundle that holds it."""
    s = spec(name)
    if s.isa.slots:
        fmt = narrowest_format(name, {vliw_slot(name, insn)})
        from kcgen.asm.tables import bundle_formats
        return next(b.width for b in bundle_formats(s) if frozenset(b.fields) == fmt) // 8
    from .common import insn_width_bytes
    return insn_width_bytes(name, insn)


def test_every_fixture_instruction_is_covered():
    assert len(ALL_INSNS) == sum(len(spec(n).instructions) for n in NAMES)
    assert {n for n, _ in ALL_INSNS} == set(NAMES)


@pytest.mark.parametrize("name,insn", ALL_INSNS, ids=[f"{n}-{i}" for n, i in ALL_INSNS])
@SETTINGS
@given(data=st.data())
def test_decode_encode_is_identity(name, insn, data):
    before, after = hwloop_frame(name, insn)
    size = single_size(name, insn)
    address = entry(name) + 4 * len(before)
    labels = {}
    if has_labels(name):
        labels = {"here": address, "there": address + size}
    w: Written = data.draw(write_insn(name, insn, address, labels, size), label="insn")
    lines = before + (["here: " + w.text, "there: " + FILLER[name]] if labels else [w.text]) + after
    text = "\n".join(lines) + "\n"
    program = assembler(name).assemble(text, "rt.s")
    placed = program.at(address)
    assert placed is not None, text
    assert placed.size == size, text
    if spec(name).isa.slots and insn in slot_nops(name):
        assert ops_of(placed) == [(insn, {})]
    else:
        assert ops_of(placed) == [(insn, w.values)], text
    data_bytes = bytes(program.text.data)
    decoded = {d.address: d for d in disassembler(name).decode(data_bytes, program.text.base)}
    d = decoded[address]
    assert d.size == size
    if spec(name).isa.slots and insn in slot_nops(name):
        # A bundle of nothing but nops decodes to one of them (which one is not recoverable).
        assert [n for n, _ in d.ops] and all(n in slot_nops(name) for n, _ in d.ops), d
    else:
        assert ops_of(d) == [(insn, w.values)], f"{text}\n{d}"
    # The single word decodes the same way through decode_word (non-VLIW: the word group).
    if not spec(name).isa.slots:
        word = int.from_bytes(data_bytes[address - program.text.base:][:size], program.endian)
        hit = disassembler(name).decode_word(word, f"w{8 * size}")
        assert hit is not None and hit[0].name == insn


# ---- (b) programs ---------------------------------------------------------------------------------------

PSEUDOS = {n: tuple(sorted(spec(n).pseudos)) for n in NAMES}


@st.composite
def linear_program(draw, name: str) -> str:
    """Instructions and pseudos, some labelled, with branches to the labels (plena: balanced loops)."""
    s = spec(name)
    n = draw(st.integers(1, 14))
    labelled = sorted(draw(st.sets(st.integers(0, n), max_size=n + 1))) if has_labels(name) else []
    label_names = tuple(f"lab{i}" for i in labelled)
    choices = sorted(s.instructions) + list(PSEUDOS[name])
    h = s.isa.hwloop
    depth = s.params_eval(h.depth) if h and h.depth is not None else 0
    lines, open_loops = [], 0
    for i in range(n):
        pool = choices
        if h is not None:
            pool = [c for c in choices if c not in (h.start, h.end)]
            if open_loops < depth:
                pool.append(h.start)
            if open_loops:
                pool.append(h.end)
        insn = draw(st.sampled_from(pool))
        if name == "rv32i_mini" and draw(st.integers(0, 9)) == 0:
            text = f".word {draw(st.integers(0, 2 ** 32 - 1)):#x}"
        else:
            text = draw(write_insn(name, insn, free_labels=label_names)).text
            if h is not None and insn == h.start:
                open_loops += 1
            elif h is not None and insn == h.end:
                open_loops -= 1
        lines.append((f"lab{i}: " if i in labelled else "    ") + text)
    lines += ["    C_LOOP_END gp2"] * open_loops
    lines.append((f"lab{n}: " if n in labelled else "    ") + FILLER[name])
    return "\n".join(lines) + "\n"


@st.composite
def vliw_program(draw, name: str = "vliw_mini") -> str:
    """Bundles of operations in distinct slots that some bundle format holds, some labelled, with jumps.

    Explicit nops may appear in any slot, also where they make the bundle wider than its other
    operations need: the disassembly must then keep them so that the same bundle format comes back."""
    n = draw(st.integers(1, 10))
    labelled = sorted(draw(st.sets(st.integers(0, n), max_size=n + 1)))
    label_names = tuple(f"b{i}" for i in labelled)
    by_slot = insns_by_slot(name)
    lines = []
    for i in range(n):
        fmt = draw(st.sampled_from(bundle_slot_sets(name)))
        slots = draw(st.lists(st.sampled_from(sorted(fmt)), min_size=1, max_size=len(fmt), unique=True))
        chosen = [(sl, draw(st.sampled_from(by_slot[sl]))) for sl in slots]
        ops = [draw(write_insn(name, insn, free_labels=label_names)).text for _, insn in chosen]
        lines.append((f"b{i}: " if i in labelled else "    ") + " ; ".join(ops))
    lines.append((f"b{n}: " if n in labelled else "    ") + "done")
    return "\n".join(lines) + "\n"


def _round_trip(name: str, text: str) -> None:
    a, d = assembler(name), disassembler(name)
    program = a.assemble(text, "prog.s")
    data = bytes(program.text.data)
    source = d.source(data, program.text.base)
    again = a.assemble(source, "again.s")
    assert again.text.base == program.text.base
    assert bytes(again.text.data) == data, f"\n--- source\n{text}\n--- disassembled\n{source}\n--- listing\n" \
                                           f"{d.listing(data, program.text.base)}"
    # The listing shows one line per decoded instruction (plus label lines), and never crashes.
    listing = d.listing(data, program.text.base)
    assert len([ln for ln in listing.splitlines() if not ln.endswith(":")]) == len(d.decode(data, program.text.base))


@pytest.mark.parametrize("name", [n for n in NAMES if not spec(n).isa.slots])
@PROGRAM_SETTINGS
@given(data=st.data())
def test_source_of_a_program_assembles_to_the_same_bytes(name, data):
    _round_trip(name, data.draw(linear_program(name), label="program"))


@PROGRAM_SETTINGS
@given(text=vliw_program())
def test_vliw_source_of_random_bundles_assembles_to_the_same_bytes(text):
    _round_trip("vliw_mini", text)


@settings(max_examples=400, deadline=None)
@given(words=st.lists(st.one_of(st.integers(0, 2 ** 32 - 1),
                                 st.integers(0, 2 ** 25 - 1).map(lambda x: (x << 7) | 0x13),
                                 st.integers(0, 2 ** 25 - 1).map(lambda x: (x << 7) | 0x63)),
                      min_size=1, max_size=8))
def test_rv32i_any_words_survive_disassembly_and_reassembly(words):
    """Every 32-bit word, decodable or not, comes back from source() unchanged (rv32i has no don't-care bits)."""
    data = b"".join(w.to_bytes(4, "little") for w in words)
    source = disassembler("rv32i_mini").source(data, 0)
    again = assembler("rv32i_mini").assemble(source, "words.s")
    assert bytes(again.text.data) == data, source


@pytest.mark.parametrize("text", ["nopa", "nopxm", "add r1, r2, r3 ; nopa", "mov r1, #1 ; nopxm"])
def test_vliw_explicit_nops_survive_the_round_trip(text):
    _round_trip("vliw_mini", text + "\n")
