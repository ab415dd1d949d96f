"""One writer per run directory: an OS file lock (filelock: flock/fcntl on POSIX, LockFileEx on
Windows) on DIR/.lock, held while an agent run or a bench driver writes into DIR. The lock dies
with its process (a kill -9 frees it), so a stale lock never blocks a rerun.

    with RunLock(out, "kcgen agent"):
        ...

A second process gets LockedError naming the holder (pid, host, what it runs, since when) from
DIR/.lock.owner, which the holder writes once it has the lock (a separate file: filelock truncates
the lock file when it opens it).
"""
from __future__ import annotations

import json
import os
import socket
import sys
import time
from pathlib import Path

from filelock import FileLock, Timeout


class LockedError(Exception):
    """The directory is in use by another process."""


class RunLock:
    def __init__(self, directory: Path, what: str = ""):
        self.directory = Path(directory)
        self.what = what or " ".join(os.path.basename(a) if i == 0 else a for i, a in enumerate(sys.argv))[:200]
        self._lock = FileLock(str(self.directory / ".lock"), timeout=0, is_singleton=False)
        self._owner = self.directory / ".lock.owner"

    def acquire(self) -> "RunLock":
        self.directory.mkdir(parents=True, exist_ok=True)
        try:
            self._lock.acquire(timeout=0)
        except Timeout:
            raise LockedError(f"{self.directory} is in use by {self.holder()}: wait for it to finish or stop "
                              f"it (one process writes a run directory at a time)") from None
        self._owner.write_text(json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "what": self.what,
                                           "since": time.strftime("%Y-%m-%d %H:%M:%S")}), encoding="utf-8")
        return self

    def holder(self) -> str:
        try:
            o = json.loads(self._owner.read_text(encoding="utf-8"))
            return f"process {o['pid']} on {o['host']} ({o['what']}, since {o['since']})"
        except (OSError, ValueError, KeyError, TypeError):
            return "another process"

    def release(self) -> None:
        if self._lock.is_locked:
            try:
                self._owner.unlink()
            except OSError:
                pass
            self._lock.release(force=True)

    def __enter__(self) -> "RunLock":
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()


def die_with_parent(parent: int, cleanup=None, every: float = 0.5) -> None:
    """Exit this process (after `cleanup`) as soon as process `parent` is gone, so a worker never
    goes on with a run its killed driver no longer owns. A daemon thread polls the parent id
    (portable, unlike Linux's PR_SET_PDEATHSIG): an orphan is re-parented, so the id changes."""
    import threading

    def watch() -> None:
        while True:
            time.sleep(every)
            if os.getppid() != parent:
                try:
                    if cleanup is not None:
                        cleanup()
                finally:
                    os._exit(70)
    threading.Thread(target=watch, name="die-with-parent", daemon=True).start()
