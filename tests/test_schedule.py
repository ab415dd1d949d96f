"""kcgen.schedule: the list and modulo schedulers every VLIW description gets, checked on amdnpu.

* a scheduled straight-line program ends in the same machine state as the program as written
  (hypothesis: random programs over scalar, pointer, memory, vector and MAC operations), and the
  simulator never stalls it (every read is at least its producer's latency after it: the schedule
  does not rely on interlocks);
* every bundle is legal (one operation per slot, a bundle format that holds the slots);
* a modulo schedule's II is at least the resource and recurrence bounds, and a pipelined loop
  computes what the loop as written does, for its trip count;
* branch delay slots (amdnpu: 5): a jump is followed by exactly its delay slots, filled with work
  that may run on both paths or with nops, and never another jump; random programs with a forward
  jump, a loop, and random work written in the delay slots keep their meaning (hypothesis);
* `kcgen schedule`; the regenerated amdnpu baselines are packed and pass evaluation.
"""
from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, reject, settings
from hypothesis import strategies as st

import isadl
from kcgen.cli import main
from kcgen.evaluation import _assembler
from kcgen.sim.hazards import stale_reads
from kcgen.schedule import (ScheduleError, dependences, list_schedule, machine, modulo_schedule, rec_mii, res_mii,
                            schedule)
from kcgen.sim.simulator import Simulator

DATA = 0x4000  # the random programs' pointers start at DATA + 0x1000 k


_CACHE: dict = {}


def _spec():
    if "spec" not in _CACHE:
        _CACHE["spec"] = isadl.load("amdnpu")
        _CACHE["sim"] = Simulator(_CACHE["spec"])
        # the one-operation-per-line input means what it says when each line waits for the ones before
        # it: the same machine with interlocks (EXPOSED = 0), whose stalls show where a read is early
        _CACHE["locked"] = Simulator(isadl.load("amdnpu", defines={"EXPOSED": 0}))
    return _CACHE["spec"]


@pytest.fixture(scope="module")
def spec():
    return _spec()


@pytest.fixture(scope="module")
def sim(spec):
    return _CACHE["sim"]


def _setup() -> list[str]:
    out = [".text"] + [f"    movxm p{k}, #{DATA + 0x1000 * k}" for k in range(4)]
    out += ["    movxm r9, #0"]  # the MAC configuration word (fp32 accumulate)
    return out


_R = st.integers(0, 7)
_P = st.integers(0, 3)
_X = st.integers(0, 5)
_OP = st.one_of(
    st.builds(lambda a, b, c: f"add r{a}, r{b}, r{c}", _R, _R, _R),
    st.builds(lambda a, b, c: f"mul r{a}, r{b}, r{c}", _R, _R, _R),
    st.builds(lambda a, i: f"add r{a}, r{a}, #{i}", _R, st.integers(-64, 63)),
    st.builds(lambda a, i: f"movx r{a}, #{i}", _R, st.integers(-1024, 1023)),
    st.builds(lambda a, b: f"mov r{a}, r{b}", _R, _R),
    st.builds(lambda a, p, i: f"lda r{a}, [p{p}], #{32 * i}", _R, _P, st.integers(-2, 2)),
    st.builds(lambda a, p, i: f"lda r{a}, [p{p}, #{4 * i}]", _R, _P, st.integers(-8, 8)),
    st.builds(lambda a, p, i: f"st r{a}, [p{p}, #{4 * i}]", _R, _P, st.integers(-8, 8)),
    st.builds(lambda a, p, i: f"st r{a}, [p{p}], #{32 * i}", _R, _P, st.integers(-2, 2)),
    st.builds(lambda p, i: f"padda [p{p}], #{32 * i}", _P, st.integers(-2, 2)),
    st.builds(lambda h, x, p, i: f"vlda w{h}{x}, [p{p}, #{32 * i}]", st.sampled_from("lh"), _X, _P, st.integers(-2, 2)),
    st.builds(lambda h, x, p, i: f"vlda w{h}{x}, [p{p}], #{32 * i}", st.sampled_from("lh"), _X, _P, st.integers(-2, 2)),
    st.builds(lambda h, x, p, i: f"vst w{h}{x}, [p{p}, #{32 * i}]", st.sampled_from("lh"), _X, _P, st.integers(-2, 2)),
    st.builds(lambda a, b, c: f"vadd.16 x{a}, x{b}, x{c}", _X, _X, _X),
    st.builds(lambda a, b, c, d: f"vmac.f bml{a}, bml{b}, x{c}, x{d}, r9", st.integers(0, 2), st.integers(0, 2), _X, _X),
    st.builds(lambda a, b: f"vconv.bf16.fp32 wl{a}, bml{b}", _X, st.integers(0, 2)),
)


