"""Encoding tables derived from a checked Spec, shared by the assembler and the disassembler."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from isadl.check import InsnSpec, OperandSpec, Spec
from isadl.encoding import FieldLayout, FormatLayout


@dataclass(frozen=True)
class Binding:
    """Operand ``operand`` lives in ``field`` of the instruction word."""
    operand: OperandSpec
    field: FieldLayout


@dataclass(frozen=True)
class Encoding:
    insn: InsnSpec
    width: int  # bits of this instruction's format (a slot width in VLIW ISAs)
    bindings: tuple[Binding, ...]
    slot: str

    @property
    def name(self) -> str:
        return self.insn.insn.name


def encodings(spec: Spec) -> dict[str, Encoding]:
    out = {}
    for name, s in spec.instructions.items():
        if s.format is None:
            continue
        binds = tuple(Binding(s.operands[op], s.format.fields[f]) for f, op in s.fields.items())
        out[name] = Encoding(s, s.format.width, binds, s.insn.slot)
    return out


def operand_range(op: OperandSpec) -> tuple[int, int]:
    """The values an operand accepts, as written in assembly (pc-relative: the offset)."""
    if op.kind == "reg":
        return op.offset, op.offset + op.count - 1
    return op.lo, op.hi


def pcrel_base(spec: Spec) -> str:
    d = spec.isa.dialect
    if d:
        for o in d.options:
            if o.name == "pcrel_base" and o.values:
                return str(o.values[0])
    return "insn"


def bundle_formats(spec: Spec) -> list[FormatLayout]:
    """VLIW bundle formats, narrowest first (the assembler picks the first that holds a bundle)."""
    return sorted((f for f in spec.formats.values() if f.bundle), key=lambda f: (f.width, f.name))


def slot_nops(spec: Spec, encs: dict[str, Encoding]) -> dict[str, Optional[int]]:
    """Encoding of each slot's declared nop (filled into slots a bundle leaves empty), else None."""
    by_mnemonic = {e.insn.template.mnemonic: e for e in encs.values()}
    return {s.name: (by_mnemonic[s.nop].insn.match if s.nop in by_mnemonic else None) for s in spec.isa.slots}
