"""The kernel ABI section shows the callee-saved registers (`abi { preserve }`), as written and by their
canonical names, in Markdown, HTML and the search index; an ABI without them says so."""
from __future__ import annotations

import re

import isadl
import kcgen.docs as docs

try:
    from tests.docs.conftest import FIXTURES
except ImportError:  # pytest's rootdir-relative import (tests/docs on sys.path)
    from conftest import FIXTURES


def _rv32i_with_preserve():
    text = (FIXTURES / "rv32i_mini.isa").read_text()
    assert "    end halt ebreak\n" in text
    return isadl.load_text(text.replace("    end halt ebreak\n", "    end halt ebreak\n    preserve s0-s11, sp, gp, tp\n"),
                           "rv32i_preserve.isa")


def test_preserved_registers_in_every_format(helpers):
    spec = _rv32i_with_preserve()
    md = helpers.md_section(docs.render_markdown(spec), "abi")
    line = next(x for x in md.splitlines() if x.startswith("- Preserved"))
    assert line == ("- Preserved (callee-saved): `s0-s11, sp, gp, tp` = `x2..x4, x8, x9, x18..x27`; "
                    "the kernel must end with each of them holding its value at entry")
    abi = helpers.index_record(docs.render_index(spec), "ABI: rv32i_mini")
    assert re.search(r"^PRESERVE: s0-s11, sp, gp, tp = x2\.\.x4, x8, x9, x18\.\.x27$", abi, re.M)
    page = docs.render_html(spec)
    assert helpers.check_html(page).errors == []
    assert "<code>s0-s11, sp, gp, tp</code>" in page and "<code>x2..x4, x8, x9, x18..x27</code>" in page


def test_canonical_names_are_not_repeated(helpers):
    text = (FIXTURES / "rv32i_mini.isa").read_text()
    spec = isadl.load_text(text.replace("    end halt ebreak\n", "    end halt ebreak\n    preserve x8-x9, x18\n"))
    abi = helpers.index_record(docs.render_index(spec), "ABI: rv32i_mini")
    assert re.search(r"^PRESERVE: x8-x9, x18$", abi, re.M)
    assert "- Preserved (callee-saved): `x8-x9, x18`; the kernel" in docs.render_markdown(spec)


def test_an_abi_without_preserve_says_none(specs, helpers):
    spec = specs["rv32i_mini"]
    assert "PRESERVE: none" in helpers.index_record(docs.render_index(spec), "ABI: rv32i_mini")
    assert "- Preserved (callee-saved): none; the kernel may end with any register changed" in \
        docs.render_markdown(spec)
