"""targets/plena.isa: every matrix instruction costs what the Feb-2026 PLENA emulator charges and does
the emulator's work (issue #19 item 8).

The table below was read by hand from the emulator's source, not from the ISA file:
AICrossSim/PLENA_Simulator commit 7de84c0f (2026-02-12), behavioral_simulator/src/main.rs,
`impl MatrixMachine`; each op charges its delay with `cycle!(n)`, n x PERIOD (1 ns), and its SRAM
accesses cost nothing beyond waiting for a pending prefetch. The sizes are plena_settings.toml's
[BEHAVIOR.CONFIG] MLEN 64, BLEN 4, HLEN 16, BROADCAST_AMOUNT 4 and [BEHAVIOR.LATENCY]
SYSTOLIC_PROCESSING_OVERHEAD 0 (DC_EN = 1). Work is the multiply-accumulates of the product the
function computes, or the elements a write-out stores.
"""
from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import pytest

import isadl
from kcgen.asm import Assembler
from kcgen.sim.simulator import Simulator

ROOT = Path(__file__).resolve().parents[2]
MLEN, BLEN, HLEN, HEADS = 64, 4, 16, 4   # BROADCAST_AMOUNT = MLEN / HLEN
OVERHEAD = 0                             # SYSTOLIC_PROCESSING_OVERHEAD, dc_lib_en

# instruction: (cycles, work, accumulator or None for a write-out), from the emulator's source
EMULATOR = {
    # mm (main.rs:240): cycle!(OVERHEAD + mlen); [BLEN, MLEN] @ [MLEN, BLEN] into m_accum
    "M_MM": (OVERHEAD + MLEN, BLEN * MLEN * BLEN, "m_accum"),
    # tmm (main.rs:547): cycle!(OVERHEAD + mlen); [BLEN, MLEN] @ [MLEN, BLEN] of the transposed tile
    "M_TMM": (OVERHEAD + MLEN, BLEN * MLEN * BLEN, "m_accum"),
    # bmm (main.rs:284): cycle!(OVERHEAD + mlen); per head [MLEN, HLEN] @ [HLEN, MLEN] into hm_accum
    "M_BMM": (OVERHEAD + MLEN, HEADS * MLEN * HLEN * MLEN, "hm_accum"),
    # btmm (main.rs:411): cycle!(OVERHEAD + mlen); per head [MLEN, HLEN] @ [HLEN, MLEN]
    "M_BTMM": (OVERHEAD + MLEN, HEADS * MLEN * HLEN * MLEN, "hm_accum"),
    # mv (main.rs:655): cycle!(mlen); [1, MLEN] @ the tile's [MLEN, BLEN] column slice; v_accum is [BLEN]
    "M_MV": (MLEN, MLEN * BLEN, "v_accum"),
    # tmv (main.rs:676): cycle!(mlen); [1, MLEN] @ [MLEN, BLEN] of the transposed tile
    "M_TMV": (MLEN, MLEN * BLEN, "v_accum"),
    # bmv (main.rs:347): cycle!(OVERHEAD + 1); per head [1, HLEN] @ [HLEN, MLEN] into hv_accum
    "M_BMV": (OVERHEAD + 1, HEADS * HLEN * MLEN, "hv_accum"),
    # btmv (main.rs:486): cycle!(OVERHEAD + 1); per head [1, HLEN] @ [HLEN, MLEN]
    "M_BTMV": (OVERHEAD + 1, HEADS * HLEN * MLEN, "hv_accum"),
    # mm_wo (main.rs:569): cycle!(1); BLEN rows of BLEN elements
    "M_MM_WO": (1, BLEN * BLEN, None),
    # bmm_wo (main.rs:599): cycle!(1); HEADS x MLEN rows of MLEN elements
    "M_BMM_WO": (1, HEADS * MLEN * MLEN, None),
    # mv_wo (main.rs:696): cycle!(1); the BLEN elements of v_accum
    "M_MV_WO": (1, BLEN, None),
    # bmv_wo (main.rs:625): cycle!(1); HEADS rows of MLEN elements
    "M_BMV_WO": (1, HEADS * MLEN, None),
}

