"""Assembler tests. A package, so that its module names (test_negative, test_roundtrip) do not clash
with those of tests/isadl.

Being a package makes pytest put tests/ on sys.path. There, the directory tests/isadl would shadow
the real isadl package (as a namespace package) whenever the repository root is not on sys.path
itself, e.g. under `.venv/bin/pytest` or when pytest runs from another directory. Put the root first.
"""
import os
import sys
from pathlib import Path

_ROOT = str(Path(__file__).resolve().parents[2])
if not any(os.path.abspath(p or os.curdir) == _ROOT for p in sys.path):
    sys.path.insert(0, _ROOT)
if getattr(sys.modules.get("isadl"), "__file__", "") is None:  # a namespace package imported by mistake
    for _name in [n for n in sys.modules if n == "isadl" or n.startswith("isadl.")]:
        del sys.modules[_name]
