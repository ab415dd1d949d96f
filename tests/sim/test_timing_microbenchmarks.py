"""Microbenchmarks of the timing claims the ISA files make (issue 19 items 1, 2, 4c, 7): every expected
figure is derived by hand, in the comments, from the rule the target's timing doc states (and
docs/simulator.md), never read back from the simulator. Differences between two programs cancel the
set-up both share (the first fetches, the vsetvli, the final branch)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import isadl
from kcgen.asm import Assembler
from kcgen.paths import REPO
from kcgen.sim.simulator import Simulator
from kcgen.target import build_target

_BUILT: dict = {}


def machine(target: str):
    if target not in _BUILT:
        spec = isadl.load(REPO / "targets" / f"{target}.isa")
        _BUILT[target] = (spec, build_target(spec).built)
    spec, built = _BUILT[target]
    return Simulator(spec, built), spec


def run(target: str, program: str, ram: dict | None = None):
    """(cycles, structure stats) of a program run to its end; `ram`: byte offset -> u64 stored first."""
    sim, spec = machine(target)
    sim.load(Assembler(spec).assemble(program, "bench"))
    for off, value in (ram or {}).items():
        sim.arrays["ram"][off:off + 8] = np.frombuffer(int(value).to_bytes(8, "little"), np.uint8)
    r = sim.run(20_000_000)
    assert r.status == "halted", (r.status, r.trap)
    return r.cycles, sim.structure_stats()


def cycles(target: str, program: str, ram: dict | None = None) -> int:
    return run(target, program, ram)[0]


# ---- coral: vector hazards on whole register groups -------------------------------------------------------
# The rule (targets/coral.isa, timing doc): in order, 4 a cycle; a vector instruction occupies its unit
# ceil(vl * SEW / VLEN) cycles (VLEN = 128) and its result is ready one cycle after that; valu has 2
# copies, neither pipelined; a reader waits for its registers (RAW), no chaining.

E32M1 = "li t0, 4\nvsetvli zero, t0, e32, m1, ta, ma\n"  # vl = 4: 1 group, latency 2
E32M8 = "li t0, 32\nvsetvli zero, t0, e32, m8, ta, ma\n"  # vl = 32: 8 groups, latency 9


def extra(target: str, setup: str, block: str, n: int) -> int:
    """Cycles that n more copies of `block` add after `setup` + n copies."""
    return cycles(target, setup + block * (2 * n)) - cycles(target, setup + block * n)


def test_coral_dependent_vector_adds_wait_for_each_other():
    # each vadd.vv v1, v1, v2 reads the v1 the one before writes: 2 cycles apart (latency 1 + 1)
    assert extra("coral", E32M1, "vadd.vv v1, v1, v2\n", 50) == 50 * 2
    # at m8 the group v8..v15 is ready 8 + 1 cycles after issue
    assert extra("coral", E32M8, "vadd.vv v8, v8, v16\n", 50) == 50 * 9


def test_coral_independent_vector_adds_use_both_alus():
    # no dependence: two valu copies, each busy one cycle per instruction at m1 -> 2 a cycle
    indep = "".join(f"vadd.vv v{3 + k % 8}, v1, v2\n" for k in range(8))
    assert extra("coral", E32M1, indep, 6) == 6 * 8 // 2  # 6 more copies of the 8-instruction block
    # at m8 each occupies its copy 8 cycles: 2 every 8 cycles; the same destination (WAW) does not
    # serialise them: the later write completes when the earlier one does at the soonest
    assert extra("coral", E32M8, "vadd.vv v8, v16, v24\n", 50) == 50 * 8 // 2


def test_coral_a_load_feeding_an_add_feeding_a_store_waits():
    # vle32 (vlsu, 1 group at m1: latency 2), vadd reading its result (latency 2), vse32 reading that:
    # the add is no longer free: it adds its 2-cycle latency to the chain
    base = "li a0, 0x100000\n" + E32M1
    with_add = cycles("coral", base + "vle32.v v1, (a0)\nvadd.vv v2, v1, v1\nvse32.v v2, (a0)\n")
    without = cycles("coral", base + "vle32.v v1, (a0)\nvse32.v v1, (a0)\n")
    assert with_add - without == 2


def test_coral_mask_and_vl_are_dependencies():
    # a masked add reads v0: after an add that writes v0 it waits 2 cycles, and the next pair issues in
    # order after it: 2 cycles a pair; when the first add writes v4 instead, the pair issues in one
    # cycle on the two ALUs. (A compare writing a mask, vmseq, also reads its destination: the bits
    # past vl are left undisturbed.)
    through_v0 = "vadd.vv v0, v3, v3\nvadd.vv v1, v2, v2, v0.t\n"
    not_v0 = "vadd.vv v4, v3, v3\nvadd.vv v1, v2, v2, v0.t\n"
    assert extra("coral", E32M1, through_v0, 20) == 20 * 2
    assert extra("coral", E32M1, not_v0, 20) == 20
    assert extra("coral", E32M1, "vmseq.vi v0, v3, 0\n", 20) == 20 * 2
    # vl and vtype are state the vsetvli writes (latency 1): an add after it issues a cycle later and
    # ends at +1 +2; before it, the add and the vsetvli issue together and the add ends at +2
    after = "vsetvli zero, t0, e32, m1, ta, ma\nvadd.vv v1, v2, v2\n"
    before = "vadd.vv v1, v2, v2\nvsetvli zero, t0, e32, m1, ta, ma\n"
    assert cycles("coral", E32M1 + after) - cycles("coral", E32M1 + before) == 1


def test_coral_scalar_issue_width_and_the_one_multiplier():
    # four scalar ALU instructions a cycle: 40 more independent addi take 10 more cycles
    adds = "".join(f"addi x{5 + k % 24}, x{5 + k % 24}, 1\n" for k in range(8))
    assert extra("coral", "", adds, 5) == 40 // 4
    # one pipelined multiplier: independent muls one a cycle; a dependent chain pays MUL's latency 2
    muls = "".join(f"mul x{5 + k % 8}, x20, x21\n" for k in range(8))
    assert extra("coral", "", muls, 5) == 40
    assert extra("coral", "", "mul x5, x5, x21\n", 20) == 20 * 2


def test_coral_taken_branch_costs_its_penalty():
    # addi; bnez (reads the addi's result: 1 cycle later); a taken branch restarts issue
    # branch_penalty = 1 cycle after it: 2 cycles an iteration
    def loop(n):
        return f"li t1, {n}\nloop:\naddi t1, t1, -1\nbnez t1, loop\n"
    assert cycles("coral", loop(200)) - cycles("coral", loop(100)) == 100 * 2


# ---- boom: caches ---------------------------------------------------------------------------------------
# The rule (targets/boom.isa, LargeBoom): L1D 64 sets x 8 ways of 64-byte lines, hit in LOAD_LAT = 4;
# an L1 miss that hits the L2 (1024 sets x 8 ways) takes L2_LAT = 20; an L2 miss 100 more; at most
# L1D_MSHRS = 4 misses outstanding; 3-wide dispatch, one memory port.

def li2(reg: str, value: int) -> str:
    """`li` as exactly lui + addi, whatever the value (programs compared differ only in constants)."""
    hi = (value + 0x800) >> 12
    return f"lui {reg}, {hi & 0xfffff}\naddi {reg}, {reg}, {value - (hi << 12)}\n"


def sweep(stride: int, span: int, n: int) -> str:
    """n independent loads at 0x80100000 + (k * stride) % span."""
    return f"""
    li a0, 0x80100000
{li2("t1", n)}    li t2, 0
{li2("t3", span - 1)}loop:
    and t4, t2, t3
    add t5, a0, t4
    ld t6, 0(t5)
    addi t2, t2, {stride}
    addi t1, t1, -1
    bnez t1, loop