# one instance of each, all operands gp0 (address 0 is valid for every one of them)
PROGRAM = {
    "M_MM": "M_MM 0, gp0, gp0", "M_TMM": "M_TMM 0, gp0, gp0", "M_BMM": "M_BMM 0, gp0, gp0",
    "M_BTMM": "M_BTMM 0, gp0, gp0", "M_MV": "M_MV 0, gp0, gp0", "M_TMV": "M_TMV 0, gp0, gp0",
    "M_BMV": "M_BMV gp0, gp0, gp0", "M_BTMV": "M_BTMV gp0, gp0, gp0", "M_MM_WO": "M_MM_WO gp0, gp0, 0",
    "M_BMM_WO": "M_BMM_WO gp0, 0", "M_MV_WO": "M_MV_WO gp0, 0", "M_BMV_WO": "M_BMV_WO gp0, 0",
}
WRITES = {"M_MM_WO": "m_accum", "M_BMM_WO": "hm_accum", "M_MV_WO": "v_accum", "M_BMV_WO": "hv_accum"}


@functools.lru_cache(maxsize=None)
def spec():
    return isadl.load(ROOT / "targets" / "plena.isa")


def machine(text: str) -> Simulator:
    sim = Simulator(spec())
    sim.load(Assembler(spec()).assemble(text, "kernel.s"))
    return sim


def run(sim: Simulator):
    result = sim.run(1_000_000)
    assert result.status == "halted", result.trap
    return result


def test_every_matrix_instruction_is_in_the_table():
    assert {i.name for i in spec().isa.instructions if i.name.startswith("M_")} == set(EMULATOR)


def test_the_sizes_are_the_emulators():
    P = spec().params
    assert (P["MLEN"], P["BLEN"], P["HLEN"], P["HEADS"]) == (MLEN, BLEN, HLEN, HEADS)


@pytest.mark.parametrize("name", sorted(EMULATOR))
def test_cycles(name):
    cycles = EMULATOR[name][0]
    # alone, and back to back: the core is held for the whole latency, nothing overlaps
    assert run(machine(PROGRAM[name])).cycles == cycles
    assert run(machine(PROGRAM[name] + "\n" + PROGRAM[name])).cycles == 2 * cycles


@pytest.mark.parametrize("name", sorted(n for n, e in EMULATOR.items() if e[2]))
def test_work_of_a_product(name):
    # every operand element 1.0: each accumulator element gets one 1.0 per multiply-accumulate
    # feeding it, so the accumulators' sum is the number of multiply-accumulates
    _, macs, accum = EMULATOR[name]
    sim = machine(PROGRAM[name])
    sim.view("vsram")[:] = 1.0
    sim.view("msram")[:] = 1.0
    run(sim)
    assert float(np.asarray(sim.view(accum), dtype=np.float64).sum()) == macs
    for other in {"m_accum", "v_accum", "hm_accum", "hv_accum"} - {accum}:
        assert not np.asarray(sim.view(other)).any()


@pytest.mark.parametrize("name", sorted(WRITES))
def test_work_of_a_write_out(name):
    _, elements, _ = EMULATOR[name]
    sim = machine(PROGRAM[name])
    sim.view(WRITES[name])[...] = 1.0
    run(sim)
    assert int(np.count_nonzero(np.asarray(sim.view("vsram"), dtype=np.float64))) == elements
    assert not np.asarray(sim.view(WRITES[name])).any()


def test_batched_vector_op_outruns_the_plain_one():
    # the finding of issue #19: per cycle M_BMV does 4,096 / 1 MACs and M_MV 256 / 64, a ratio of
    # 1,024 -- the emulator's own ratio, kept
    (mv_cycles, mv_macs, _), (bmv_cycles, bmv_macs, _) = EMULATOR["M_MV"], EMULATOR["M_BMV"]
    assert (bmv_macs / bmv_cycles) / (mv_macs / mv_cycles) == 1024
    assert run(machine("M_MV 0, gp0, gp0")).cycles == 64 * run(machine("M_BMV gp0, gp0, gp0")).cycles