def _final(sim, spec, text: str):
    program = _assembler(spec).assemble(text)
    sim.load(program)
    for name, arr in sim.arrays.items():  # (the simulator is reused: no state of an earlier run)
        if name != "dm":
            arr[...] = 0
    rng = np.random.default_rng(1)
    sim.arrays["dm"][0x2000:0x10000] = rng.integers(0, 256, 0xE000, dtype=np.uint8)
    res = sim.run(100_000)
    state = {name: np.array(arr, copy=True) for name, arr in sim.arrays.items() if name != "dm"}
    state["dm"] = np.array(sim.arrays["dm"][0x2000:], copy=True)
    return res, state, program


def _same_meaning(sim, spec, text: str, out: str):
    """The scheduled program, on the exposed pipeline, halts in the state the program as written
    reaches on the interlocked machine; their run results."""
    r0, s0, _ = _final(_CACHE["locked"], spec, text)
    r1, s1, _ = _final(sim, spec, out)
    assert r0.status == r1.status == "halted"
    for name in s0:
        assert np.array_equal(s0[name], s1[name]), (name, out)
    return r0, r1


@settings(max_examples=60, deadline=None)
@given(st.lists(_OP, min_size=1, max_size=40))
def test_random_straight_line_programs_keep_their_meaning(ops):
    spec, sim = _spec(), _CACHE["sim"]
    text = "\n".join(_setup() + [f"    {o}" for o in ops] + ["    done"]) + "\n"
    out = schedule(spec, text)
    _, r1 = _same_meaning(sim, spec, text, out)
    # no stall: every bundle issues in the cycle after the one before it
    assert r1.cycles == len(_assembler(spec).assemble(out).placed)
    _check_delay_slots(spec, out)


def _scheduled_or_refused(spec, text: str) -> str:
    """The schedule of `text`; when the scheduler refuses it (ScheduleError: what a jump's delay slots
    must hold does not fit them, so the program as written would read a result early on the exposed
    pipeline) the example is not used -- tests/test_schedule.py::test_an_unschedulable_program_is_refused."""
    try:
        return schedule(spec, text)
    except ScheduleError:
        reject()


def _delay(spec) -> int:
    return int(next((spec.params_eval(p.value) for p in spec.isa.timing.props if p.name == "delay_slots"), 0))


def _ds(ops=()) -> list[str]:
    """A jump's delay slots: `ops` (one per bundle), then nops."""
    ops = list(ops)
    return [f"    {o}" for o in ops] + ["    nop"] * (_delay(_spec()) - len(ops))


def _check_delay_slots(spec, out: str):
    """Every jump of `out` is followed by its delay slots, none of which holds a jump, and no read in
    straight-line code comes before its producer's latency (the assembler's exposed-pipeline check)."""
    program = _assembler(spec).assemble(out)
    d = _delay(spec)
    jumps = [any(spec.instructions[n].insn.semantics and any(
        getattr(getattr(st, "target", None), "id", None) == "pc"
        for st in isadl.ir.statements(spec.instructions[n].insn.semantics)) for n, _ in p.ops)
        for p in sorted(program.placed, key=lambda p: p.address)]
    for k, j in enumerate(jumps):
        if j:
            assert k + d < len(jumps), out  # (the program goes on past the delay slots)
            assert not any(jumps[k + 1:k + 1 + d]), out
    assert stale_reads(spec, program, "out.s", out, limit=None) == [], out


