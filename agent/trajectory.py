"""A run's trajectory: one JSONL file, one record per event, appended and flushed (and fsynced) as
it happens, so a killed run loses at most the event in flight and can be resumed from its file.

Records: {"type": "meta"} first (the run's settings), then "message" (system / user prompts),
"assistant" (one model turn: text, tool calls, tokens, cost, seconds), "tool" (one tool call's
result, with the evaluation's figures for run_evaluation), "error", "end" (the loop is over; the
final verification follows) and last "summary" (with the verification: its seeds, never shown to
the model, are only there). A resumed run may add "resume" records, and a summary without
verification (an older run's) is followed by a verified one: the last summary is the run's.
Nothing secret is written: every record goes through kcgen.redact (secret environment values and
their encodings, token-shaped strings, URL passwords) first.
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Iterator

def redact(value, secrets: list[str] | None = None):
    """`value` with every secret replaced by [REDACTED] (kcgen.redact: the one function for all output)."""
    from kcgen.redact import redact as _redact
    return _redact(value, secrets)


class Trajectory:
    """Appends records to `path`; `records()` reads back what a previous process wrote."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._drop_torn_tail()

    def _drop_torn_tail(self) -> None:
        """A kill mid-write leaves a last line without its newline: cut it, so appends stay whole."""
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return
        if data and not data.endswith(b"\n"):
            with open(self.path, "r+b") as f:
                f.truncate(data.rfind(b"\n") + 1)

    def append(self, record: dict) -> dict:
        record = redact({**record, "time": round(time.time(), 3)})
        line = json.dumps(record, ensure_ascii=False, default=_jsonable)
        try:
            line.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate (a model's "\ud800"): JSON escapes keep it readable
            line = json.dumps(record, ensure_ascii=True, default=_jsonable)
        with open(self.path, "a", encoding="utf-8") as f:
            f.write(line + "\n")
            f.flush()
            os.fsync(f.fileno())
        return record

    def records(self) -> list[dict]:
        return list(read(self.path))


def read(path: Path) -> Iterator[dict]:
    """The complete records of a trajectory file (a line cut short by a kill is dropped)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        return
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            yield json.loads(line)
        except json.JSONDecodeError:
            continue  # the half-written last line of a killed run


def _jsonable(o):
    if hasattr(o, "model_dump"):
        return o.model_dump()
    if hasattr(o, "item"):
        return o.item()
    return str(o)
