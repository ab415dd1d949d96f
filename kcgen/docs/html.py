"""Document tree → one standalone HTML page (inline CSS, no scripts, no external assets).

Every piece of text goes through ``html.escape``; every element is closed explicitly, so the page
is well-formed as XML-ish markup too (the only void element is ``<meta>`` and ``<col>``).
"""
from __future__ import annotations

from html import escape

from .model import Bullets, Code, CodeBlock, Diagram, Document, Heading, Inlines, Link, Para, Table

CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; line-height: 1.45; margin: 0; color: #1d1d1f; }
main { max-width: 72rem; margin: 0 auto; padding: 1rem 2rem 4rem; }
h1 { border-bottom: 2px solid #333; padding-bottom: .3rem; }
h2 { border-bottom: 1px solid #bbb; margin-top: 2.5rem; padding-bottom: .2rem; }
h4 { margin-top: 2rem; font-size: 1.15rem; border-top: 1px dashed #ccc; padding-top: 1rem; }
code, pre { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; font-size: .92em; }
code { background: #f3f3f5; padding: 0 .2em; border-radius: 3px; }
pre { background: #f6f8fa; border: 1px solid #e1e4e8; padding: .6rem .8rem; overflow-x: auto; }
pre code { background: none; padding: 0; }
table { border-collapse: collapse; margin: .6rem 0; }
th, td { border: 1px solid #ccc; padding: .25rem .5rem; vertical-align: top; text-align: left; }
th { background: #f0f0f2; }
.caption { font-style: italic; margin: .6rem 0 .2rem; }
table.enc { table-layout: fixed; width: 100%; font-family: ui-monospace, Menlo, Consolas, monospace; font-size: .85em; }
table.enc td { text-align: center; overflow-wrap: anywhere; }
table.enc tr.bits td { background: #fafafa; color: #555; font-size: .9em; }
table.enc td.k-operand { background: #e8f1ff; }
table.enc td.k-const, table.enc td.k-fixed { background: #f1f1f1; }
table.enc td.k-ignore { background: #fff; color: #999; }
table.enc td.k-slot { background: #eef8ee; }
a { color: #0550ae; text-decoration: none; }
a:hover { text-decoration: underline; }
"""


def _inline(parts: Inlines) -> str:
    out = []
    for p in parts:
        if isinstance(p, Code):
            out.append(f"<code>{escape(p.text)}</code>")
        elif isinstance(p, Link):
            body = f"<code>{escape(p.text)}</code>" if p.code else escape(p.text)
            out.append(f'<a href="#{escape(p.anchor)}">{body}</a>')
        else:
            out.append(escape(p))
    return "".join(out)


def _table(header, rows, cls: str = "") -> list[str]:
    out = [f'<table class="{escape(cls)}">' if cls else "<table>", "<thead><tr>" +
           "".join(f"<th>{escape(h)}</th>" for h in header) + "</tr></thead>", "<tbody>"]
    for r in rows:
        out.append("<tr>" + "".join(f"<td>{_inline(c)}</td>" for c in r) + "</tr>")
    out += ["</tbody>", "</table>"]
    return out


def _diagram(d: Diagram) -> list[str]:
    proportional = d.width <= 64
    out = [f'<p class="caption">{escape(d.caption)}</p>', '<table class="enc">']
    if proportional:
        out.append("<colgroup>" + "<col>" * d.width + "</colgroup>")

    def span(c) -> str:
        return f' colspan="{c.width}"' if proportional and c.width > 1 else ""

    out.append('<tbody>')
    out.append('<tr class="bits">' + "".join(f"<td{span(c)}>{escape(c.range)}</td>" for c in d.cells) + "</tr>")
    out.append('<tr class="fields">' + "".join(
        f'<td{span(c)} class="k-{escape(c.kind)}">{escape(c.field_label)}</td>' for c in d.cells) + "</tr>")
    out.append('<tr class="values">' + "".join(
        f'<td{span(c)} class="k-{escape(c.kind)}">{escape(c.content)}</td>' for c in d.cells) + "</tr>")
    out += ["</tbody>", "</table>"]
    return out


def render(doc: Document) -> str:
    out = ["<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
           f"<title>{escape(doc.title)}</title>", "<style>" + CSS + "</style>", "</head>", "<body>", "<main>"]
    for b in doc.blocks:
        if isinstance(b, Heading):
            out.append(f'<h{b.level} id="{escape(b.anchor)}">{_inline(b.text)}</h{b.level}>')
        elif isinstance(b, Para):
            out.append(f"<p>{_inline(b.text)}</p>")
        elif isinstance(b, Bullets):
            out.append("<ul>")
            out.extend(f"<li>{_inline(item)}</li>" for item in b.items)
            out.append("</ul>")
        elif isinstance(b, Table):
            out.extend(_table(b.header, b.rows))
        elif isinstance(b, CodeBlock):
            if b.label:
                out.append(f'<p class="caption">{escape(b.label)}:</p>')
            out.append(f"<pre><code>{escape(b.text)}</code></pre>")
        elif isinstance(b, Diagram):
            out.extend(_diagram(b))
    out += ["</main>", "</body>", "</html>"]
    return "\n".join(out) + "\n"
