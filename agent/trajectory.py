"""A run's trajectory: one JSONL file, one record per event, appended and flushed (and fsynced) as
it happens, so a killed run loses at most the event in flight and can be resumed from its file.

Records: {"type": "meta"} first (the run's settings), then "message" (system / user prompts),
"assistant" (one model turn: text, tool calls, tokens, cost, seconds), "tool" (one tool call's
result, with the evaluation's figures for run_evaluation), "error", "end" (the loop is over; the
final verification follows) and last "summary" (with the verification: its seeds, never shown to
the model, are only there). A resumed run may add "resume" records, and a summary without
verification (an older run's) is followed by a verified one: the last summary is the run's.
Nothing secret is written: strings that look like API keys or bearer tokens, and the values of
the environment's *_API_KEY / *_TOKEN / *_SECRET variables, are replaced by [REDACTED].
"""
from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path
from typing import Iterator

_KEYISH = re.compile(r"\b(sk-[A-Za-z0-9_\-]{16,}|(?:[Bb]earer|BEARER)\s+[A-Za-z0-9._\-]{16,}|"
                     r"AIza[0-9A-Za-z_\-]{30,}|xox[abp]-[0-9A-Za-z\-]{10,})")
_SECRET_ENV = re.compile(r"(API_KEY|_TOKEN|_SECRET|PASSWORD)$")


def _secrets() -> list[str]:
    return sorted((v for k, v in os.environ.items() if _SECRET_ENV.search(k) and len(v) >= 8), key=len, reverse=True)


def redact(value, secrets: list[str] | None = None):
    """`value` (any JSON-able structure) with every secret-looking string replaced."""
    secrets = _secrets() if secrets is None else secrets
    if isinstance(value, str):
        for s in secrets:
            value = value.replace(s, "[REDACTED]")
        return _KEYISH.sub("[REDACTED]", value)
    if isinstance(value, dict):
        return {k: ("[REDACTED]" if str(k).lower() in ("api_key", "authorization", "x-api-key") else
                    redact(v, secrets)) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact(v, secrets) for v in value]
    return value


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