"""


def test_boom_a_sweep_past_the_caches_costs_several_times_one_that_fits():
    small, s_stats = run("boom", sweep(64, 4096, 65536))
    large, l_stats = run("boom", sweep(64, 2 << 20, 65536))
    # 4 KiB = 64 lines, all resident after their first touch; 2 MiB = 32768 lines > L2's 8192: every
    # load misses both levels
    assert s_stats["caches"]["l1d"] == {"accesses": 65536, "misses": 64}
    assert l_stats["caches"]["l1d"]["misses"] == 65536
    assert l_stats["caches"]["l2"]["misses"] == 65536 + l_stats["caches"]["l1i"]["misses"]  # (and the fetches')
    # fits: 6 instructions per load at 3 a cycle -> 2 cycles per load; misses: each occupies one of 4
    # MSHRs for its whole latency, 4 + (20 - 4) + 100 = 120 cycles -> 30 cycles per load
    assert (cycles("boom", sweep(64, 4096, 2 * 4096)) - cycles("boom", sweep(64, 4096, 4096))) == 4096 * 2
    assert (cycles("boom", sweep(64, 2 << 20, 2 * 4096)) - cycles("boom", sweep(64, 2 << 20, 4096))) == 4096 * 30
    assert large > 10 * small


def chase(n_lines: int, passes: int) -> tuple[str, dict]:
    """A dependent chain of loads through n_lines consecutive lines (one 8-byte pointer each, the last
    back to the first), walked `passes` times; the pointers are written into memory before the run
    (no store touches the caches)."""
    base = 0x100000
    ram = {base + 64 * k: 0x80000000 + base + 64 * ((k + 1) % n_lines) for k in range(n_lines)}
    program = f"""
    li t0, {0x80000000 + base}
{li2("t1", n_lines * passes)}loop:
    ld t0, 0(t0)
    addi t1, t1, -1
    bnez t1, loop
