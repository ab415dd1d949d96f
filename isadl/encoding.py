"""Instruction formats and encodings: field layouts, scattered immediates, mask/match, overlap.

The same tables drive encoding (assembler), decoding (disassembler, simulator) and the checks.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

from . import ir

ErrorFn = Callable[[ir.Loc, str], None]


@dataclass(frozen=True)
class FieldLayout:
    """Where a named field's value bits live in the word.

    ``pieces``: (value_lo, word_lo, width) triples. ``shift``: value bits below the lowest
    piece, which are implicit zeros (B/J-type offsets are multiples of 2)."""
    name: str
    pieces: tuple[tuple[int, int, int], ...]
    value_width: int  # including the implicit low zeros
    shift: int
    default: Optional[int]

    @property
    def word_mask(self) -> int:
        m = 0
        for _, wlo, width in self.pieces:
            m |= ((1 << width) - 1) << wlo
        return m

    def insert(self, word: int, value: int) -> int:
        """Place ``value`` (its low value_width bits) into ``word``."""
        for vlo, wlo, width in self.pieces:
            word |= ((value >> vlo) & ((1 << width) - 1)) << wlo
        return word

    def extract(self, word: int) -> int:
        v = 0
        for vlo, wlo, width in self.pieces:
            v |= ((word >> wlo) & ((1 << width) - 1)) << vlo
        return v


@dataclass(frozen=True)
class FormatLayout:
    name: str
    width: int
    fields: dict  # name -> FieldLayout
    fixed_mask: int
    fixed_match: int
    bundle: bool


def _range_ok(bits: ir.Bits, width: int, what: str, error: ErrorFn, limit: str = "") -> bool:
    if bits.hi < bits.lo:
        error(bits.loc, f"bit range {bits.hi}:{bits.lo} of {what} is reversed; write {bits.lo}:{bits.hi}")
        return False
    if bits.hi >= width:
        error(bits.loc, f"{what} {_b(bits)} exceed {limit or f'the {width}-bit format'}")
        return False
    return True


def layout(fmt: ir.Format, width: int, error: ErrorFn) -> FormatLayout:
    owner: list[Optional[str]] = [None] * width
    fields: dict[str, FieldLayout] = {}
    fixed_mask = fixed_match = 0
    failed = False

    def fail(loc: ir.Loc, message: str) -> None:
        nonlocal failed
        failed = True
        error(loc, message)

    def claim(bits: ir.Bits, who: str, loc: ir.Loc) -> bool:
        for b in range(bits.lo, bits.hi + 1):
            if owner[b] is not None:
                fail(loc, f"{who} overlap{'s' if who.startswith('field') else ''} {owner[b]} at bit {b}")
                return False
        for b in range(bits.lo, bits.hi + 1):
            owner[b] = who
        return True

    for f in fmt.fields:
        who = f"field '{f.name}'" if f.name else ("fixed bits" if f.kind == "fixed" else "ignored bits")
        if f.name and f.name in fields:
            fail(f.loc, f"duplicate field '{f.name}' in format {fmt.name}")
            continue
        if f.kind in ("plain", "fixed", "ignore"):
            bits_of = f"field '{f.name}' bits" if f.name else who
            if not _range_ok(f.bits, width, bits_of, fail) or not claim(f.bits, who, f.bits.loc):
                continue
            if f.value is not None and f.value >= (1 << f.bits.width):
                fail(f.value_loc if f.value_loc.line else f.loc,
                     f"value {f.value:#x} does not fit in {f.bits.width}-bit {who}")
                continue
            if f.kind == "fixed":
                m = ((1 << f.bits.width) - 1) << f.bits.lo
                fixed_mask |= m
                fixed_match |= f.value << f.bits.lo
            elif f.kind == "plain":
                fields[f.name] = FieldLayout(f.name, ((0, f.bits.lo, f.bits.width),), f.bits.width, 0, f.value)
            continue
        # scattered
        pieces = []
        vowner: dict[int, bool] = {}
        ok = True
        for p in f.pieces:
            if not _range_ok(p.value, 64, f"field '{f.name}' value bits", fail, "64 bits") or \
                    not _range_ok(p.word, width, f"field '{f.name}' bits", fail):
                ok = False
                continue
            if p.value.width != p.word.width:
                fail(p.loc, f"piece {_b(p.value)} = {_b(p.word)} of field '{f.name}' maps "
                             f"{p.value.width} value bits to {p.word.width} word bits")
                ok = False
                continue
            if any(b in vowner for b in range(p.value.lo, p.value.hi + 1)):
                fail(p.loc, f"value bits {_b(p.value)} of field '{f.name}' are mapped twice")
                ok = False
                continue
            for b in range(p.value.lo, p.value.hi + 1):
                vowner[b] = True
            if not claim(p.word, who, p.loc):
                ok = False
                continue
            pieces.append((p.value.lo, p.word.lo, p.word.width))
        if not ok or not pieces:
            continue
        lo, hi = min(vowner), max(vowner)
        missing = [b for b in range(lo, hi + 1) if b not in vowner]
        if missing:
            fail(f.loc, f"value bit {missing[0]} of field '{f.name}' is not mapped to the word")
            continue
        fields[f.name] = FieldLayout(f.name, tuple(sorted(pieces)), hi + 1, lo, None)
    uncovered = [b for b in range(width) if owner[b] is None]
    if uncovered and not failed:  # after a field error the gap is its consequence, not a new error
        runs = _runs(uncovered)
        text = ", ".join(f"{h}:{l}" if h != l else str(h) for h, l in runs)
        error(fmt.loc, f"bits {text} of format {fmt.name} are not covered; add a field or `ignore {runs[0][0]}:{runs[0][1]}`")
    return FormatLayout(fmt.name, width, fields, fixed_mask, fixed_match, fmt.bundle)


def _b(bits: ir.Bits) -> str:
    return str(bits.hi) if bits.hi == bits.lo else f"{bits.hi}:{bits.lo}"


def _runs(bits: list[int]) -> list[tuple[int, int]]:
    runs: list[tuple[int, int]] = []
    for b in sorted(bits, reverse=True):
        if runs and runs[-1][1] == b + 1:
            runs[-1] = (runs[-1][0], b)
        else:
            runs.append((b, b))
    return runs


@dataclass(frozen=True)
class Encoded:
    """An instruction's decoding key: word & mask == match identifies it."""
    name: str
    group: str  # instructions are only compared within a group (slot name, or format width)
    mask: int
    match: int
    loc: ir.Loc