def _stalls(sim, spec, text: str) -> int:
    """Cycles the interlocked machine spent waiting for operands: cycles beyond one per bundle and the
    taken branches' delay (none with delay slots: those are bundles of their own). 0: no read comes
    before its producer's latency, so the exposed pipeline computes what the interlocked one does."""
    sim = _CACHE["locked"]
    program = _assembler(spec).assemble(text)
    sim.load(program)
    for name, arr in sim.arrays.items():
        if name != "dm":
            arr[...] = 0
    res = sim.run(100_000, trace=True)
    sizes = {p.address: p.size for p in program.placed}
    pcs = [e.pc for e in res.trace]
    taken = sum(1 for a, b in zip(pcs, pcs[1:]) if b != a + sizes[a])
    bd = next((spec.params_eval(p.value) for p in spec.isa.timing.props if p.name == "branch_delay"), 0)
    return res.cycles - len(pcs) - (0 if _delay(spec) else bd) * taken


@settings(max_examples=40, deadline=None)
@given(st.lists(_OP, max_size=12), st.lists(_OP, min_size=1, max_size=10), st.lists(_OP, max_size=12),
       st.integers(1, 6), st.lists(_OP, max_size=5), st.booleans())
def test_random_loops_keep_their_meaning(before, body, after, count, slots, late):
    """A counted loop between straight-line code, random work written in the jump's delay slots (and,
    late, the counter's decrement there too): the same final state, no jump in delay slots, and no
    stall (results in flight across the loop's label and branch are waited for by the schedule, not by
    the simulator)."""
    spec, sim = _spec(), _CACHE["sim"]
    d = _delay(spec)
    if late:  # the jump tests the count before its delay slot decrements it
        loop = ["    jnz r12, #top"] + _ds((["add r12, r12, #-1"] + slots)[:d])
        count -= 1
    else:
        loop = ["    add r12, r12, #-1", "    jnz r12, #top"] + _ds(slots)
    text = "\n".join(_setup() + [f"    {o}" for o in before] + [f"    movxm r12, #{count}", "top:"]
                     + [f"    {o}" for o in body] + loop
                     + [f"    {o}" for o in after] + ["    done"]) + "\n"
    out = _scheduled_or_refused(spec, text)
    _same_meaning(sim, spec, text, out)
    assert _stalls(sim, spec, out) == 0, out
    _check_delay_slots(spec, out)


@settings(max_examples=60, deadline=None)
@given(st.lists(_OP, max_size=12), st.sampled_from(["j", "jz r3,", "jnz r3,"]), st.lists(_OP, max_size=5),
       st.lists(_OP, max_size=8), st.lists(_OP, max_size=8))
def test_random_jumps_and_their_delay_slots_keep_their_meaning(before, jump, slots, skipped, after):
    """A forward jump (unconditional, or on a register the random code writes) with random work in its
    delay slots, over random code, to random code: the delay slots run on both paths, before the
    target; the scheduled program ends in the same state, never stalls, and has no jump in a jump's
    delay slots."""
    spec, sim = _spec(), _CACHE["sim"]
    text = "\n".join(_setup() + [f"    {o}" for o in before] + [f"    {jump} #over"] + _ds(slots)
                     + [f"    {o}" for o in skipped] + ["over:"] + [f"    {o}" for o in after]
                     + ["    done"]) + "\n"
    out = _scheduled_or_refused(spec, text)
    _same_meaning(sim, spec, text, out)
    assert _stalls(sim, spec, out) == 0, out
    _check_delay_slots(spec, out)
    assert out.count("#over") == 1 and out.count("over:") == 1


