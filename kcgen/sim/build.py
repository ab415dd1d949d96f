"""Build the C simulator of a checked ISA, cached by content.

The cache key is the ISA's canonical content hash (which includes -D overrides), the generator
version, the compiler flags and the text of the native headers. Each key owns one directory
under $KCGEN_CACHE (default ~/.cache/kcgen) holding the generated `sim.c`, the cffi `cdef.h`,
`meta.json` and the shared object. gcc is called directly and the result is loaded with
`ffi.dlopen`: cffi's own build adds nothing here, and its default flags make gcc very slow on
the large generated switch. A file lock makes concurrent builds of one target safe; the object
is compiled to a temporary name and renamed into place, so a reader never sees half a file.
"""
from __future__ import annotations

import hashlib
import json
import os
import platform
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from filelock import FileLock

from isadl.canonical import content_hash
from isadl.check import Spec

# The generator (and numpy/ml_dtypes behind it) is imported only to generate: a cache hit needs its
# source text for the key, not the module.

NATIVE = Path(__file__).resolve().parents[2] / "native"
CFLAGS = ("-O2", "-std=gnu11", "-fPIC", "-shared", "-Wall", "-Wextra", "-Wno-unused-parameter",
          "-Wno-unused-function", "-fno-strict-aliasing",
          "-ffp-contract=off", "-DKC_FP_CONTRACT_OFF",  # never fuse a * b + c: every operation rounds
          "-Wno-type-limits")  # semantics may well say `u >= 0` of an unsigned value


class BuildError(Exception):
    """The generated C did not compile (a kcgen bug) or the ISA uses something not yet supported."""


def cache_root() -> Path:
    return Path(os.environ.get("KCGEN_CACHE") or Path.home() / ".cache" / "kcgen")


def _native_text() -> str:
    return "".join(p.read_text() for p in sorted(NATIVE.glob("*.h")))


def _generator_text() -> str:
    """The generator's own source: a changed generator never reuses an old build."""
    here = Path(__file__).resolve().parent
    return "".join((here / f).read_text() for f in ("cgen.py", "structures.py", "loops.py", "layout.py", "typed.py", "work.py"))


def cache_key(spec: Spec, cc: str = "gcc", digest: Optional[str] = None) -> str:
    """The build's key; `digest`: the Spec's content hash when only that is at hand."""
    h = hashlib.sha256()
    for part in (digest or content_hash(spec), cc, " ".join(CFLAGS), _native_text(), _generator_text()):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()[:20]


@dataclass
class Built:
    directory: Path
    library: Path
    cdef: str
    meta: dict
    seconds: float  # time spent building (0 on a cache hit)
    cached: bool


def cached_directory(name: str, digest: str, cc: Optional[str] = None) -> Path:
    """Where the build of the ISA `name` with content hash `digest` lives (built or not)."""
    return cache_root() / f"{name}-{cache_key(None, cc or os.environ.get('CC') or 'gcc', digest)}"


def build(spec: Spec, force: bool = False, cc: Optional[str] = None) -> Built:
    """Generate and compile the simulator of `spec`, or reuse the cached one."""
    cc = cc or os.environ.get("CC") or "gcc"
    key = cache_key(spec, cc)
    directory = cache_root() / f"{spec.isa.name}-{key}"
    lib = directory / "sim.so"
    meta_path = directory / "meta.json"
    if not force and lib.exists() and meta_path.exists():
        return Built(directory, lib, (directory / "cdef.h").read_text(), json.loads(meta_path.read_text()), 0.0, True)
    directory.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(directory) + ".lock"):
        if not force and lib.exists() and meta_path.exists():  # built by someone else while we waited
            return Built(directory, lib, (directory / "cdef.h").read_text(), json.loads(meta_path.read_text()), 0.0, True)
        t0 = time.perf_counter()
        from .cgen import CGen, Unsupported
        try:
            gen = CGen(spec)
            files = gen.generate_files()
        except Unsupported as exc:
            raise BuildError(f"{spec.isa.name}: the C simulator generator does not support this yet: {exc}") from None
        if shutil.which(cc) is None:
            raise BuildError(f"C compiler '{cc}' not found; install gcc (apt-get install gcc) or set CC")
        directory.mkdir(parents=True, exist_ok=True)
        for name, text in files.items():
            (directory / name).write_text(text)
        (directory / "cdef.h").write_text(gen.cdef())
        tag = os.getpid()
        compile_flags = [f for f in CFLAGS if f != "-shared"]
        compile_flags += gen.extra_cflags
        jobs = {obj: (src, subprocess.Popen([cc, *compile_flags, *flags, "-c", "-I", str(NATIVE), "-I", str(directory), "-o",
                                             str(directory / f"{obj}.{tag}.o"), str(directory / src)],
                                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
                for obj, src, flags in gen.compile_units(platform.machine())}  # the units compile in parallel
        objects = []
        for obj, (src, job) in jobs.items():
            _, err = job.communicate()
            _check(job.returncode, err, directory / src)
            objects.append(str(directory / f"{obj}.{tag}.o"))
        tmp = directory / f"sim.{tag}.so"
        done = subprocess.run([cc, "-shared", "-o", str(tmp), *objects, "-lm"], capture_output=True, text=True)
        for o in objects:
            Path(o).unlink(missing_ok=True)
        _check(done.returncode, done.stderr, tmp)
        os.replace(tmp, lib)
        meta = gen.meta()
        meta_path.write_text(json.dumps(meta, indent=1))
        return Built(directory, lib, gen.cdef(), meta, time.perf_counter() - t0, False)


def _check(returncode: int, stderr: str, what: Path) -> None:
    if returncode != 0:
        raise BuildError(f"compiling {what} failed (a kcgen bug):\n{stderr[-4000:]}")
    if stderr.strip():
        raise BuildError(f"compiling {what} gave warnings (generated code must be clean):\n{stderr[-4000:]}")
