"""The assembler's output: a program image with symbols and a source map."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional


@dataclass
class Section:
    name: str
    base: int = 0
    data: bytearray = field(default_factory=bytearray)

    @property
    def end(self) -> int:
        return self.base + len(self.data)


@dataclass(slots=True)
class Placed:
    """One instruction (or VLIW bundle) as placed in memory."""
    address: int
    size: int  # bytes
    ops: tuple[tuple[str, dict], ...]  # (instruction name, {operand: value}) per slot; pc-relative: the target
    line: int  # source line (1-based)
    text: str  # the source line, stripped

    @property
    def name(self) -> str:
        return self.ops[0][0]

    def operands(self, slot: int = 0) -> dict[str, int]:
        return self.ops[slot][1]


@dataclass
class Program:
    path: str
    sections: dict[str, Section]
    symbols: dict[str, int]
    globals: set[str]
    source_map: Callable[[], list] = field(repr=False, compare=False)  # builds `records`, once, when asked
    entry: int
    endian: str = "little"
    warnings: list = field(default_factory=list)
    expanded: bool = False  # macros or .rept/.irp expanded: several records may share a source line

    @property
    def records(self) -> list:
        """(address, size, ops, line, text) per instruction (or VLIW bundle) in source order, which
        is address order within a section; ops: ((name, {operand: value}), ...), one per slot.
        Built on first use: most assemblies only want bytes."""
        built = self.__dict__.get("_records")
        if built is None:
            built = self.source_map()
            self.__dict__["_records"] = built
        return built

    @property
    def placed(self) -> list[Placed]:
        """Every instruction as Placed, in the order of `records`."""
        built = self.__dict__.get("_placed")
        if built is None:
            built = [Placed(*r) for r in self.records]
            self.__dict__["_placed"] = built
        return built

    @property
    def text(self) -> Section:
        return self.sections[".text"]

    def source_line(self, address: int) -> Optional[int]:
        i = self._index().get(address)
        return self.placed[i].line if i is not None else None

    def at(self, address: int) -> Optional[Placed]:
        i = self._index().get(address)
        return self.placed[i] if i is not None else None

    def _index(self) -> dict[int, int]:
        idx = self.__dict__.get("_by_address")
        if idx is None:
            idx = {p.address: i for i, p in enumerate(self.placed)}
            self.__dict__["_by_address"] = idx
        return idx

    def image(self) -> bytes:
        """The flat binary: every section at its address, from the lowest base, gaps zero-filled."""
        present = [s for s in self.sections.values() if s.data]
        if not present:
            return b""
        lo = min(s.base for s in present)
        hi = max(s.end for s in present)
        out = bytearray(hi - lo)
        for s in present:
            out[s.base - lo:s.end - lo] = s.data
        return bytes(out)

    def words(self, width_bytes: int) -> list[int]:
        """The text section as instruction words (the word granule of the ISA)."""
        data = self.text.data
        order = "little" if self.endian == "little" else "big"
        return [int.from_bytes(data[i:i + width_bytes], order) for i in range(0, len(data), width_bytes)]
