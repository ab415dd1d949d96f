"""The compiled simulator never crashes or hangs, whatever it is given: random bytes as a program,
random register contents, jumps anywhere. Every run ends as halted, trap or budget, and a trap
names the pc, the kind and a message."""
from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import isadl
from kcgen.asm.program import Program, Section
from kcgen.sim.simulator import Simulator

FIXTURES = Path(__file__).resolve().parents[1] / "isadl" / "fixtures"
NAMES = ("rv32i_mini", "plena_mini", "vliw_mini")


@functools.lru_cache(maxsize=None)
def machine(name: str) -> Simulator:
    return Simulator(isadl.load(FIXTURES / f"{name}.isa"))


def raw_program(data: bytes, base: int = 0) -> Program:
    return Program("<random>", {".text": Section(".text", base, bytearray(data))}, {}, set(), lambda: [], base)


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.binary(min_size=4, max_size=256), seed=st.integers(0, 2**32 - 1))
def test_random_programs_end_cleanly(name, data, seed):
    sim = machine(name)
    rng = np.random.default_rng(seed)
    for n, store in sim.layout.stores.items():
        if store.kind in ("reg", "state") and not store.readonly:
            a = sim.arrays[n]
            raw = rng.integers(0, 256, size=a.nbytes, dtype=np.uint8)
            # a third of the values small, so that some accesses land inside the memories
            a.reshape(-1).view(np.uint8)[...] = raw if seed % 3 else raw & 0x0F
            for z in store.zero:
                a[z] = 0
    data = data[:len(data) // 4 * 4] or b"\0\0\0\0"
    sim.load(raw_program(data))
    r = sim.run(500)
    assert r.status in ("halted", "trap", "budget")
    if r.status == "trap":
        assert r.trap.message and r.trap.kind != "none"
        # a trap is at an instruction of the program, unless it is about the pc itself
        assert r.trap.kind == "pc" or 0 <= r.trap.pc < len(data)


def test_illegal_instruction_traps_with_its_word():
    sim = machine("rv32i_mini")
    sim.load(raw_program(bytes.fromhex("ffffffff")))
    r = sim.run(10)
    assert r.status == "trap" and r.trap.kind == "illegal" and r.trap.pc == 0
    assert "illegal instruction 0xffffffff" in r.trap.message


def test_jump_outside_the_program_traps():
    spec = isadl.load(FIXTURES / "rv32i_mini.isa")
    from kcgen.asm import Assembler
    sim = Simulator(spec)
    sim.load(Assembler(spec).assemble("li a0, 0x1000\njalr zero, 0(a0)\n"))
    r = sim.run(10)
    assert r.status == "trap" and r.trap.kind == "pc" and "outside the program" in r.trap.message
    assert r.trap.pc == 0x1000


def test_budget_stops_an_endless_loop():
    spec = isadl.load(FIXTURES / "rv32i_mini.isa")
    from kcgen.asm import Assembler
    sim = Simulator(spec)
    sim.load(Assembler(spec).assemble("loop: j loop\n"))
    r = sim.run(1000)
    assert r.status == "budget" and r.instret == 1000 and r.trap is None
