"""Differential test: the compiled C simulator and the Python reference interpreter agree.

For every fixture, hypothesis draws an instruction (any instruction of the ISA; VLIW: a bundle of
random slot instructions), random operand bits, and a random machine state (registers and state
all random bits, or small values so that addresses land inside the memories; the start of every
memory random). Both machines run that one instruction from the same state; afterwards every
register, state item and memory must be equal bit for bit, and so must the status, the pc and a
trap's kind and pc.
"""
from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import isadl
from kcgen.asm.program import Program, Section
from kcgen.asm.tables import bundle_formats, encodings
from kcgen.sim.pyref import RefMachine
from kcgen.sim.simulator import Simulator

HERE = Path(__file__).resolve().parent
PATHS = {"rv32i_mini": HERE.parent / "isadl" / "fixtures" / "rv32i_mini.isa",
         "plena_mini": HERE.parent / "isadl" / "fixtures" / "plena_mini.isa",
         "vliw_mini": HERE.parent / "isadl" / "fixtures" / "vliw_mini.isa",
         # delay slots and register-driven zero-overhead loops (hwloop registers)
         "vliw_ctl": HERE.parent / "isadl" / "fixtures" / "vliw_ctl.isa",
         # every construct of the semantics language, with operands that index any register file
         "semantics_all": HERE / "fixtures" / "semantics_all.isa",
         # an exposed pipeline: results in flight, forwarding (bypass acc 4 between the MACs)
         "vliw_exposed": HERE.parent / "isadl" / "fixtures" / "vliw_mini.isa"}
DEFINES = {"vliw_exposed": {"EXPOSED": 1}}
NAMES = tuple(PATHS)
WINDOW = 4096  # elements at the start of each memory that get random contents


@functools.lru_cache(maxsize=None)
def machines(name: str):
    spec = isadl.load(PATHS[name], defines=DEFINES.get(name))
    return spec, Simulator(spec), RefMachine(spec)


