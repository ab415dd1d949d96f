"""Where the source tree's data lives, and loading its Python files by path.

`tasks/` and `agent/` are not installed packages (PyPI has unrelated ones by those names), so
their Python files are loaded from the source tree by path, once per process.
"""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parent.parent
TASKS = REPO / "tasks"
AGENT = REPO / "agent"
TARGETS = REPO / "targets"
_LOADED: dict[Path, ModuleType] = {}


def load_module(path: Path) -> ModuleType:
    path = Path(path).resolve()
    mod = _LOADED.get(path)
    if mod is None:
        name = "kernelcraft_" + "_".join(path.relative_to(REPO).with_suffix("").parts)
        spec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
        _LOADED[path] = mod
    return mod


def load_package(path: Path) -> ModuleType:
    """A directory with an __init__.py, imported as a package (its modules import each other
    relatively), once per process."""
    path = Path(path).resolve()
    mod = _LOADED.get(path)
    if mod is None:
        name = "kernelcraft_" + "_".join(path.relative_to(REPO).parts)
        spec = importlib.util.spec_from_file_location(name, path / "__init__.py",
                                                      submodule_search_locations=[str(path)])
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
        _LOADED[path] = mod
    return mod


def agent() -> ModuleType:
    """The agent package (agent/)."""
    return load_package(AGENT)
