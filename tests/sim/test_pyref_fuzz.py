"""A bad program never raises out of RefMachine.run(): random instruction words (mostly decodable,
with random operand fields), on random register contents, on every fixture, always end with
status 'halted', 'trap' or 'budget', and a trap is always one of the contract's kinds."""
from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kcgen.asm.disassembler import Disassembler
from kcgen.sim.pyref import RefMachine

from .common import FIXTURES, assembler, fixture

KINDS = {"require", "user", "memory", "misaligned", "arith", "illegal", "pc"}
FILLER = {"rv32i_mini": "addi zero, zero, 0", "vliw_mini": "nopx ; nopa ; nops ; nopv",
          "vliw_ctl": "nopx ; nopa ; nops ; nopv",
          "plena_mini": "S_ADD_INT gp0, gp0, gp0"}
WORDS = 12


def _random_word(dis: Disassembler, rng: np.random.Generator) -> tuple[int, int]:
    """(word, size in bytes): a random instruction (or bundle) of the ISA, or sometimes pure noise."""
    def bits(n):
        return int.from_bytes(rng.bytes((n + 7) // 8), "little") & ((1 << n) - 1)
    if dis.bundles:
        fmt = dis.bundles[rng.integers(len(dis.bundles))]
        word = (bits(fmt.width) & ~fmt.fixed_mask) | fmt.fixed_match
        for slot, fld in fmt.fields.items():
            group = dis.groups.get(slot, [])
            if group and rng.random() < 0.9:
                e = group[rng.integers(len(group))]
                op = (bits(e.width) & ~e.insn.mask) | e.insn.match
                word = fld.insert(word & ~fld.word_mask, op)
        return word, fmt.width // 8
    encs = list(dis.encs.values())
    e = encs[rng.integers(len(encs))]
    word = (bits(e.width) & ~e.insn.mask) | e.insn.match
    if rng.random() < 0.1:
        word = bits(e.width)
    return word, e.width // 8


def _randomise(m: RefMachine, rng: np.random.Generator) -> None:
    for name, a in m.arrays.items():
        if a.size > 4096 or m.layout.stores[name].kind == "mem" and rng.random() < 0.5:
            continue
        raw = np.frombuffer(rng.bytes(a.nbytes), dtype=a.dtype).reshape(a.shape)
        if a.dtype.kind in "iu":
            # mostly small values: addresses that land inside memories (aligned ones too), loop counts
            small = rng.integers(0, 256, size=a.shape).astype(a.dtype)
            aligned = (rng.integers(0, 16, size=a.shape) * 64).astype(a.dtype)
            pick = rng.random(a.shape)
            a[...] = np.where(pick < 0.2, raw, np.where(pick < 0.6, small, aligned))
        else:
            a[...] = raw
        store = m.layout.stores[name]
        if store.zero:
            a[sorted(store.zero)] = 0


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(stem=st.sampled_from([p.stem for p in FIXTURES]), seed=st.integers(0, 2 ** 32 - 1))
def test_random_programs_never_raise(stem, seed):
    spec = fixture(stem)
    rng = np.random.default_rng(seed)
    dis = Disassembler(spec)
    program = assembler(spec).assemble("\n".join([FILLER[stem]] * WORDS))
    text = program.sections[".text"].data
    filler = bytes(assembler(spec).assemble(FILLER[stem]).text.data)
    out = bytearray()
    while len(out) < len(text):
        if rng.random() < 0.3:
            out += filler  # keep some harmless instructions so that runs get longer
            continue
        word, size = _random_word(dis, rng)
        out += word.to_bytes(size, dis.order)
    text[:] = out[:len(text)]
    m = RefMachine(spec)
    m.load(program)
    _randomise(m, rng)
    res = m.run(40)
    assert res.status in ("halted", "trap", "budget")
    if res.status == "trap":
        assert res.trap.kind in KINDS, res.trap
        assert res.trap.message
    assert res.steps <= 40 and sum(res.counts.values()) >= res.steps