def instruction_words(spec):
    """Strategy: the bytes of one random instruction (or bundle) and the names it was built from."""
    encs = encodings(spec)
    order = "little" if (spec.isa.endian or "little") == "little" else "big"
    bundles = bundle_formats(spec)

    def word_for(e, bits):
        return e.insn.match | (bits & ~e.insn.mask & ((1 << e.width) - 1))

    if not bundles:
        @st.composite
        def one(draw):
            e = draw(st.sampled_from(sorted(encs.values(), key=lambda e: e.name)))
            w = word_for(e, draw(st.integers(0, (1 << e.width) - 1)))
            return w.to_bytes(e.width // 8, order), [e.name]
        return one()

    by_slot = {}
    for e in encs.values():
        by_slot.setdefault(e.slot, []).append(e)

    @st.composite
    def bundle(draw):
        fmt = draw(st.sampled_from(bundles))
        word = fmt.fixed_match | (draw(st.integers(0, (1 << fmt.width) - 1)) & ~fmt.fixed_mask)
        names = []
        for slot, field in fmt.fields.items():
            e = draw(st.sampled_from(sorted(by_slot[slot], key=lambda e: e.name)))
            slot_word = word_for(e, draw(st.integers(0, (1 << e.width) - 1)))
            mask = (1 << field.value_width) - 1
            for vlo, wlo, width in field.pieces:  # clear the field, then insert the slot word
                word &= ~(((1 << width) - 1) << wlo)
            word = field.insert(word, slot_word & mask)
            names.append(e.name)
        return word.to_bytes(fmt.width // 8, order), names
    return bundle()


def program(data: bytes, base: int) -> Program:
    return Program("<diff>", {".text": Section(".text", base, bytearray(data))}, {}, set(), lambda: [], base)


def randomize(sim: Simulator, rng: np.random.Generator, small: bool) -> None:
    for name, store in sim.layout.stores.items():
        a = sim.arrays[name].reshape(-1)
        if store.kind == "mem":
            a[...] = 0
            n = min(a.size, WINDOW)
            a[:n].view(np.uint8)[...] = rng.integers(0, 256, size=a[:n].nbytes, dtype=np.uint8)
            continue
        raw = rng.integers(0, 256, size=a.nbytes, dtype=np.uint8)
        a.view(np.uint8)[...] = raw
        if small:
            ints = a.view(f"u{a.itemsize}")
            ints[...] = ints % 97 if store.elem.type.__class__.__name__ == "IntT" else ints
        for z in store.zero:
            sim.arrays[name][z] = 0


def run_both(name: str, code: bytes, seed: int, small: bool, steps: int):
    """Both machines from the same random state with `code` loaded; their run results."""
    spec, csim, ref = machines(name)
    randomize(csim, np.random.default_rng(seed), small)
    base = spec.params_eval(spec.isa.abi.entry) if spec.isa.abi and spec.isa.abi.entry is not None else 0
    prog = program(code, base)
    csim.load(prog)
    ref.load(prog)
    for k, a in csim.arrays.items():
        np.copyto(ref.arrays[k], a)
    ref.pc = csim.pc
    return csim.run(steps), ref.run(steps)


def same(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and np.array_equal(a.reshape(-1).view(np.uint8), b.reshape(-1).view(np.uint8))


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.data_too_large])
@given(data=st.data(), seed=st.integers(0, 2**32 - 1), small=st.booleans())
def test_c_and_python_agree(name, data, seed, small):
    spec, csim, ref = machines(name)
    code, names = data.draw(instruction_words(spec), label="instruction")
    rc, rp = run_both(name, code, seed, small, 1)
    where = f"{names} from seed {seed} (small={small})"
    assert rc.status == rp.status, f"{where}: C {rc.status} {rc.trap}, Python {rp.status} {rp.trap}"
    if rc.status == "trap":
        assert (rc.trap.kind, rc.trap.pc) == (rp.trap.kind, rp.trap.pc), f"{where}: C {rc.trap} / Python {rp.trap}"
    assert csim.pc == ref.pc, f"{where}: pc C {csim.pc:#x} Python {ref.pc:#x}"
    for k in csim.arrays:
        if not same(csim.arrays[k], ref.arrays[k]):
            diff = np.argwhere(csim.arrays[k].reshape(-1).view(np.uint8) != ref.arrays[k].reshape(-1).view(np.uint8))
            i = int(diff[0][0]) // csim.arrays[k].itemsize
            raise AssertionError(f"{where}: {k} differs at element {i}: C {csim.arrays[k].reshape(-1)[i]!r}, "
                                 f"Python {ref.arrays[k].reshape(-1)[i]!r}")


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.data_too_large])
@given(data=st.data(), seed=st.integers(0, 2**32 - 1), small=st.booleans())
def test_c_and_python_agree_on_programs(name, data, seed, small):
    """Several random instructions run for up to 64 steps: sequencing, branches (into the middle of
    the program, past its end, back to its start), halts and the retired count agree too."""
    spec, csim, ref = machines(name)
    words = data.draw(st.lists(instruction_words(spec), min_size=2, max_size=12), label="program")
    rc, rp = run_both(name, b"".join(w for w, _ in words), seed, small, 64)
    where = f"{[n for _, n in words]} from seed {seed} (small={small})"
    assert (rc.status, rc.instret) == (rp.status, rp.steps), f"{where}: C {rc} / Python {rp}"
    if rc.status == "trap":
        assert (rc.trap.kind, rc.trap.pc) == (rp.trap.kind, rp.trap.pc), f"{where}: C {rc.trap} / Python {rp.trap}"
    assert csim.pc == ref.pc, f"{where}: pc C {csim.pc:#x} Python {ref.pc:#x}"
    for k in csim.arrays:
        assert same(csim.arrays[k], ref.arrays[k]), f"{where}: {k} differs"