def test_an_unschedulable_program_is_refused(spec):
    """The delay slots of `jnz r3` hold a load of r3 (latency 7) and then an add to r3: the add's result
    must land after the load's, 6 bundles later, which 5 delay slots cannot hold, and the jump reads r3
    before both. As written, the exposed pipeline would keep the load's value (it lands last): not what
    the input means, so the scheduler says so instead of returning it."""
    text = "\n".join(_setup() + ["    jnz r3, #over", "    lda r3, [p3, #-24]", "    add r3, r5, r7"] + _ds()[2:]
                     + ["over:", "    done"]) + "\n"
    with pytest.raises(ScheduleError, match="cannot schedule"):
        schedule(spec, text)
    # and the assembler warns about the write that lands first
    warnings = stale_reads(spec, _assembler(spec).assemble(text), "t.s", text, limit=None)
    assert any("add writes r3, and lda on line" in w.message for w in warnings), warnings


def test_bundles_are_legal_and_dependences_kept(spec):
    m = machine(spec)
    text = "\n".join(_setup() + ["    lda r1, [p0, #0]", "    add r2, r1, r1", "    st r2, [p1, #0]",
                                 "    lda r3, [p1, #0]", "    vlda wl0, [p2], #32", "    vlda wh0, [p2], #32",
                                 "    vlda wl1, [p3], #32", "    vlda wh1, [p3], #32",
                                 "    vmac.f bml0, bml0, x0, x1, r9", "    vmac.f bml0, bml0, x0, x1, r9",
                                 "    vconv.bf16.fp32 wl2, bml0", "    done"]) + "\n"
    out = schedule(spec, text)
    lines = [l.strip() for l in out.splitlines() if l.strip() and not l.strip().startswith(".")]
    assert any(";" in l for l in lines)  # something was packed
    row = {}
    for k, line in enumerate(lines):
        slots = []
        for piece in line.split(";"):
            mn = piece.split()[0]
            slots.append(next(s.insn.slot for s in spec.instructions.values() if s.template.mnemonic == mn))
        assert len(slots) == len(set(slots)) and m.fits(frozenset(slots)), line
        for piece in line.split(";"):
            row[piece.strip()] = k
    # latencies (loads 7, MACs 6, the rest 1), not just order
    assert row["add r2, r1, r1"] - row["lda r1, [p0, #0]"] >= 7
    assert row["st r2, [p1, #0]"] > row["add r2, r1, r1"]
    assert row["lda r3, [p1, #0]"] > row["st r2, [p1, #0]"]  # memory: the load stays after the store
    macs = [k for k, l in enumerate(lines) if "vmac.f" in l]
    assert macs[1] - macs[0] >= 6  # the accumulator chain waits for the MAC latency
    conv = next(k for k, l in enumerate(lines) if "vconv" in l)
    assert conv - macs[1] >= 6
    assert lines[-1].endswith("done")


def _loop(body: list[str], count: int) -> str:
    return "\n".join(_setup() + [f"    movxm r5, #{count}", "top:"] + [f"    {b}" for b in body]
                     + ["    add r5, r5, #-1", "    jnz r5, #top"] + _ds() + ["    done"]) + "\n"


GEMM_LIKE = ["vlda wl0, [p0], #32", "vlda wh0, [p0], #32", "vlda wl1, [p1], #32", "vlda wh1, [p1], #32",
             "vmac.f bml0, bml0, x0, x1, r9", "vlda wl2, [p2], #32", "vlda wh2, [p2], #32",
             "vmac.f bml1, bml1, x2, x1, r9", "vadd.16 x3, x0, x2", "vst wl3, [p3], #32"]


# loads, a MAC and a conversion: the conversion of one iteration overlaps the loads of the next
PIPE = ["vlda wl0, [p0], #32", "vlda wh0, [p0], #32", "vmul.f bml1, x0, x0, r9", "vconv.bf16.fp32 wl5, bml1"]


def _loop_late(body: list[str], count: int) -> str:
    """A loop whose jump tests the count before its first delay slot decrements it (as the amdnpu
    templates count): `count` iterations."""
    return "\n".join(_setup() + [f"    movxm r5, #{count - 1}", "top:"] + [f"    {b}" for b in body]
                     + ["    jnz r5, #top"] + _ds(["add r5, r5, #-1"]) + ["    done"]) + "\n"


