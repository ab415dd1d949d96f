"""What a machine looks like when a kernel starts, from the ISA's `abi` section.

Both simulators apply this in `load(program)`, so a kernel sees the same start state whichever
runs it: `stack REG = EXPR` sets the stack pointer, and `end return REG` puts a halting return
address in REG — the end of the text section, where running off the program stops the machine
normally (docs/simulator.md) — so the kernel's outermost `ret` ends the run.
"""
from __future__ import annotations

import numpy as np

from isadl.check import Spec


def start_registers(spec: Spec, program) -> list[tuple[str, int, int]]:
    """(register file, index, value) to set before a kernel runs."""
    abi = spec.isa.abi
    out: list[tuple[str, int, int]] = []
    if abi is None:
        return out
    if abi.stack is not None:
        file, index = spec.regnames[abi.stack[0]]
        out.append((file, index, spec.params_eval(abi.stack[1])))
    if abi.end and abi.end[0] == "return":
        file, index = spec.regnames[abi.end[1]]
        text = program.sections.get(".text")
        out.append((file, index, text.end if text is not None else program.entry))
    return out


def apply(spec: Spec, arrays: dict, program) -> None:
    for file, index, value in start_registers(spec, program):
        a = arrays[file]
        bits = a.dtype.itemsize * 8
        raw = np.array(value & ((1 << bits) - 1), dtype=f"u{a.dtype.itemsize}")
        a[index] = raw.view(a.dtype)
