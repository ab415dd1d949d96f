"""Encoding diagrams: a format's word, MSB to LSB, cut into cells of consecutive bits.

A cell is a run of word bits that holds consecutive value bits of one thing: a field (bound to an
operand or to a constant), anonymous fixed bits, or ignored bits. Scattered fields give several
cells (RISC-V B-type: imm[12] at 31, imm[10:5] at 30:25, imm[4:1] at 11:8, imm[11] at 7).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from isadl.check import InsnSpec, Spec


@dataclass(frozen=True)
class Cell:
    hi: int  # word bits hi..lo (inclusive)
    lo: int
    kind: str  # operand | const | field | fixed | ignore | slot
    field: str = ""  # the format field ("" for fixed/ignore bits)
    value_hi: int = 0  # which bits of the field's value this cell holds
    value_lo: int = 0
    partial: bool = False  # holds only some of the field's value bits (or the low bits are implicit zeros)
    operand: str = ""  # kind operand: the operand encoded here
    bits: str = ""  # kind const/fixed (and a field with a default): the constant bits, MSB first

    @property
    def width(self) -> int:
        return self.hi - self.lo + 1

    @property
    def range(self) -> str:
        return str(self.hi) if self.hi == self.lo else f"{self.hi}:{self.lo}"

    def _slice(self, name: str) -> str:
        if not self.partial:
            return name
        if self.value_hi == self.value_lo:
            return f"{name}[{self.value_hi}]"
        return f"{name}[{self.value_hi}:{self.value_lo}]"

    @property
    def field_label(self) -> str:
        """The format field as it is cut here: ``imm[10:5]``; ``fixed``/``ignore`` for anonymous bits."""
        if self.kind in ("fixed", "ignore"):
            return self.kind
        return self._slice(self.field)

    @property
    def content(self) -> str:
        """What the bits hold for this instruction: the operand (sliced), or the constant bits."""
        if self.kind == "operand":
            return self._slice(self.operand)
        if self.kind in ("const", "fixed"):
            return self.bits
        if self.kind == "ignore":
            return "0" * self.width if self.width <= 8 else "0…0"
        if self.kind == "field" and self.bits:
            return f"= {self.bits}"
        if self.kind == "slot":
            return f"{self.field} op"
        return ""


def _bits(value: int, hi: int, lo: int) -> str:
    w = hi - lo + 1
    return format((value >> lo) & ((1 << w) - 1), f"0{w}b")


def cells(spec: Spec, format_name: str, insn: Optional[InsnSpec] = None) -> list[Cell]:
    """The cells of ``format_name``, MSB first; with ``insn``, filled with its operands and constants."""
    lay = spec.formats[format_name]
    fmt = spec.isa.format(format_name)
    # owner of each word bit: (kind, field, value bit)
    owner: list[tuple[str, str, int]] = [("ignore", "", 0)] * lay.width
    for fl in lay.fields.values():
        for vlo, wlo, width in fl.pieces:
            for k in range(width):
                owner[wlo + k] = ("field", fl.name, vlo + k)
    fixed_bits = set()
    for f in fmt.fields if fmt else ():
        if f.kind == "fixed" and f.bits is not None:
            for b in range(f.bits.lo, f.bits.hi + 1):
                owner[b] = ("fixed", "", b)
                fixed_bits.add(b)
    bound = insn.fields if insn else {}
    mask, match = (insn.mask, insn.match) if insn else (lay.fixed_mask, lay.fixed_match)

    runs: list[list] = []  # [kind, field, word_hi, word_lo, value_hi, value_lo]
    for b in range(lay.width - 1, -1, -1):
        kind, field, vb = owner[b]
        last = runs[-1] if runs else None
        if last and last[0] == kind and last[1] == field and last[3] == b + 1 and \
                (kind != "field" or last[5] == vb + 1):
            last[3], last[5] = b, vb
        else:
            runs.append([kind, field, b, b, vb, vb])

    out = []
    for kind, field, whi, wlo, vhi, vlo in runs:
        if kind == "fixed":
            out.append(Cell(whi, wlo, "fixed", bits=_bits(lay.fixed_match, whi, wlo)))
        elif kind == "ignore":
            out.append(Cell(whi, wlo, "ignore"))
        else:
            fl = lay.fields[field]
            partial = not (vlo == 0 and vhi == fl.value_width - 1)  # scaled fields show their bits
            if lay.bundle:
                out.append(Cell(whi, wlo, "slot", field, vhi, vlo, partial))
            elif field in bound:
                out.append(Cell(whi, wlo, "operand", field, vhi, vlo, partial, operand=bound[field]))
            elif insn is not None and (mask >> wlo) & ((1 << (whi - wlo + 1)) - 1):
                out.append(Cell(whi, wlo, "const", field, vhi, vlo, partial, bits=_bits(match, whi, wlo)))
            else:
                dflt = "" if fl.default is None else _bits(fl.insert(0, fl.default), whi, wlo)
                out.append(Cell(whi, wlo, "field", field, vhi, vlo, partial, bits=dflt))
    return out


def hex_word(value: int, width: int) -> str:
    return f"0x{value:0{(width + 3) // 4}x}"


def summary(spec: Spec, insn: InsnSpec) -> str:
    """``format B (32 bits), mask 0x0000707f, match 0x00000063``."""
    lay = insn.format
    if lay is None:
        return "no encoding"
    return f"format {lay.name} ({lay.width} bits), mask {hex_word(insn.mask, lay.width)}, " \
           f"match {hex_word(insn.match, lay.width)}"


def cells_text(cs: list[Cell]) -> str:
    """One line: ``31 target[12] | 30:25 target[10:5] | … | 6:0 1100011``."""
    parts = []
    for c in cs:
        if c.kind in ("operand", "const"):
            label = c.content if c.kind == "operand" else f"{c.field_label}={c.bits}"
        elif c.kind == "fixed":
            label = f"fixed={c.bits}"
        elif c.kind == "ignore":
            label = "ignore"
        else:
            label = c.field_label + (f"={c.bits}" if c.bits else "")
        parts.append(f"{c.range} {label}")
    return " | ".join(parts)
