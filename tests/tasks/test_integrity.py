"""kcgen.integrity against a plain byte-by-byte oracle: a random memory, random writes, random
writable and locked spans; the check reports a violation exactly when a changed byte lies outside
every writable span or inside a locked one, and names the first such byte and their count."""
from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import isadl
from kcgen import integrity
from kcgen.evaluation import abi_layout

from .test_evaluation import TASK

ROOT = Path(__file__).resolve().parents[2]
SPEC = isadl.load(ROOT / "tests" / "isadl" / "fixtures" / "rv32i_mini.isa")
SIZE = SPEC.params["MEM_BYTES"]
LAYOUT = abi_layout(SPEC, TASK, "boom", "C1")

spans = st.lists(st.tuples(st.integers(0, SIZE - 1), st.integers(1, 9000)), max_size=4)
writes = st.lists(st.tuples(st.integers(0, SIZE - 1), st.integers(1, 64), st.integers(0, 255)), max_size=6)


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), filled=st.lists(st.integers(0, SIZE // integrity.BLOCK - 1), max_size=5),
       writable=spans, locked=spans, edits=writes)
def test_check_agrees_with_a_byte_by_byte_oracle(seed, filled, writable, locked, edits):
    rng = np.random.default_rng(seed)
    ram = np.zeros(SIZE, np.uint8)
    for b in filled:  # some blocks hold data before the run, the rest are zero
        ram[b * integrity.BLOCK:(b + 1) * integrity.BLOCK] = rng.integers(0, 256, integrity.BLOCK)
    sim = SimpleNamespace(arrays={"ram": ram})
    snap = integrity.Snapshot(sim, ["ram"], [])
    before = ram.copy()
    for at, n, value in edits:
        ram[at:at + n] = value
    allowed = [integrity.Span("ram", lo, min(lo + n, SIZE), "w") for lo, n in writable]
    code = [integrity.Span("ram", lo, min(lo + n, SIZE), "the program's .text section") for lo, n in locked]
    ok = np.zeros(SIZE, bool)
    for s in allowed:
        ok[s.lo:s.hi] = True
    for s in code:
        ok[s.lo:s.hi] = False
    bad = np.flatnonzero((ram != before) & ~ok)
    got = integrity.check(SPEC, sim, snap, allowed, TASK, LAYOUT, code)
    if not bad.size:
        assert got is None
    else:
        m = re.search(r"changed (\d+) bytes? of ram it may not, from (0x[0-9a-f]+)", got)
        assert m, got
        base = SPEC.params_eval(next(x for x in SPEC.isa.memories if x.name == "ram").base or 0)
        assert int(m.group(1)) == bad.size and int(m.group(2), 16) == base + bad[0]


def test_an_unchanged_memory_costs_no_diagnosis():
    ram = np.arange(SIZE, dtype=np.uint64).astype(np.uint8)
    sim = SimpleNamespace(arrays={"ram": ram})
    snap = integrity.Snapshot(sim, ["ram"], [])
    ram[100] = ram[100]  # a write of the value already there changes nothing
    assert integrity.check(SPEC, sim, snap, [], TASK, LAYOUT) is None
