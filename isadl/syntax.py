"""Assembly syntax templates: ``"lw {rd:x}, {off:i12}({rs1:x})"`` → mnemonic, literal text, operands.

One template drives both directions: the assembler matches text against it, the disassembler
prints through it. Errors carry the column inside the template string.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional, Union

_OPERAND = re.compile(r"\{([^{}]*)\}")
_MNEMONIC = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*$")
_IMM_KIND = re.compile(r"(i|u|pcrel)([0-9]+)$")


@dataclass(frozen=True)
class Operand:
    name: str
    kind: str  # a register file / regclass / enum name, or iN / uN / pcrelN
    default: Optional[Union[int, str]]  # None: required
    column: int  # 0-based offset of '{' in the template

    @property
    def optional(self) -> bool:
        return self.default is not None

    @property
    def imm(self) -> Optional[tuple[str, int]]:
        """('i'|'u'|'pcrel', width) for immediate kinds, else None."""
        m = _IMM_KIND.match(self.kind)
        return (m.group(1), int(m.group(2))) if m else None


@dataclass(frozen=True)
class Template:
    text: str
    mnemonic: str
    # Alternating parts after the mnemonic: literal strings and Operand objects.
    parts: tuple[Union[str, Operand], ...]

    @property
    def operands(self) -> tuple[Operand, ...]:
        return tuple(p for p in self.parts if isinstance(p, Operand))


class TemplateError(ValueError):
    def __init__(self, column: int, message: str):
        super().__init__(message)
        self.column = column  # 0-based offset in the template text


def parse_template(text: str) -> Template:
    m = _MNEMONIC.match(text)
    if not m:
        raise TemplateError(0, "syntax must start with a mnemonic")
    parts: list[Union[str, Operand]] = []
    pos = m.end()
    seen: set[str] = set()
    while pos < len(text):
        open_ = text.find("{", pos)
        close = text.find("}", pos)
        if open_ < 0 and close < 0:
            parts.append(text[pos:])
            break
        if close >= 0 and (open_ < 0 or close < open_):
            raise TemplateError(close, "unbalanced '}' in syntax")
        if close < 0 or ("{" in text[open_ + 1:close]):
            raise TemplateError(open_, "unbalanced '{' in syntax: an operand is written {name:kind}")
        if open_ > pos:
            parts.append(text[pos:open_])
        parts.append(_operand(text[open_ + 1:close], open_, seen))
        pos = close + 1
    ops = [p for p in parts if isinstance(p, Operand)]
    for a, b in zip(ops, ops[1:]):
        if a.optional and not b.optional:
            raise TemplateError(b.column, f"required operand '{b.name}' follows optional operand '{a.name}'")
    if parts and not (isinstance(parts[0], str) and parts[0][:1].isspace()):
        raise TemplateError(m.end(), "the mnemonic must be followed by a space")
    return Template(text, m.group(0), tuple(parts))


def _operand(body: str, column: int, seen: set[str]) -> Operand:
    name, sep, kind = body.partition(":")
    name, kind = name.strip(), kind.strip()
    if not sep or not kind:
        raise TemplateError(column, f"operand '{{{body}}}' needs a kind: {{name:kind}}")
    if not _NAME.match(name):
        raise TemplateError(column, f"bad operand name '{name}'")
    if name in seen:
        raise TemplateError(column, f"duplicate operand '{name}' in syntax")
    seen.add(name)
    default: Optional[Union[int, str]] = None
    if "=" in kind:
        kind, _, dflt = kind.partition("=")
        kind, dflt = kind.strip(), dflt.strip()
        try:
            default = int(dflt.replace("_", ""), 0)
        except ValueError:
            if not _NAME.match(dflt) and not dflt:
                raise TemplateError(column, f"bad default '{dflt}' for operand '{name}'") from None
            default = dflt
    if not _NAME.match(kind):
        raise TemplateError(column, f"bad operand kind '{kind}'")
    return Operand(name, kind, default, column)