def find_overlaps(encs: list[Encoded], error: ErrorFn) -> None:
    """Report pairs of instructions that no decoder can tell apart.

    A pair whose fixed bits agree wherever both are fixed overlaps. That is allowed when one
    pattern is strictly more specific (the decoder tries it first, as for RISC-V hints);
    otherwise some word matches both and neither wins."""
    groups: dict[str, list[Encoded]] = {}
    for e in encs:
        groups.setdefault(e.group, []).append(e)
    for members in groups.values():
        common = ~0
        for e in members:
            common &= e.mask
        buckets: dict[int, list[Encoded]] = {}
        for e in members:
            buckets.setdefault(e.match & common, []).append(e)
        for bucket in buckets.values():
            for i, a in enumerate(bucket):
                for b in bucket[i + 1:]:
                    both = a.mask & b.mask
                    if (a.match & both) != (b.match & both):
                        continue
                    if a.mask != b.mask and (a.mask & b.mask) in (a.mask, b.mask):
                        continue  # one is strictly more specific
                    later, earlier = (b, a) if (b.loc.line, b.loc.column) >= (a.loc.line, a.loc.column) else (a, b)
                    why = "identical fixed bits" if a.mask == b.mask else "their fixed bits overlap and neither is more specific"
                    error(later.loc, f"instructions {earlier.name} and {later.name} cannot be told apart by a decoder ({why}: "
                                     f"mask {later.mask:#x} match {later.match:#x})")
