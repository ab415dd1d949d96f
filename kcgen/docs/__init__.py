"""Documentation generator: per-target Markdown, standalone HTML and a plain-text search index.

    spec = isadl.load("plena", defines={"VLEN": 128})
    kcgen.docs.render_markdown(spec)   # one Markdown page
    kcgen.docs.render_html(spec)       # one HTML page, inline CSS, anchors #insn-NAME
    kcgen.docs.render_index(spec)      # records for grep_docs
    kcgen.docs.write_docs(spec, "out") # files, returns their paths
    kcgen.docs.grep(index, r"^UNIT: dma", context=0)

Everything is derived from the checked Spec/IR only, and the output is deterministic.

Modules: ``facts`` (values, names, ranges), ``encoding`` (bit-field diagrams), ``semantics``
(statement pretty-printer), ``model`` (document tree), ``markdown`` / ``html`` (renderers of the
tree), ``index`` (text records), ``grep`` (record search, in ``search``), ``quickref`` (the compact
instruction reference of the agent's prompt).
"""
from __future__ import annotations

from pathlib import Path
from typing import Iterable

from isadl.check import Spec

from . import html as _html
from . import index as _index
from . import markdown as _markdown
from . import model as _model
from .search import grep, records

__all__ = ["render_markdown", "render_html", "render_index", "write_docs", "grep", "records", "FORMATS",
           "file_names"]

FORMATS = ("md", "html", "txt")


def render_markdown(spec: Spec) -> str:
    return _markdown.render(_model.build(spec))


def render_html(spec: Spec) -> str:
    return _html.render(_model.build(spec))


def render_index(spec: Spec) -> str:
    return _index.render(spec)


def file_names(spec: Spec) -> dict[str, str]:
    """Output file name per format: ``NAME.md``, ``NAME.html``, ``index.txt``."""
    return {"md": f"{spec.isa.name}.md", "html": f"{spec.isa.name}.html", "txt": "index.txt"}


def write_docs(spec: Spec, outdir: str | Path, formats: Iterable[str] | str = FORMATS) -> list[Path]:
    """Write the requested formats ("md", "html", "txt"; or "all") into ``outdir`` (created if
    needed), always in that order; returns the paths written."""
    formats = FORMATS if formats == "all" else (formats,) if isinstance(formats, str) else tuple(formats)
    unknown = [f for f in formats if f not in FORMATS]
    if unknown:
        raise ValueError(f"unknown docs format {unknown[0]!r}; use one of {', '.join(FORMATS)}")
    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    names = file_names(spec)
    renderers = {"md": render_markdown, "html": render_html, "txt": render_index}
    written = []
    for fmt in FORMATS:
        if fmt in formats:
            path = out / names[fmt]
            path.write_text(renderers[fmt](spec), encoding="utf-8")
            written.append(path)
    return written