@pytest.mark.parametrize("late", [False, True])
@pytest.mark.parametrize("body", [GEMM_LIKE, PIPE])
@pytest.mark.parametrize("count", [1, 2, 3, 5, 16])
def test_pipelined_loops_compute_what_the_loop_does(spec, sim, count, body, late):
    text = (_loop_late if late else _loop)(body, count)
    out = schedule(spec, text)
    r0, r1 = _same_meaning(sim, spec, text, out)
    assert r1.cycles < r0.cycles
    assert _stalls(sim, spec, out) == 0 < _stalls(sim, spec, text)  # the loop as written leans on interlocks
    _check_delay_slots(spec, out)
    if body is PIPE and count >= 2:  # pipelined (two stages): a prologue before the label
        assert "vmul.f" in out.partition("top:")[0], out


def test_a_loop_is_software_pipelined_when_its_trip_count_allows(spec):
    out = schedule(spec, _loop(PIPE, 16))
    before, _, after = out.partition("top:")
    assert "vlda" in before and "vmul.f" in before  # a prologue: the first iteration's first stage
    lines = [l for l in after.splitlines() if l.strip()]
    j = next(k for k, l in enumerate(lines) if "jnz" in l)
    kernel = lines[:j + 1 + _delay(spec)]  # the branch sits delay_slots bundles before the kernel's end
    assert len(kernel) == 9  # II = 9: load, load, 7 cycles to the MAC (its operand register is reused)
    assert any("vconv" in l for l in kernel)  # the previous iteration's conversion runs in the kernel
    assert not any("jnz" in l for l in lines[j + 1:])
    # one iteration only (fewer than the two stages): the loop is not pipelined, and still correct
    out1 = schedule(spec, _loop(PIPE, 1))
    assert "vlda" not in out1.partition("top:")[0]


def test_modulo_schedule_respects_the_resource_and_recurrence_bounds(spec):
    m = machine(spec)
    program = _assembler(spec).assemble(_loop(GEMM_LIKE, 16))
    ops = []
    for p in program.placed:
        for (name, vals), piece in zip(p.ops, p.text.split(";")):
            ops.append(m.op(name, dict(vals), piece.strip()))
    k = next(i for i, o in enumerate(ops) if o.text.startswith("vlda wl0"))
    body, branch = ops[k:k + len(GEMM_LIKE) + 1], ops[k + len(GEMM_LIKE) + 1]
    counter = len(body) - 1
    flat = list_schedule(m, body, branch)
    ms = modulo_schedule(m, body, branch, counter, len(flat))
    assert ms is not None
    edges = dependences(body + [branch], loop=True)
    assert ms.ii >= res_mii(m, body + [branch]) and ms.ii >= rec_mii(len(body) + 1, edges)
    times = ms.times + [ms.branch_time]
    for u, v, lat, d in edges:  # every dependence, loop-carried ones across II
        assert times[v] + ms.ii * d >= times[u] + lat
    # the modulo reservation table: each row's slots form a legal bundle
    rows = {}
    for t, s in zip(ms.times, ms.slots):
        rows.setdefault(t % ms.ii, []).append(s)
    rows.setdefault(ms.branch_time % ms.ii, []).append(branch.slot)
    for slots in rows.values():
        assert len(slots) == len(set(slots)) and m.fits(frozenset(slots))
    # a recurrence bound: two MACs into one accumulator per iteration need II >= 2 * 6
    chain = ["vmac.f bml0, bml0, x0, x1, r9", "vmac.f bml0, bml0, x2, x3, r9"]
    program = _assembler(spec).assemble(_loop(chain, 8))
    ops = [m.op(n, dict(v), p.text) for p in program.placed for (n, v) in p.ops]
    k = next(i for i, o in enumerate(ops) if o.name.startswith("VMAC"))
    body, branch = ops[k:k + 3], ops[k + 3]
    assert rec_mii(4, dependences(body + [branch], loop=True)) == 12
    ms = modulo_schedule(m, body, branch, 2, 100)
    assert ms is not None and ms.ii >= 12