"""
    return program, ram


def test_boom_miss_latencies_of_dependent_loads():
    # pass 1 over 1024 lines (64 KiB): every load misses to memory, 120 cycles each; pass 2: the L1
    # (512 lines, LRU) has kept only the last 512, and a sequential walk evicts each line just before
    # it is needed, so every load misses the L1 and hits the L2: 20 cycles each
    one = cycles("boom", *chase(1024, 1))
    two = cycles("boom", *chase(1024, 2))
    assert two - one == 1024 * 20
    # 32 lines fit the L1: pass 2 hits at LOAD_LAT = 4 a load
    assert cycles("boom", *chase(32, 2)) - cycles("boom", *chase(32, 1)) == 32 * 4
    # memory: pass 1 of 64 more lines costs 64 x 120
    assert cycles("boom", *chase(128, 1)) - cycles("boom", *chase(64, 1)) == 64 * 120


# ---- boom: branch prediction and the divider -----------------------------------------------------------------

def test_boom_a_counted_loop_mispredicts_only_its_exit():
    _, stats = run("boom", "li t1, 1000\nloop:\naddi t1, t1, -1\nbnez t1, loop\n")
    # counters start weakly taken: the backward branch is right from the start; the BTB learns its
    # target on the first taken pass; the exit (not taken) is the one miss
    assert stats["predictor"] == {"branches": 1000, "mispredicts": 1, "btb_misses": 1}


def test_boom_history_learns_an_alternating_branch():
    program = """
    li t1, 1000
    li t2, 0
loop:
    xori t2, t2, 1
    beqz t2, skip
    addi t3, t3, 1
skip:
    addi t1, t1, -1
    bnez t1, loop
"""
    _, stats = run("boom", program)
    # taken / not taken in turn: a bimodal counter alone would miss about half of the 1000; with 12 bits
    # of history each phase has its own trained counter after a short warm-up
    assert stats["predictor"]["branches"] == 2000
    assert stats["predictor"]["mispredicts"] < 30


def test_boom_returns_are_predicted_by_the_return_address_stack():
    program = """
    li t1, 100
loop:
    jal ra, leaf
    addi t1, t1, -1
    bnez t1, loop
    j end
leaf:
    addi t2, t2, 1
    ret
