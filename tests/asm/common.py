"""Shared helpers for the assembler tests: fixtures by name, and hypothesis strategies that write
random but valid assembly for any instruction of a checked ISA, straight from its syntax template.

The strategies read only the checked Spec (operand kinds, register names, enum spellings, field
alignment), so they cover every instruction of every fixture without a hand-written list.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from hypothesis import strategies as st

import isadl
from isadl.syntax import Operand
from kcgen.asm import Assembler
from kcgen.asm.disassembler import Disassembler
from kcgen.asm.tables import encodings

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
FIXTURES = {
    "rv32i_mini": ROOT / "tests" / "isadl" / "fixtures" / "rv32i_mini.isa",
    "vliw_mini": ROOT / "tests" / "isadl" / "fixtures" / "vliw_mini.isa",
    "plena_mini": ROOT / "tests" / "isadl" / "fixtures" / "plena_mini.isa",
    # A small ISA of our own with what the three lack: enums, a register class, an optional enum,
    # a scaled immediate, a warn clause, pcrel_base next, a case-insensitive dialect, entry != 0.
    "toy16": HERE / "fixtures" / "toy16.isa",
}
NAMES = tuple(FIXTURES)


@functools.lru_cache(maxsize=None)
def spec(name: str):
    return isadl.load(FIXTURES[name])


@functools.lru_cache(maxsize=None)
def assembler(name: str) -> Assembler:
    return Assembler(spec(name))


@functools.lru_cache(maxsize=None)
def disassembler(name: str) -> Disassembler:
    return Disassembler(spec(name))


def dialect(name: str) -> dict:
    d = spec(name).isa.dialect
    return {o.name: tuple(o.values) for o in d.options} if d else {}


def comment(name: str) -> str:
    return dialect(name).get("comment", ("#",))[0]


def insensitive(name: str) -> bool:
    return dialect(name).get("case") == ("insensitive",)


def has_labels(name: str) -> bool:
    return "named" in dialect(name).get("labels", ("named",))


def pcrel_next(name: str) -> bool:
    return dialect(name).get("pcrel_base") == ("next",)


def entry(name: str) -> int:
    s = spec(name)
    return s.params_eval(s.isa.abi.entry) if s.isa.abi and s.isa.abi.entry is not None else 0


def ops_of(placed_or_decoded) -> list[tuple[str, dict]]:
    """(instruction name, {operand: value}) per slot, for Placed and Decoded alike."""
    return [(name, dict(vals)) for name, vals in placed_or_decoded.ops]


@functools.lru_cache(maxsize=None)
def slot_nops(name: str) -> frozenset[str]:
    """Names of the instructions that fill empty VLIW slots."""
    s = spec(name)
    mnems = {sl.nop for sl in s.isa.slots}
    return frozenset(n for n, i in s.instructions.items() if i.template.mnemonic in mnems)


@functools.lru_cache(maxsize=None)
def bundle_slot_sets(name: str) -> tuple[frozenset[str], ...]:
    """The slot sets of the bundle formats, narrowest format first."""
    from kcgen.asm.tables import bundle_formats
    return tuple(frozenset(b.fields) for b in bundle_formats(spec(name)))


@functools.lru_cache(maxsize=None)
def reg_names(name: str) -> dict[tuple[str, int], tuple[str, ...]]:
    """(file, index) -> every assembly name of that register (pattern name and aliases)."""
    out: dict = {}
    for n, key in spec(name).regnames.items():
        out.setdefault(key, []).append(n)
    return {k: tuple(sorted(v)) for k, v in out.items()}


@functools.lru_cache(maxsize=None)
def enum_items(name: str) -> dict[str, tuple[tuple[str, int], ...]]:
    return {e.name: tuple((i.name, i.value) for i in e.items) for e in spec(name).isa.enums}


@functools.lru_cache(maxsize=None)
def field_shift(name: str, insn: str, operand: str) -> int:
    """Implicit low zero bits of the field holding an operand (scaled immediates, B/J offsets).

    A pseudo's pc-relative operand is kept a multiple of the word size."""
    if insn not in spec(name).instructions:
        o = spec(name).pseudo_operands[insn][operand]
        return (spec(name).word // 8).bit_length() - 1 if o.kind == "pcrel" else 0
    for b in encodings(spec(name))[insn].bindings:
        if b.operand.name == operand:
            return b.field.shift
    return 0


def insn_width_bytes(name: str, insn: str) -> int:
    return encodings(spec(name))[insn].width // 8


# ---- strategies -----------------------------------------------------------------------------------------

def numbers(v: int) -> st.SearchStrategy[str]:
    """Ways of writing an integer that every dialect here reads."""
    ways = [str(v), hex(v) if v >= 0 else "-" + hex(-v)]
    if 0 <= v < 1 << 16:
        ways.append(bin(v))
    return st.sampled_from(ways)


def aligned_values(lo: int, hi: int, shift: int) -> st.SearchStrategy[int]:
    """Values in lo..hi that are multiples of 1 << shift, with the edges, 0 and ±1 step well represented."""
    step = 1 << shift
    klo, khi = -(-lo // step), hi // step  # ceil, floor
    edges = sorted({k for k in (klo, khi, 0, 1, -1, klo + 1, khi - 1) if klo <= k <= khi})
    return st.one_of(st.sampled_from(edges), st.integers(klo, khi)).map(lambda k: k * step)


def recase(text: str) -> st.SearchStrategy[str]:
    return st.sampled_from([text, text.lower(), text.upper(), text.swapcase()])


@dataclass
class Written:
    """One instruction as text, with the operand values the encoder must see."""
    insn: str  # instruction name
    text: str
    values: dict  # operand -> value (registers: index; enums: value; pcrel: absolute target)
    labels: dict = field(default_factory=dict)  # pcrel operand -> label name it refers to


@st.composite
def write_insn(draw, name: str, insn: str, address: int = 0, labels: Optional[dict[str, int]] = None,
               size: Optional[int] = None, free_labels: tuple[str, ...] = ()) -> Written:
    """Text for one instruction with random operands, printed through its syntax template.

    `labels` (name -> address) may be used for pc-relative operands when their targets are in range
    and aligned; otherwise a pc-relative operand is written as a number (the offset itself).
    `size` is the size of the instruction (or bundle) for `pcrel_base next`. `free_labels` are labels
    known to be in range whose addresses the caller does not know (their value is recorded as None)."""
    s = spec(name)
    if insn in s.instructions:
        tpl, specs = s.instructions[insn].template, s.instructions[insn].operands
    else:  # a pseudo-instruction: its operands have no field; pc-relative ones stay word-aligned
        tpl, specs = s.pseudos[insn], s.pseudo_operands[insn]
    fold = insensitive(name)
    parts = list(tpl.parts)
    # Trailing optional operands may be left out, with the literal text just before each.
    optional = [i for i, p in enumerate(parts) if isinstance(p, Operand) and p.optional]
    omit = draw(st.integers(0, len(optional))) if optional else 0
    omitted = set()
    if omit:
        cut = optional[-omit]
        for p in parts[cut:]:
            if isinstance(p, Operand):
                omitted.add(p.name)
        parts = parts[:cut]
        while parts and isinstance(parts[-1], str):
            parts.pop()
    comma = draw(st.sampled_from([", ", ",", " , ", ",  ", ",\t"]))
    gap = draw(st.sampled_from([" ", "  ", "\t"]))
    mnemonic = draw(recase(tpl.mnemonic)) if fold else tpl.mnemonic
    out = [mnemonic]
    values: dict = {}
    used_labels: dict = {}
    if size is None:
        size = insn_width_bytes(name, insn) if insn in s.instructions else s.word // 8
    base = address + (size if pcrel_next(name) else 0)
    for i, p in enumerate(parts):
        if isinstance(p, str):
            lit = p.replace(", ", comma)
            if i == 0 and lit[:1].isspace():
                lit = gap + lit.lstrip()
            out.append(lit)
            continue
        o = specs[p.name]
        if o.kind == "reg":
            idx = draw(st.integers(o.offset, o.offset + o.count - 1))
            text = draw(st.sampled_from(reg_names(name)[(o.regfile, idx)]))
            out.append(draw(recase(text)) if fold else text)
            values[p.name] = idx
        elif o.kind == "enum":
            spelling, value = draw(st.sampled_from(enum_items(name)[o.regfile]))
            out.append(draw(recase(spelling)) if fold else spelling)
            values[p.name] = value
        elif o.kind == "imm":
            v = draw(aligned_values(o.lo, o.hi, field_shift(name, insn, p.name)))
            out.append(draw(numbers(v)))
            values[p.name] = v
        elif o.kind == "pcrel":
            shift = field_shift(name, insn, p.name)
            usable = [(n, a) for n, a in sorted((labels or {}).items())
                      if o.lo <= a - base <= o.hi and (a - base) % (1 << shift) == 0]
            if free_labels and draw(st.integers(0, 3)):
                label = draw(st.sampled_from(free_labels))
                out.append(label)
                used_labels[p.name] = label
                values[p.name] = None
            elif usable and draw(st.integers(0, 3)):
                label, target = draw(st.sampled_from(usable))
                out.append(label)
                used_labels[p.name] = label
                values[p.name] = target
            else:
                off = draw(aligned_values(o.lo, o.hi, shift))
                out.append(draw(numbers(off)))
                values[p.name] = base + off
        else:  # pragma: no cover - a kind the checker does not produce
            raise AssertionError(f"operand kind {o.kind}")
    for n in omitted:
        values[n] = specs[n].default
    return Written(insn, "".join(out), values, used_labels)


def vliw_slot(name: str, insn: str) -> str:
    return encodings(spec(name))[insn].slot


@functools.lru_cache(maxsize=None)
def insns_by_slot(name: str) -> dict[str, tuple[str, ...]]:
    out: dict = {}
    for n in sorted(spec(name).instructions):
        out.setdefault(vliw_slot(name, n), []).append(n)
    return {k: tuple(v) for k, v in out.items()}


def narrowest_format(name: str, slots) -> Optional[frozenset]:
    return next((f for f in bundle_slot_sets(name) if set(slots) <= f), None)
