"""Every `example` of every fixture ISA passes on the compiled C simulator (the same runner as the
reference interpreter's: `given` and `expect` are evaluated by the reference semantics on the
simulator's own arrays, the code runs in C)."""
from __future__ import annotations

import functools
from pathlib import Path

import pytest

import isadl
from kcgen.sim.examples import examples, run_example
from kcgen.sim.simulator import Simulator

FIXTURES = sorted((Path(__file__).resolve().parents[1] / "isadl" / "fixtures").glob("*.isa"))


@functools.lru_cache(maxsize=None)
def spec(stem: str):
    return isadl.load(next(p for p in FIXTURES if p.stem == stem))


CASES = [pytest.param(p.stem, c.id, id=f"{p.stem}-{c.id}") for p in FIXTURES for c in examples(spec(p.stem))]


@pytest.mark.parametrize("stem,case_id", CASES)
def test_example_passes_on_the_c_simulator(stem, case_id):
    s = spec(stem)
    case = next(c for c in examples(s) if c.id == case_id)
    result = run_example(s, case, Simulator)
    assert result.ok, result.message()
    assert result.status == "halted"
