"""The kernel ABI's start state: `stack` sets the stack pointer, `end return REG` makes the
outermost return halt. Both simulators apply it on load."""
from __future__ import annotations

from pathlib import Path

import pytest

import isadl
from kcgen.asm import Assembler
from kcgen.sim.pyref import RefMachine
from kcgen.sim.simulator import Simulator

RV32I = Path(__file__).resolve().parents[1] / "isadl" / "fixtures" / "rv32i_mini.isa"
RETURNING = RV32I.read_text().replace("end halt ebreak", "end return ra")


@pytest.mark.parametrize("machine", [Simulator, RefMachine])
def test_outermost_return_halts(machine):
    spec = isadl.load_text(RETURNING, "returning.isa")
    program = Assembler(spec).assemble("""
        addi sp, sp, -16
        sw   ra, 12(sp)
        li   a0, 5
        jal  ra, double
        lw   ra, 12(sp)
        addi sp, sp, 16
        ret
    double:
        add  a0, a0, a0
        ret
    """)
    m = machine(spec)
    m.load(program)
    assert m.arrays["x"][2] == spec.params["MEM_BYTES"]  # sp at the top of ram
    assert m.arrays["x"][1] == program.sections[".text"].end  # ra: the halting return address
    r = m.run(100)
    assert r.status == "halted" and r.instret == 9
    assert m.arrays["x"][10] == 10 and m.arrays["x"][2] == spec.params["MEM_BYTES"]


@pytest.mark.parametrize("machine", [Simulator, RefMachine])
def test_end_halt_leaves_ra_alone(machine):
    spec = isadl.load(RV32I)
    m = machine(spec)
    m.load(Assembler(spec).assemble("ebreak"))
    assert m.arrays["x"][1] == 0 and m.arrays["x"][2] == spec.params["MEM_BYTES"]