end:
"""
    _, stats = run("boom", program)
    # 100 calls, 100 returns, 100 loop branches, 1 final jump: the returns come off the stack; only
    # the loop's exit mispredicts
    assert stats["predictor"]["branches"] == 301
    assert stats["predictor"]["mispredicts"] == 1


@pytest.mark.parametrize("a,b,steps", [
    (1, 1, 1),  # bits(1) - bits(1) + 1
    (1000, 3, 9),  # 10 bits - 2 bits + 1
    (1 << 40, 7, 39),  # 41 - 3 + 1
    (5, 0, 64),  # division by zero: every step
    (-(1 << 62), 3, 62),  # |a| has 63 bits
])
def test_boom_divider_exits_early(a, b, steps):
    # the divider's cycles: DIV_SETUP (2) + quotient steps; against `div` of 1 by 1 (3 cycles), with
    # the same instructions around it
    # the operands come from memory, so that both programs are the same instructions
    program = "li a0, 0x80100000\nld a1, 0(a0)\nld a2, 8(a0)\ndiv a3, a1, a2\n"
    ram = {0x100000: a % (1 << 64), 0x100008: b % (1 << 64)}
    assert cycles("boom", program, ram) - cycles("boom", program, {0x100000: 1, 0x100008: 1}) == steps - 1


# ---- the data cache against an independent model ---------------------------------------------------------

def lru_misses(lines: list[int], sets: int, ways: int) -> int:
    """Misses of a set-associative LRU cache over a stream of line numbers (the documented policy)."""
    state: dict[int, list[int]] = {}
    misses = 0
    for ln in lines:
        s = state.setdefault(ln % sets, [])
        if ln in s:
            s.remove(ln)
        else:
            misses += 1
            if len(s) == ways:
                s.pop(0)
        s.append(ln)
    return misses


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 11)), min_size=1, max_size=80))
def test_boom_l1d_misses_match_an_lru_model(picks):
    """Loads to lines that collide in a few sets (set s, tag t: line t * 64 + s): the L1D's misses are
    those of a 64-set, 8-way LRU cache over the same line stream."""
    lines = [t * 64 + s for s, t in picks]
    body = "".join(f"li a1, {0x80100000 + 64 * ln}\nld t0, 0(a1)\n" for ln in lines)
    _, stats = run("boom", body)
    assert stats["caches"]["l1d"] == {"accesses": len(lines), "misses": lru_misses(lines, 64, 8)}


def gshare_mispredicts(outcomes: list[tuple[int, int]], entries: int, history: int) -> int:
    """Mispredicts of the documented direction predictor over (pc, taken) pairs: a gshare counter
    ((pc >> 2) ^ history) predicts once trained, a bimodal one (pc >> 2) until then; counters start
    weakly taken and saturate at 0 and 3."""
    g: dict[int, int] = {}
    b: dict[int, int] = {}
    h = misses = 0
    for pc, taken in outcomes:
        gi, bi = ((pc >> 2) ^ h) & (entries - 1), (pc >> 2) & (entries - 1)
        guess = (g[gi] if gi in g else b.get(bi, 2)) >= 2
        misses += guess != bool(taken)
        step = 1 if taken else -1
        g[gi] = min(3, max(0, g.get(gi, 2) + step))
        b[bi] = min(3, max(0, b.get(bi, 2) + step))
        h = ((h << 1) | taken) & ((1 << history) - 1)
    return misses


@settings(max_examples=25, deadline=None)
@given(st.lists(st.booleans(), min_size=1, max_size=60))
def test_boom_branch_predictor_matches_an_independent_model(bits):
    """A loop whose inner branch follows a random pattern read from memory: the simulator's mispredicts
    are those of the documented gshare-over-bimodal predictor (4096 entries, 12 bits of history) over
    the same sequence of (address, outcome) of the two conditional branches."""
    program = f"""
    li a0, 0x80100000
    li t1, {len(bits)}
loop:
    lbu t2, 0(a0)
    addi a0, a0, 1
inner:
    beqz t2, skip
    addi t3, t3, 1
skip:
    addi t1, t1, -1
outer:
    bnez t1, loop
"""
    sim, spec = machine("boom")
    prog = Assembler(spec).assemble(program, "bench")
    sim.load(prog)
    sim.arrays["ram"][0x100000:0x100000 + len(bits)] = np.array(bits, np.uint8)
    assert sim.run(1_000_000).status == "halted"
    inner, outer = prog.symbols["inner"], prog.symbols["outer"]
    stream = []
    for k, bit in enumerate(bits):
        stream += [(inner, int(not bit)), (outer, int(k < len(bits) - 1))]  # beqz is taken on a 0 byte
    assert sim.structure_stats()["predictor"]["mispredicts"] == gshare_mispredicts(stream, 4096, 12)
