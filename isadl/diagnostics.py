"""Located diagnostics in GNU style: ``path:line:col: error: message``, source line, caret."""
from __future__ import annotations

from dataclasses import dataclass

from .ir import Loc, NOWHERE


@dataclass(frozen=True)
class Diagnostic:
    loc: Loc
    message: str
    severity: str = "error"
    notes: tuple = ()  # Diagnostics of severity "note" that locate it further (e.g. a macro's invocation)

    def render(self, sources: dict[str, str] | None = None) -> str:
        text = self._render(sources)
        for note in self.notes:  # one located line each, without the source excerpt
            text += f"\n{note.loc}: {note.severity}: {note.message}"
        return text

    def _render(self, sources: dict[str, str] | None) -> str:
        if self.loc == NOWHERE or not self.loc.line:
            head = f"{self.loc.path}: {self.severity}: {self.message}" if self.loc.path != NOWHERE.path \
                else f"{self.severity}: {self.message}"
            return head
        text = f"{self.loc}: {self.severity}: {self.message}"
        source = (sources or {}).get(self.loc.path)
        if source is not None:
            lines = source.splitlines()
            if 0 < self.loc.line <= len(lines):
                line = lines[self.loc.line - 1]
                caret = "".join(c if c == "\t" else " " for c in line[: max(self.loc.column - 1, 0)])
                text += f"\n{line}\n{caret}^"
        return text


class IsaError(Exception):
    """One or more errors in an ISA description; ``str()`` gives the rendered report."""

    def __init__(self, diagnostics: list[Diagnostic], sources: dict[str, str] | None = None):
        self.diagnostics = sorted(diagnostics, key=lambda d: (d.loc.path, d.loc.line, d.loc.column))
        self.sources = sources or {}
        super().__init__(self.render())

    def render(self) -> str:
        return "\n".join(d.render(self.sources) for d in self.diagnostics)

    @property
    def first(self) -> Diagnostic:
        return self.diagnostics[0]


class Reporter:
    """Collects diagnostics so that one pass reports every error it can find."""

    MAX_ERRORS = 50

    def __init__(self, sources: dict[str, str] | None = None):
        self.diagnostics: list[Diagnostic] = []
        self.sources = sources if sources is not None else {}

    def error(self, loc: Loc, message: str) -> None:
        if len(self.diagnostics) < self.MAX_ERRORS:
            self.diagnostics.append(Diagnostic(loc, message))

    @property
    def failed(self) -> bool:
        return bool(self.diagnostics)

    def raise_if_failed(self) -> None:
        if self.diagnostics:
            raise IsaError(self.diagnostics, self.sources)


def did_you_mean(name: str, candidates) -> str:
    import difflib
    close = difflib.get_close_matches(name, list(candidates), n=1, cutoff=0.6)
    return f"; did you mean '{close[0]}'?" if close else ""
