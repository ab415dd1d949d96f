"""Every `example` of every fixture ISA passes on the reference interpreter and on the compiled
C simulator (the same runner: `given` and `expect` evaluated by the reference semantics on the
machine's own arrays), and the example runner reports failures readably."""
from __future__ import annotations

import pytest

from kcgen.sim.examples import examples, run_example, run_examples
from kcgen.sim.pyref import RefMachine
from kcgen.sim.simulator import Simulator

from .common import FIXTURES, fixture, spec

CASES = [pytest.param(path.stem, case.id, id=f"{path.stem}-{case.id}")
         for path in FIXTURES for case in examples(fixture(path.stem))]


@pytest.mark.parametrize("machine", [RefMachine, Simulator], ids=["ref", "c"])
@pytest.mark.parametrize("stem,case_id", CASES)
def test_example_passes_on_both_simulators(stem, case_id, machine):
    s = fixture(stem)
    case = next(c for c in examples(s) if c.id == case_id)
    result = run_example(s, case, machine)
    assert result.ok, result.message()
    assert result.status == "halted"
    assert all(c.ok for c in result.checks)


def test_every_fixture_has_examples_of_every_kind():
    kinds = {c.owner for path in FIXTURES for c in examples(fixture(path.stem))}
    assert kinds == {"instruction", "pseudo", "isa"}
    ids = [c.id for c in examples(fixture("rv32i_mini"))]
    assert len(ids) == len(set(ids))
    assert "ADDI#1" in ids and "li#2" in ids and "isa#1" in ids


EXAMPLES_ISA = spec(go="r[1] = r[2] + 1")


def _with_examples(text: str):
    import isadl
    from .common import HEAD
    return isadl.load_text(HEAD % text, "ex.isa")


def test_failed_check_names_the_values():
    s = _with_examples("""
  instruction GO { syntax "go"; encoding F(op=16); semantics { r[1] = r[2] + 1 }
    example "go" { given { r[2] = 40 } expect { r[1] == 42; r[2] == 40 } } }""")
    (result,) = run_examples(s)
    assert not result.ok
    bad = [c for c in result.checks if not c.ok]
    assert [c.text for c in bad] == ["r[1] == 42"]
    assert "r[1] is 41" in bad[0].message
    assert "r[1] == 42" in result.message() and "41" in result.message()
    assert [c.ok for c in result.checks] == [False, True]


def test_trapping_example_fails_with_the_trap():
    s = _with_examples("""
  instruction GO { syntax "go"; encoding F(op=16); semantics { require r[2] > 0 : "r2 must be positive" }
    example "go" { expect { r[1] == 0 } } }""")
    (result,) = run_examples(s)
    assert not result.ok and result.status == "trap"
    assert result.trap.kind == "require" and result.trap.message == "r2 must be positive"
    assert result.trap.pc == 0 and result.trap.line == 1
    assert "r2 must be positive" in result.message()


def test_budget_example_fails():
    s = _with_examples("""
  example "l: j l" { expect { r[1] == 0 } }""")
    (result,) = run_examples(s, max_steps=50)
    assert not result.ok and result.status == "budget"
    assert result.steps == 50


def test_given_runs_loops_and_stores_and_expect_reads_memory():
    s = _with_examples("""
  instruction GO { syntax "go"; encoding F(op=16); semantics { store(ram, u32, 0x80, load(ram, u32, 0x40) + 1) }
    example "go" {
      given { for i in 0..4 { ram[0x40 + i] = i + 1 } }
      expect { load(ram, u32, 0x80) == 0x04030202; ram[0x83] == 4 }
    } }""")
    (result,) = run_examples(s)
    assert result.ok, result.message()


def test_example_that_does_not_assemble():
    s = _with_examples("""
  example "frobnicate r1" { expect { r[1] == 0 } }""")
    (result,) = run_examples(s)
    assert not result.ok and result.status is None
    assert "does not assemble" in result.error
