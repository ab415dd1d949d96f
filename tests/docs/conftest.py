"""Shared fixtures for the documentation generator tests."""
from __future__ import annotations

import html
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

import isadl

FIXTURES = Path(__file__).resolve().parent.parent / "isadl" / "fixtures"
NAMES = ("rv32i_mini", "vliw_mini", "plena_mini")


def load(name: str, defines=None):
    return isadl.load(FIXTURES / f"{name}.isa", defines or {})


@pytest.fixture(scope="session")
def specs():
    return {n: load(n) for n in NAMES}


class TagChecker(HTMLParser):
    """Records structural problems: unclosed, stray or mismatched tags; collects ids and hrefs."""
    VOID = {"meta", "col", "br", "hr", "img", "input", "link", "area", "base", "source", "wbr"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.ids: list[str] = []
        self.hrefs: list[str] = []
        self.tags: set[str] = set()

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        a = dict(attrs)
        if "id" in a:
            self.ids.append(a["id"])
        if "href" in a:
            self.hrefs.append(a["href"])
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in self.VOID:
            self.stack.pop()

    def handle_endtag(self, tag):
        if tag in self.VOID:
            self.errors.append(f"end tag for void element </{tag}>")
        elif not self.stack:
            self.errors.append(f"stray </{tag}>")
        elif self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes <{self.stack[-1]}>")
            if tag in self.stack:
                while self.stack.pop() != tag:
                    pass
        else:
            self.stack.pop()


def check_html(page: str) -> TagChecker:
    p = TagChecker()
    p.feed(page)
    p.close()
    return p


def html_section(page: str, anchor: str) -> str:
    """The HTML from the element with id=anchor up to the next instruction/pseudo heading."""
    start = page.index(f'id="{anchor}"')
    m = re.compile(r'<h[1-4] id="(insn|pseudo)-').search(page, start + 1)
    return page[start:m.start() if m else len(page)]


def html_text(fragment: str) -> str:
    """Visible text of an HTML fragment (tags dropped, entities decoded)."""
    return html.unescape(re.sub(r"<[^>]+>", "", fragment))


def md_section(page: str, anchor: str) -> str:
    start = page.index(f'<a id="{anchor}"></a>')
    m = re.compile(r'<a id="(insn|pseudo)-').search(page, start + 1)
    return page[start:m.start() if m else len(page)]


def index_record(index: str, first_line: str) -> str:
    for rec in index.split("\n\n"):
        if rec.split("\n", 1)[0] == first_line:
            return rec
    raise AssertionError(f"no record starting {first_line!r}")


@pytest.fixture
def helpers():
    class H:
        pass
    h = H()
    h.check_html = check_html
    h.html_section = html_section
    h.html_text = html_text
    h.md_section = md_section
    h.index_record = index_record
    h.load = load
    return h
