"""isadl — the KernelCraft ISA description language.

    spec = isadl.load("plena", defines={"VLEN": 128})   # name, or path to a .isa file
    spec.isa            # frozen IR (isadl.ir)
    spec.params         # evaluated parameters
    isadl.canonical.dumps(spec), isadl.canonical.content_hash(spec)

Every user error raises isadl.IsaError whose str() is the GNU-style located report.
"""
from __future__ import annotations

import functools
import hashlib
import os
import pickle
import re
from pathlib import Path
from typing import Mapping, Optional

from . import ir
from .check import Spec, check
from .diagnostics import Diagnostic, IsaError, Reporter
from .parser import deep_recursion, parse_file, parse_text, too_deep
from .resolve import resolve

TARGETS_DIR = Path(__file__).resolve().parent.parent / "targets"

__all__ = ["load", "load_text", "load_all", "find_target", "cached_identity", "Spec", "IsaError", "Diagnostic", "parse_text",
           "parse_file", "ir", "TARGETS_DIR"]


def find_target(name_or_path: str | Path) -> Path:
    """`plena` → targets/plena.isa; anything with a slash or .isa suffix is a path."""
    p = Path(name_or_path)
    if p.suffix == ".isa" or len(p.parts) > 1 or p.exists():
        return p
    candidate = TARGETS_DIR / f"{p}.isa"
    if candidate.exists():
        return candidate
    known = sorted(x.stem for x in TARGETS_DIR.glob("*.isa"))
    raise IsaError([Diagnostic(ir.Loc(str(name_or_path), 0, 0),
                               f"no such target (known: {', '.join(known) or 'none'})")])


class _Loader:
    """Parses files on demand and resolves `extends` across them."""

    def __init__(self):
        self.sources: dict[str, str] = {}
        self.files: dict[str, tuple[ir.ISA, ...]] = {}

    def add_text(self, text: str, path: str) -> tuple[ir.ISA, ...]:
        self.sources[path] = text
        isas = parse_text(text, path)
        seen: dict[str, ir.ISA] = {}
        for isa in isas:
            if isa.name in seen:
                raise IsaError([Diagnostic(isa.loc, f"duplicate isa '{isa.name}' (first at line {seen[isa.name].loc.line})")],
                               self.sources)
            seen[isa.name] = isa
        self.files[path] = isas
        return isas

    def add_file(self, path: Path) -> tuple[ir.ISA, ...]:
        key = str(path)
        if key not in self.files:
            try:
                text = path.read_text()
            except OSError as exc:
                raise IsaError([Diagnostic(ir.Loc(key, 0, 0), f"cannot read file: {exc.strerror}")]) from None
            self.add_text(text, key)
        return self.files[key]

    def find(self, name: str, requester: ir.ISA) -> Optional[ir.ISA]:
        path = requester.loc.path
        for isa in self.files.get(path, ()):
            if isa.name == name:
                return isa
        for candidate in (Path(path).parent / f"{name}.isa", TARGETS_DIR / f"{name}.isa"):
            if candidate.exists():
                for isa in self.add_file(candidate):
                    if isa.name == name:
                        return isa
        return None

    def build(self, raw: ir.ISA, defines: Mapping[str, int]) -> Spec:
        reporter = Reporter(self.sources)
        merged = resolve(raw, self.find, reporter)
        reporter.raise_if_failed()
        try:
            with deep_recursion():
                spec = check(merged, reporter, defines)
        except RecursionError:
            raise too_deep(raw.loc.path, self.sources) from None
        reporter.raise_if_failed()
        assert spec is not None
        return spec


def _pick(isas: tuple[ir.ISA, ...], name: Optional[str], path: str) -> ir.ISA:
    if name is None:
        return isas[-1]
    for isa in isas:
        if isa.name == name:
            return isa
    raise IsaError([Diagnostic(ir.Loc(path, 0, 0), f"no isa named '{name}' in this file "
                                                   f"(it has {', '.join(i.name for i in isas)})")])


def load(target: str | Path, defines: Mapping[str, int] | None = None, isa: Optional[str] = None) -> Spec:
    """Parse, resolve and check one ISA (the file's last `isa` block unless ``isa`` names one).

    A checked file that extends nothing is cached (see `_cached`): parsing a large ISA takes
    seconds, unpickling its Spec a fraction of that."""
    path = find_target(target)
    return _cached(path, defines or {}, isa, lambda: _load(path, defines or {}, isa))


