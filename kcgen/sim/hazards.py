"""Reads the hardware would make before a result is written: the assembler's warnings for a VLIW
target whose pipeline is exposed (`timing vliw { exposed = 1 }`, docs/isadl.md section 8).

Such hardware has no interlock on registers: an instruction that reads a register before the
instruction writing it has reached its `latency` gets the old value, and so does it in the
simulators (docs/simulator.md, "Exposed pipelines"). A kernel that relies on such a read is rarely
meant to: these warnings say where. The analysis follows the bundles in address order, one cycle
each, with the registers an instruction reads and writes through its operands (the registers whose
results wait in the simulators: kcgen.sim.cgen._static_regs), forwarding paths included (`bypass
NAME N`); it forgets everything at a label (a jump may land there) and so reports only what
straight-line code certainly does. A read of a register another slot of the same bundle writes is
reported too: it reads the old value, as every operand is read when the bundle issues; and so is a
write that lands before the result of an earlier instruction to the same register (which then
overwrites it).
"""
from __future__ import annotations

import weakref
from typing import Optional

from isadl import ir
from isadl.check import Spec, evaluate
from isadl.diagnostics import Diagnostic

from .cgen import _static_regs
from .layout import layout

MAX_WARNINGS = 20  # then one line counting the rest


def exposed(spec: Spec) -> bool:
    t = spec.isa.timing
    return t is not None and t.model == "vliw" and any(
        p.name == "exposed" and spec.params_eval(p.value) for p in t.props)


class _Model:
    def __init__(self, spec: Spec):
        self.spec = spec
        self.L = layout(spec)
        self.insns = {}
        for name, s in spec.instructions.items():
            reads, writes = _static_regs(s.insn.semantics, s.operands)
            lat = s.insn.latency if s.insn.latency is not None else s.insn.cycles
            try:
                lat = spec.params_eval(lat) if lat is not None else 1
            except Exception:  # reads an operand: not known here, assume the next bundle sees it
                lat = 1
            self.insns[name] = (reads, writes, max(int(lat), 1), s.template.mnemonic,
                                (s.insn.bypass, s.insn.bypass_cycles) if s.insn.bypass else None)

    def parts(self, file: str, index: int) -> list[tuple[str, int]]:
        """The storage a register is made of: (file, index) per part (a group's parts, nested)."""
        g = self.L.groups.get(file)
        if g is None:
            return [(file, index)]
        out = []
        for part, expr in g.parts:
            i = evaluate(expr, lambda n: index if n.id == "n" else self.spec.params[n.id])
            out += self.parts(part, i)
        return out

    def name(self, file: str, index: int) -> str:
        rf = self.spec.isa.regfile(file)
        return ((rf.asm if rf is not None and rf.asm else file + "{n}")).replace("{n}", str(index))


_MODELS: dict[int, tuple] = {}  # id(spec) -> (a weak reference to the spec, its _Model)


def _model(spec: Spec) -> _Model:
    """The spec's _Model, built once (40 ms for amdnpu: every assembly of a kernel asks for it)."""
    hit = _MODELS.get(id(spec))
    if hit is not None and hit[0]() is spec:
        return hit[1]
    m = _Model(spec)
    # the callback holds the dict itself: at interpreter exit the module global is already None
    _MODELS[id(spec)] = (weakref.ref(spec, lambda _, k=id(spec), models=_MODELS: models.pop(k, None)), m)
    return m


def stale_reads(spec: Spec, program, path: str, source: Optional[str] = None,
                limit: Optional[int] = MAX_WARNINGS) -> list[Diagnostic]:
    """Warnings for the reads of `program` that an exposed pipeline makes before the value is
    written, located at the reading operation (`file:line:col: warning: ...`); past `limit` of them
    (None: no limit) one more that counts the rest."""
    m = _model(spec)
    text = program.sections.get(".text")
    if text is None:
        return []
    lo, hi = text.base, text.base + len(text.data)
    labels = {a for a in program.symbols.values() if lo <= a < hi}
    lines = source.splitlines() if source is not None else []
    ready: dict[tuple[str, int], tuple] = {}  # part -> (first cycle that reads the new value, line, mnemonic,
    #                                           latency, bypass)
    out: list[Diagnostic] = []
    extra = 0
    cycle = 0
    for p in sorted((p for p in program.placed if lo <= p.address < hi), key=lambda p: p.address):
        if p.address in labels:
            ready.clear()
        written: dict[tuple[str, int], str] = {}  # parts an earlier slot of this bundle writes
        pending = []
        raw = lines[p.line - 1] if 0 < p.line <= len(lines) else p.text
        for name, values in p.ops:
            reads, writes, lat, mnem, bypass = m.insns[name]
            seen = set()
            for file, op in reads:
                reg = values.get(op)
                if not isinstance(reg, int) or (file, reg) in seen:
                    continue
                seen.add((file, reg))
                for part in m.parts(file, reg):
                    msg = None
                    if part in written:
                        msg = (f"{mnem} reads {m.name(file, reg)}, which {written[part]} in the same bundle "
                               f"writes: it reads the old value (every operand is read as the bundle issues)")
                    elif part in ready:
                        r, line, pm, plat, pb = ready[part]
                        fwd = bypass is not None and pb == bypass  # a forwarding path between the two
                        if fwd:
                            r = max(r - plat + 1, r - bypass[1])
                        if r <= cycle:
                            continue
                        via = f" ({plat - min(bypass[1], plat - 1)} through the {bypass[0]} forwarding path)" if fwd else ""
                        msg = (f"{mnem} reads {m.name(file, reg)} {r - cycle} cycle(s) before it is written: "
                               f"{pm} on line {line} has latency {plat}{via}; the hardware does not wait and reads "
                               f"the old value, as the simulators do: put {r - cycle} more bundle(s) between them")
                    if msg is None:
                        continue
                    if limit is None or len(out) < limit:
                        col = raw.find(mnem) + 1 if mnem in raw else 1
                        out.append(Diagnostic(ir.Loc(path, p.line, col), msg, "warning"))
                    else:
                        extra += 1
                    break
            for file, op in writes:
                reg = values.get(op)
                if isinstance(reg, int):
                    late = None
                    for part in m.parts(file, reg):
                        pending.append((part, (cycle + lat, p.line, mnem, lat, bypass)))
                        written[part] = mnem
                        if part in ready and ready[part][0] > cycle + lat:
                            late = ready[part]
                    if late is not None:  # write after write, landing in the wrong order
                        msg = (f"{mnem} writes {m.name(file, reg)}, and {late[2]} on line {late[1]} (latency "
                               f"{late[3]}) writes it {late[0] - cycle - lat} cycle(s) later although issued "
                               f"earlier: the older result is what stays")
                        if limit is None or len(out) < limit:
                            out.append(Diagnostic(ir.Loc(path, p.line, raw.find(mnem) + 1 if mnem in raw else 1),
                                                  msg, "warning"))
                        else:
                            extra += 1
        for part, r in pending:
            ready[part] = r
        cycle += 1
    if extra:
        out.append(Diagnostic(ir.Loc(path, 0, 0), f"... and {extra} more reads before the value is written "
                                                  f"(exposed pipeline: {len(out) + extra} in all)", "warning"))
    return out
