"""Document tree → GitHub-flavoured Markdown.

Prose is escaped so that text from the description (``i*MLEN*s``, ``a < b``) shows as written;
code spans use a fence longer than any backtick run inside them; table cells escape ``|``.
"""
from __future__ import annotations

import re

from .model import Bullets, Code, CodeBlock, Diagram, Document, Heading, Inlines, Link, Para, Table

# Only what would change the meaning is escaped, so the raw file stays readable for agents:
# backslashes, backticks and asterisks; `_` at a word edge; `<` that could open a tag; `&` that could
# start an entity; `](` that could make a link.
_SPECIAL = re.compile(r"([\\`*])|<(?=[A-Za-z/!?])|&(?=#?[A-Za-z0-9]+;)|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")


def text(s: str) -> str:
    s = _SPECIAL.sub(lambda m: "\\" + m.group(0), s)
    return s.replace("](", "]\\(")


def _line_start(s: str) -> str:
    """A paragraph must not start a heading, list, quote or table by accident."""
    if s[:1] in ("#", "+", "-", "=", "|", ">") or re.match(r"\d+[.)](\s|$)", s):
        return "\\" + s
    return s


def code(s: str) -> str:
    s = s.replace("\n", " ")
    run = max((len(m) for m in re.findall(r"`+", s)), default=0)
    fence = "`" * (run + 1)
    pad = " " if s.startswith("`") or s.endswith("`") or not s.strip() else ""
    return f"{fence}{pad}{s}{pad}{fence}"


def inline(parts: Inlines) -> str:
    out = []
    for p in parts:
        if isinstance(p, Code):
            out.append(code(p.text))
        elif isinstance(p, Link):
            out.append(f"[{code(p.text) if p.code else text(p.text)}](#{p.anchor})")
        else:
            out.append(text(p))
    return "".join(out)


def _cell(parts: Inlines) -> str:
    return inline(parts).replace("|", "\\|") or " "


def _table(header, rows) -> list[str]:
    out = ["| " + " | ".join(_cell((h,)) for h in header) + " |",
           "|" + "|".join("---" for _ in header) + "|"]
    for r in rows:
        out.append("| " + " | ".join(_cell(c) for c in r) + " |")
    return out


def _code_block(body: str) -> list[str]:
    run = max((len(m) for m in re.findall(r"^\s*(`{3,}|~{3,})", body, re.M)), default=0)
    fence = "`" * max(3, run + 1)
    return [fence + "text", *body.split("\n"), fence]


def _diagram(d: Diagram) -> list[str]:
    cells = d.cells
    out = [text(d.caption) + ":", ""]
    header = ("bits",) + tuple(c.range for c in cells)
    out += _table(header, [(("field",),) + tuple((c.field_label,) for c in cells),
                           (("value",),) + tuple((c.content or "-",) for c in cells)])
    return out


def render(doc: Document) -> str:
    out: list[str] = []
    for b in doc.blocks:
        if isinstance(b, Heading):
            out.append(f'<a id="{b.anchor}"></a>')
            out.append("#" * b.level + " " + inline(b.text))
        elif isinstance(b, Para):
            out.append(_line_start(inline(b.text)))
        elif isinstance(b, Bullets):
            out.extend("- " + inline(item) for item in b.items)
        elif isinstance(b, Table):
            out.extend(_table(b.header, b.rows))
        elif isinstance(b, CodeBlock):
            if b.label:
                out.append(f"*{text(b.label)}:*")
                out.append("")
            out.extend(_code_block(b.text))
        elif isinstance(b, Diagram):
            out.extend(_diagram(b))
        out.append("")
    return "\n".join(out).rstrip("\n") + "\n"
