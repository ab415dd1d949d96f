"""`kcgen build`: content-addressed cache, overrides, concurrent builds, warning-free C."""
from __future__ import annotations

import json
import multiprocessing
import subprocess
import sys
from pathlib import Path

import pytest

import isadl
from kcgen.sim.build import CFLAGS, NATIVE, build, cache_key
from kcgen.target import build_target

ROOT = Path(__file__).resolve().parents[2]
RV32I = ROOT / "tests" / "isadl" / "fixtures" / "rv32i_mini.isa"


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("KCGEN_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_second_build_is_a_cache_hit(cache):
    spec = isadl.load(RV32I)
    first = build(spec)
    assert not first.cached and first.library.exists() and first.directory.parent == cache
    second = build(isadl.load(RV32I))
    assert second.cached and second.directory == first.directory and second.seconds == 0.0
    forced = build(spec, force=True)
    assert not forced.cached and forced.directory == first.directory


def test_override_and_formatting(cache):
    base = isadl.load(RV32I)
    bigger = isadl.load(RV32I, {"MEM_BYTES": 128 * 1024})
    assert cache_key(base) != cache_key(bigger)  # -D changes what is built
    text = RV32I.read_text()
    # comments and layout do not change the meaning, so they do not change the key
    reformatted = isadl.load_text("# a comment\n" + text.replace("\n\n", "\n"), str(RV32I))
    assert cache_key(base) == cache_key(reformatted)


def test_target_artifacts(cache):
    t = build_target(isadl.load(RV32I))
    d = t.directory
    ir = json.loads((d / "isa.json").read_text())
    assert ir["isa"]["name"] == "rv32i_mini"
    enc = ir["encodings"]["ADD"]
    assert int(enc["mask"], 16) == 0xfe00707f and int(enc["match"], 16) == 0x33  # RISC-V ADD
    assert (d / "docs" / "index.txt").exists() and (d / "sim.c").exists()


def _build_in_child(cache_dir: str) -> str:
    import os
    os.environ["KCGEN_CACHE"] = cache_dir
    return str(build(isadl.load(RV32I)).library)


def test_concurrent_builds_of_one_target(cache):
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(2) as pool:
        libs = pool.map(_build_in_child, [str(cache)] * 4)
    assert len(set(libs)) == 1 and Path(libs[0]).exists()
    # one object, no leftovers from the losers of the race
    assert [p.name for p in Path(libs[0]).parent.glob("*.so")] == ["sim.so"]


@pytest.mark.parametrize("fixture", ["rv32i_mini", "plena_mini", "vliw_mini"])
def test_generated_c_is_warning_free(cache, fixture):
    built = build(isadl.load(ROOT / "tests" / "isadl" / "fixtures" / f"{fixture}.isa"))
    # build() already refuses warnings; compile once more with the flags a reviewer would add
    done = subprocess.run(["gcc", *CFLAGS, "-Wshadow", "-Wundef", "-I", str(NATIVE), "-fsyntax-only",
                           str(built.directory / "sim.c")], capture_output=True, text=True)
    assert done.returncode == 0 and not done.stderr.strip(), done.stderr[:3000]


def test_cli_build_prints_the_directory(cache):
    done = subprocess.run([sys.executable, "-m", "kcgen.cli", "build", str(RV32I)], capture_output=True, text=True,
                          cwd=ROOT)
    assert done.returncode == 0, done.stderr
    out = Path(done.stdout.strip())
    assert out.parent == cache and (out / "sim.so").exists()


def test_exported_symbols_are_prefixed(cache):
    import shutil
    if shutil.which("nm") is None:
        pytest.skip("nm (binutils) is not installed")
    built = build(isadl.load(RV32I))
    out = subprocess.run(["nm", "-D", "--defined-only", str(built.library)], capture_output=True, text=True).stdout
    exported = [line.split()[-1] for line in out.splitlines() if line.split()[1:2] == ["T"]]
    assert exported and all(name.startswith("kc_rv32i_mini_") for name in exported), exported