def test_scheduling_needs_a_vliw_description():
    with pytest.raises(ScheduleError, match="not a VLIW"):
        schedule(isadl.load("plena"), "")


def test_cli_schedule(tmp_path):
    src = tmp_path / "k.s"
    src.write_text(_loop(GEMM_LIKE, 4))
    out = tmp_path / "o.s"
    res = CliRunner().invoke(main, ["schedule", "amdnpu", str(src), "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert ";" in out.read_text() and "top:" in out.read_text()
    res = CliRunner().invoke(main, ["schedule", "amdnpu", str(src), "--no-pipeline"])
    assert res.exit_code == 0 and ";" in res.output
    src.write_text("vlda wl0, [p0], #3x\n")
    res = CliRunner().invoke(main, ["schedule", "amdnpu", str(src)])
    assert res.exit_code == 1 and "error" in res.output


# multi-operation bundles at least (the templates as written have none). relu and ffn were 3 and 100 before
# main's delay slots: relu's loop now moves its counter update and a store into the jump's delay slots
# instead of sharing bundles (its loop does not pipeline: a store and the next iteration's loads stay in
# order), and ffn's rolled hinge loops run one group per iteration instead of two (baseline/amdnpu/_lib.py)
@pytest.mark.parametrize("task,config,packed", [("gemm", "C3", 40), ("relu", "C1", 1), ("conv2d", "C1", 40),
                                                ("ffn", "C1", 90)])
def test_regenerated_baselines_are_packed_and_pass(spec, task, config, packed):
    from kcgen import taskspec
    from kcgen.evaluation import evaluate, layout_for
    from kcgen.kernels import find
    from kcgen.paths import TASKS, load_module
    t = taskspec.find(task)
    kernel = find("baseline", spec, t, "amdnpu", config)
    bundles = [l for l in kernel.text.split(".data")[0].splitlines() if l.strip() and ";" in l.split("//")[0]]
    assert len(bundles) >= packed  # multi-operation bundles (the templates as written have none)
    _check_delay_slots(spec, kernel.text)  # every jump has its delay slots, no jump is in them, no stale read
    code = [l.split("//")[0].strip() for l in kernel.text.split(".data")[0].splitlines()]
    code = [l for l in code if l and not l.endswith(":") and not l.startswith(".")]
    d = _delay(spec)
    slots = [code[k + 1:k + 1 + d] for k, l in enumerate(code) if l.split()[0] in ("j", "jz", "jnz", "jnzd")]
    assert slots and all(any(b != "nop" for b in s) for s in slots)  # every jump's delay slots hold work
    result = evaluate(kernel.text, spec, t, "amdnpu", config)
    assert result.correct, result.summary()
    gen = TASKS / "kernels" / "baseline" / "amdnpu" / f"{task}.py"
    mod = load_module(gen if gen.exists() else TASKS / "kernels" / "baseline" / "amdnpu.py")
    cfg = t.config("amdnpu", config)
    plain = mod.unscheduled(t, cfg, layout_for(spec, t, "amdnpu", config), spec)
    # the template as written means what it computes when every line waits for the ones before it: on
    # the interlocked variant (on the exposed pipeline its loops would read results early)
    locked = isadl.load("amdnpu", defines={"EXPOSED": 0})
    as_written = evaluate(plain, locked, t, "amdnpu", config, trials=1)
    assert as_written.correct, as_written.summary()
    assert result.cycles < as_written.cycles


def test_expanded_macros_are_refused_not_misplaced(spec):
    # The rewrite maps records to source lines; a .rept body line stands for several instructions.
    with pytest.raises(ScheduleError, match="does not take .macro/.rept/.irp expansions"):
        schedule(spec, "start:\n.rept 2\n    add r0, r0, #1\n.endr\n    done\n")
