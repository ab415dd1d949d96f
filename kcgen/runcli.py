"""`kcgen run`: assemble, set up, run and report, for people and scripts (--json)."""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Optional

import click
import numpy as np

import isadl
from isadl.diagnostics import did_you_mean
from isadl.types import FloatT, VecT

EXIT = {"halted": 0, "trap": 2, "budget": 3, "timeout": 4}


class _Usage(Exception):
    pass


def canonical_reg_names(spec) -> dict[tuple[str, int], str]:
    """(file, index) -> the register's name as its `asm` pattern makes it (x10, f3, v2)."""
    out = {}
    for rf in spec.isa.regfiles:
        if rf.group:
            continue
        pattern = rf.asm or rf.name + "{n}"
        for i in range(spec.params_eval(rf.count)):
            out[(rf.name, i)] = pattern.replace("{n}", str(i))
    return out


def _raw(arr_elem: np.ndarray) -> int | str:
    """A register's bit pattern: unsigned int, or hex when wider than 64 bits."""
    data = np.ascontiguousarray(arr_elem).tobytes()
    value = int.from_bytes(data, "little")
    return value if len(data) <= 8 else f"{value:#0{2 + 2 * len(data)}x}"


def _set(spec, sim, item: str) -> None:
    name, sep, value = item.partition("=")
    if not sep:
        raise _Usage(f"--set {item}: expected REG=VALUE")
    name = name.strip()
    key = spec.regnames.get(name) or spec.regnames.get(name.lower())
    store = sim.layout.stores.get(key[0] if key else name)
    if store is None or (key is None and store.kind != "state"):
        known = list(spec.regnames) + [n for n, s in sim.layout.stores.items() if s.kind == "state"]
        raise _Usage(f"--set {item}: unknown register or state '{name}'{did_you_mean(name, known)}")
    view = store.numpy_view(sim.arrays[store.name])
    index = key[1] if key else 0
    try:
        number = float(value) if isinstance(store.elem.type, FloatT) else int(value.replace("_", ""), 0)
    except ValueError:
        raise _Usage(f"--set {item}: '{value}' is not a number") from None
    if isinstance(store.type, VecT):
        raise _Usage(f"--set {item}: vector registers are set with --load")
    if view.ndim == 0 or store.kind == "state" and not store.shape:
        view[...] = number
    else:
        if isinstance(store.elem.type, FloatT):
            view.reshape(-1)[index] = number
        else:
            bits = store.elem.type.width
            number &= (1 << bits) - 1
            if store.elem.type.signed and number >> (bits - 1):
                number -= 1 << bits
            view.reshape(-1)[index] = number


_MEM_AT = re.compile(r"^\s*([A-Za-z_]\w*)\s*@\s*(\w+)\s*$")


def _mem_at(sim, text: str, what: str):
    m = _MEM_AT.match(text)
    if not m:
        raise _Usage(f"{what}: expected MEM@ADDR")
    name, addr = m.group(1), m.group(2)
    st = sim.layout.stores.get(name)
    if st is None or st.kind != "mem":
        mems = [n for n, s in sim.layout.stores.items() if s.kind == "mem"]
        raise _Usage(f"{what}: unknown memory '{name}'{did_you_mean(name, mems)} (memories: {', '.join(mems)})")
    try:
        a = int(addr, 0)
    except ValueError:
        raise _Usage(f"{what}: address '{addr}' is not an integer") from None
    return st, a


def _load(sim, item: str) -> None:
    where, sep, path = item.partition("=")
    if not sep:
        raise _Usage(f"--load {item}: expected MEM@ADDR=FILE.npy")
    st, a = _mem_at(sim, where, f"--load {item}")
    try:
        data = np.load(path, allow_pickle=False)
    except (OSError, ValueError) as exc:
        raise _Usage(f"--load {item}: cannot read {path}: {exc}") from None
    flat = np.asarray(data).reshape(-1)
    if a < 0 or a + flat.size > st.shape[0]:
        raise _Usage(f"--load {item}: {flat.size} elements at {a} do not fit in {st.name} ({st.shape[0]} elements)")
    view = st.numpy_view(sim.arrays[st.name])
    view[a:a + flat.size] = flat.astype(view.dtype)


def _dump(sim, item: str):
    where, sep, count = item.partition(":")
    if not sep:
        raise _Usage(f"--dump {item}: expected MEM@ADDR:COUNT")
    st, a = _mem_at(sim, where, f"--dump {item}")
    try:
        n = int(count, 0)
    except ValueError:
        raise _Usage(f"--dump {item}: count '{count}' is not an integer") from None
    if a < 0 or n < 0 or a + n > st.shape[0]:
        raise _Usage(f"--dump {item}: {st.name} has {st.shape[0]} elements")
    return st, a, n


def run(spec, source: str, max_steps: int, sets, loads, dumps, trace: bool, as_json: bool,
        seconds: Optional[float] = None) -> int:
    from kcgen.asm import Assembler
    from kcgen.sim.build import BuildError
    from kcgen.target import build_target
    try:
        text = Path(source).read_text(encoding="utf-8-sig")
    except OSError as exc:
        click.echo(f"{source}: error: cannot read file: {exc.strerror}", err=True)
        return 1
    try:
        program = Assembler(spec).assemble(text, source)
    except isadl.IsaError as exc:
        click.echo(str(exc), err=True)
        return 1
    for w in program.warnings:
        click.echo(w.render({source: text}), err=True)
    try:
        sim = build_target(spec).simulator()
    except BuildError as exc:
        click.echo(f"error: {exc}", err=True)
        return 1
    try:
        sim.load(program)
        for item in sets:
            _set(spec, sim, item)
        for item in loads:
            _load(sim, item)
        wanted = [(item, *_dump(sim, item)) for item in dumps]
    except _Usage as exc:
        click.echo(f"error: {exc}", err=True)
        return 1
    except Exception as exc:  # LoadError: the program does not fit the machine
        from kcgen.sim.simulator import LoadError
        if isinstance(exc, LoadError):
            click.echo(f"{source}: error: {exc}", err=True)
            return 1
        raise
    result = sim.run(max_steps, trace=trace, seconds=seconds)
    for entry in result.trace:
        click.echo(str(entry))
    names = canonical_reg_names(spec)
    regs = {}
    for (file, i), name in names.items():
        regs[name] = _raw(sim.arrays[file][i])
    out_dumps = {}
    for item, st, a, n in wanted:
        vals = st.numpy_view(sim.arrays[st.name])[a:a + n]
        out_dumps[item] = [float(v) if np.issubdtype(np.asarray(v).dtype, np.floating) or
                           isinstance(st.elem.type, FloatT) else int(v) for v in vals]
    trap = None
    if result.trap:
        trap = {"pc": result.trap.pc, "line": result.trap.line, "message": result.trap.message}
    if as_json:
        click.echo(json.dumps({"status": result.status, "cycles": result.cycles, "instret": result.instret,
                               "regs": regs, "trap": trap, "dumps": out_dumps}))
    else:
        click.echo(f"{result.status}: {result.instret} instructions, {result.cycles} cycles")
        for item, values in out_dumps.items():
            click.echo(f"{item}: {' '.join(str(v) for v in values)}")
    if result.trap:
        click.echo(f"{source}:{result.trap.line or 0}: trap: {result.trap}", err=True)
    elif result.status == "budget":
        click.echo(f"{source}: stopped after {max_steps} steps (--max-steps)", err=True)
    return EXIT[result.status]
