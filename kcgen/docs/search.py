"""grep over the text index: whole records in, whole records out, bounded."""
from __future__ import annotations

import re


def records(index_text: str) -> list[str]:
    return [r.strip("\n") for r in re.split(r"\n[ \t]*\n", index_text) if r.strip()]


def compile_pattern(pattern: str, ignore_case: bool = False) -> re.Pattern:
    try:
        return re.compile(pattern, re.MULTILINE | (re.IGNORECASE if ignore_case else 0))
    except re.error as exc:
        raise ValueError(f"bad pattern '{pattern}': {exc}") from None


PAGES = ("INSTRUCTION: ", "PSEUDO: ")  # the records of instruction pages, shown before overview text

NARROW = ("To narrow it: '^INSTRUCTION: NAME$' gives one instruction's page (NAME as in the reference, "
          "e.g. V_RED_SUM), '^MNEMONIC: name$' every form of a mnemonic, '^SYNTAX: .*text' a syntax, "
          "'^(PARAM|MEMORY|REGISTERS|ABI|TIMING): ' the machine's other records; a longer pattern matches fewer.")


def _more(n: int) -> str:
    return f"[… {n} more match{'es' if n != 1 else ''}]\n{NARROW}"


def _rank(rec: str, rx: re.Pattern) -> tuple[int, int]:
    """Instruction pages first, those whose title line matches first among them: a search for
    a mnemonic fragment must show its pages before a long overview record that mentions it."""
    head = rec.split("\n", 1)[0]
    return (0 if rec.startswith(PAGES) else 1, 0 if rx.search(head) else 1)


def grep(index_text: str, pattern: str, context: int = 0, ignore_case: bool = False,
         max_matches: int = 50, max_chars: int = 8000) -> str:
    """The records of ``index_text`` that ``pattern`` (a Python regex, ``^``/``$`` per line) matches.

    Instruction and pseudo-instruction pages come first (those whose title line matches first),
    then the other records, each in index order. ``context`` neighbouring records are shown on each
    side of a match; with context, groups that are not adjacent are separated by a ``--`` line, as
    GNU grep does. At most ``max_matches`` matching records and about ``max_chars`` characters are
    returned; matches left out are counted in a final ``[… N more matches]`` line followed by how to
    narrow the pattern. No match gives "".
    A bad regex raises ValueError."""
    rx = compile_pattern(pattern, ignore_case)
    if context < 0:
        raise ValueError(f"context must not be negative, got {context}")
    if max_matches < 1 or max_chars < 1:
        raise ValueError("max_matches and max_chars must be at least 1")
    recs = records(index_text)
    hits = sorted((i for i, r in enumerate(recs) if rx.search(r)), key=lambda i: (*_rank(recs[i], rx), i))
    if not hits:
        return ""
    hit_set = set(hits)
    out: list[str] = []
    size = 0
    shown: set[int] = set()
    last = None
    for h in hits:
        if h in shown:  # already printed as another match's context
            continue
        if len(shown & hit_set) >= max_matches:
            break
        want = [i for i in range(max(0, h - context), min(len(recs), h + context + 1)) if i not in shown]
        chunk = []
        if context and last is not None and want[0] != last + 1:
            chunk.append("--")
        chunk += [recs[i] for i in want]
        text = "\n\n".join(chunk)
        if out and size + len(text) + 2 > max_chars:
            continue  # a smaller match further on may still fit; this one is counted as left out
        if not out and len(text) > max_chars:  # one huge record (or group): cut it, and say so
            text = text[:max_chars].rstrip() + "\n[… output truncated]"
        out.append(text)
        size += len(text) + 2
        shown.update(want)
        last = want[-1]
    left = len(hit_set - shown)
    if left:
        out.append(_more(left))
    elif out[-1].endswith("[… output truncated]"):
        out.append(NARROW)
    return "\n\n".join(out) + "\n"
