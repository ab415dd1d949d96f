"""Value types of the semantics language."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional, Union


@dataclass(frozen=True)
class BoolT:
    def __str__(self):
        return "bool"

    @property
    def bits(self) -> int:
        return 1


@dataclass(frozen=True)
class IntLitT:
    """`int`: the untyped integer of literals, parameters and loop variables; adapts to context."""

    def __str__(self):
        return "int"

    @property
    def bits(self) -> int:
        return 64


@dataclass(frozen=True)
class FloatLitT:
    """Untyped float literal; adapts to any float format."""

    def __str__(self):
        return "float literal"

    @property
    def bits(self) -> int:
        return 64


@dataclass(frozen=True)
class IntT:
    signed: bool
    width: int

    def __str__(self):
        return f"{'i' if self.signed else 'u'}{self.width}"

    @property
    def bits(self) -> int:
        return self.width

    @property
    def min(self) -> int:
        return -(1 << (self.width - 1)) if self.signed else 0

    @property
    def max(self) -> int:
        return (1 << (self.width - 1)) - 1 if self.signed else (1 << self.width) - 1


@dataclass(frozen=True)
class FloatT:
    name: str
    width: int

    def __str__(self):
        return self.name

    @property
    def bits(self) -> int:
        return self.width


@dataclass(frozen=True)
class VecT:
    elem: "Type"
    count: int

    def __str__(self):
        return f"{self.elem}[{self.count}]"

    @property
    def bits(self) -> int:
        return self.elem.bits * self.count


@dataclass(frozen=True)
class VoidT:
    def __str__(self):
        return "nothing"

    @property
    def bits(self) -> int:
        return 0


Type = Union[BoolT, IntLitT, FloatLitT, IntT, FloatT, VecT, VoidT]
BOOL, INT, FLOATLIT, VOID = BoolT(), IntLitT(), FloatLitT(), VoidT()

_INT_NAME = re.compile(r"([iu])([0-9]+)$")
MAX_INT_WIDTH = 64


def scalar_by_name(name: str, floats: dict[str, int]) -> Optional[Type]:
    """A scalar type from its name: bool, iN/uN, f32/f64, or a declared float format."""
    if name == "bool":
        return BOOL
    m = _INT_NAME.match(name)
    if m and 1 <= int(m.group(2)) <= MAX_INT_WIDTH:
        return IntT(m.group(1) == "i", int(m.group(2)))
    if name in floats:
        return FloatT(name, floats[name])
    return None


def is_int(t: Type) -> bool:
    return isinstance(t, (IntT, IntLitT))


def is_float(t: Type) -> bool:
    return isinstance(t, (FloatT, FloatLitT))


def is_numeric(t: Type) -> bool:
    return is_int(t) or is_float(t)


def is_scalar(t: Type) -> bool:
    return isinstance(t, (BoolT, IntT, FloatT, IntLitT, FloatLitT))