def _load(path: Path, defines: Mapping[str, int], isa: Optional[str]) -> Spec:
    loader = _Loader()
    isas = loader.add_file(path)
    return loader.build(_pick(isas, isa, str(path)), defines)


_EXTENDS = re.compile(rb"^[ \t]*isa[ \t]+\w+[ \t]*(?:\"[^\"\n]*\"[ \t]*)?extends\b", re.M)  # an overlay's header


@functools.lru_cache(maxsize=1)
def _source_digest() -> str:
    """The language implementation itself: a changed isadl never reuses an old cached Spec."""
    h = hashlib.sha256()
    for f in sorted(Path(__file__).resolve().parent.glob("*.py")) + [Path(__file__).resolve().parent / "isadl.lark"]:
        h.update(f.read_bytes())
    return h.hexdigest()


def _cache_file(path: Path, defines: Mapping[str, int], isa: Optional[str]) -> Optional[Path]:
    """Where the checked Spec of `path` is cached: keyed by the file's bytes, its path, the
    overrides and the isadl sources. None for files that use `extends` (their meaning depends on
    other files) or cannot be read."""
    try:
        data = Path(path).read_bytes()
    except OSError:
        return None
    if _EXTENDS.search(data):
        return None
    h = hashlib.sha256(data)
    for part in (str(Path(path).resolve()), repr(sorted(defines.items())), repr(isa), _source_digest()):
        h.update(b"\0" + part.encode())
    root = Path(os.environ.get("KCGEN_CACHE") or Path.home() / ".cache" / "kcgen") / "isadl"
    return root / f"{h.hexdigest()[:32]}.pickle"


def _cached(path: Path, defines: Mapping[str, int], isa: Optional[str], build) -> Spec:
    """The checked Spec of `path`, from $KCGEN_CACHE/isadl (default ~/.cache/kcgen/isadl) when
    `_cache_file` has it. Files with errors are not cached."""
    file = _cache_file(path, defines, isa)
    if file is None:
        return build()
    try:
        spec = pickle.loads(file.read_bytes())
    except Exception:  # missing, truncated or from another Python: rebuild
        spec = None
    else:
        if not file.with_suffix(".id").exists():
            _write_identity(file, spec)
        return spec
    spec = build()
    try:
        file.parent.mkdir(parents=True, exist_ok=True)
        tmp = file.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_bytes(pickle.dumps(spec, protocol=pickle.HIGHEST_PROTOCOL))
        os.replace(tmp, file)
        _write_identity(file, spec)
    except OSError:
        pass  # a read-only cache only costs speed
    return spec


def _write_identity(file: Path, spec: Spec) -> None:
    """The Spec's name and content hash beside its pickle: a cache hit of a whole build (kcgen
    build) needs only these, not the unpickled Spec."""
    from .canonical import content_hash
    try:
        tmp = file.with_suffix(f".{os.getpid()}.idtmp")
        tmp.write_text(f"{spec.isa.name} {content_hash(spec)}\n")
        os.replace(tmp, file.with_suffix(".id"))
    except OSError:
        pass


def cached_identity(target: str | Path, defines: Mapping[str, int] | None = None,
                    isa: Optional[str] = None) -> Optional[tuple[str, str]]:
    """(isa name, content hash) of a target whose checked Spec is cached, without loading it;
    None when it is not cached (or cannot be)."""
    try:
        file = _cache_file(find_target(target), defines or {}, isa)
        if file is None or not file.exists():
            return None
        name, digest = file.with_suffix(".id").read_text().split()
        return name, digest
    except (OSError, ValueError, IsaError):
        return None


def load_text(text: str, path: str = "<string>", defines: Mapping[str, int] | None = None,
              isa: Optional[str] = None) -> Spec:
    loader = _Loader()
    isas = loader.add_text(text, path)
    return loader.build(_pick(isas, isa, path), defines or {})


def load_all(target: str | Path, defines: Mapping[str, int] | None = None) -> list[Spec]:
    """Every `isa` block of a file, checked; all errors of all blocks are reported together."""
    loader = _Loader()
    path = find_target(target)
    isas = loader.add_file(path)
    specs, errors = [], []
    for raw in isas:
        wanted = {k: v for k, v in (defines or {}).items()}
        try:
            specs.append(loader.build(raw, wanted))
        except IsaError as exc:
            errors.extend(exc.diagnostics)
    if errors:
        unique = list(dict.fromkeys(errors))
        raise IsaError(unique, loader.sources)
    return specs
