"""`isa X extends Y { … }`: merge an overlay onto its (recursively resolved) base ISA."""
from __future__ import annotations

import dataclasses
from typing import Callable, Optional

from . import ir
from .diagnostics import Reporter

# Categories concatenated base-first; the overlay adds to them.
_LISTS = ("constraints", "floats", "mxs", "regfiles", "regclasses", "states", "memories", "formats", "slots",
          "enums", "instructions", "pseudos", "functions", "examples", "sections")


def resolve(isa: ir.ISA, find: Callable[[str, ir.ISA], Optional[ir.ISA]], reporter: Reporter,
            _chain: tuple[str, ...] = ()) -> ir.ISA:
    """The fully merged ISA. ``find(name, requester)`` returns the unresolved base or None."""
    if not isa.extends:
        return _own_overrides(isa, reporter)
    if isa.extends in _chain or isa.extends == isa.name:
        reporter.error(isa.loc, "cyclic extends: " + " -> ".join(_chain + (isa.name, isa.extends)))
        return isa
    base_raw = find(isa.extends, isa)
    if base_raw is None:
        reporter.error(isa.extends_loc, f"isa {isa.name} extends unknown isa '{isa.extends}'")
        return isa
    base = resolve(base_raw, find, reporter, _chain + (isa.name,))
    return merge(base, isa, reporter)


def _own_overrides(isa: ir.ISA, reporter: Reporter) -> ir.ISA:
    for p in isa.params:
        if p.override:
            reporter.error(p.loc, f"override param {p.name}: isa {isa.name} extends nothing; use 'param'")
    return isa


def merge(base: ir.ISA, over: ir.ISA, reporter: Reporter) -> ir.ISA:
    params = list(base.params)
    index = {p.name: i for i, p in enumerate(params)}
    for p in over.params:
        if p.override:
            if p.name not in index:
                reporter.error(p.loc, f"override param {p.name}: base isa {base.name} has no such parameter")
                continue
            params[index[p.name]] = dataclasses.replace(p, override=False, doc=p.doc or params[index[p.name]].doc)
        elif p.name in index:
            reporter.error(p.loc, f"parameter {p.name} is already defined by base isa {base.name}; "
                                  f"write 'override param {p.name} = …' to change it")
        else:
            params.append(p)
    if over.word is not None and base.word is not None and over.word != base.word:
        reporter.error(over.word_loc, f"isa {over.name} cannot change the word size of {base.name} ({base.word})")
    lists = {k: getattr(base, k) + getattr(over, k) for k in _LISTS}
    sections = []
    for s in lists["sections"]:
        if all(s.title != t.title for t in sections):
            sections.append(s)
    lists["sections"] = tuple(sections)
    timing = base.timing
    if over.timing is not None:
        if base.timing is not None and over.timing.model != base.timing.model:
            reporter.error(over.timing.loc, f"isa {over.name} cannot change the timing model of {base.name} "
                                            f"({base.timing.model})")
        elif base.timing is not None:
            props = {p.name: p for p in base.timing.props}
            props.update({p.name: p for p in over.timing.props})
            timing = dataclasses.replace(base.timing, units=base.timing.units + over.timing.units,
                                         props=tuple(props.values()),
                                         caches=_merged(base.timing.caches, over.timing.caches),
                                         predictors=_merged(base.timing.predictors, over.timing.predictors),
                                         doc="\n\n".join(d for d in (base.timing.doc, over.timing.doc) if d))
        else:
            timing = over.timing
    return dataclasses.replace(
        base, name=over.name, title=over.title or base.title, extends=base.name if not base.extends else
        f"{base.name}",
        version=over.version or base.version, word=base.word if base.word is not None else over.word,
        endian=over.endian or base.endian, doc="\n\n".join(d for d in (base.doc, over.doc) if d),
        params=tuple(params), timing=timing, dialect=over.dialect or base.dialect, abi=over.abi or base.abi,
        hwloop=over.hwloop or base.hwloop, loc=over.loc, **lists)


def _merged(base: tuple, over: tuple) -> tuple:
    """Caches or predictors of an overlay's timing section: one of the base's name is replaced."""
    names = {x.name for x in over}
    return tuple(x for x in base if x.name not in names) + tuple(over)
