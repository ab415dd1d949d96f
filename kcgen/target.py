"""A built target: every artifact generated from one checked ISA, cached together.

`build_target(spec)` compiles the C simulator (kcgen.sim.build, content-addressed) and writes
beside it the canonical IR (`isa.json`), the assembler's encoding tables (`encodings.json`) and
the documentation (`docs/`: Markdown, HTML, the grep index). A second call with the same ISA,
overrides and generator is a cache hit and only reads file names.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from isadl import canonical
from isadl.check import Spec

from kcgen.sim.build import Built, build


@dataclass
class Target:
    spec: Spec
    built: Built

    @property
    def directory(self) -> Path:
        return self.built.directory

    @property
    def docs(self) -> Path:
        return self.directory / "docs"

    def simulator(self):
        from kcgen.sim.simulator import Simulator
        return Simulator(self.spec, self.built)


def encoding_tables(spec: Spec) -> dict:
    """Mask, match and operand fields of every instruction: what a decoder needs, as plain data."""
    out = {}
    for name, s in spec.instructions.items():
        if s.format is None:
            continue
        fields = {}
        for fname, op in s.fields.items():
            f = s.format.fields[fname]
            o = s.operands[op]
            fields[op] = {"field": fname, "pieces": [list(p) for p in f.pieces], "shift": f.shift,
                          "kind": o.kind, "signed": o.signed, "width": o.width, "offset": o.offset}
        out[name] = {"mnemonic": s.template.mnemonic, "syntax": s.template.text, "format": s.format.name,
                     "width": s.format.width, "mask": hex(s.mask), "match": hex(s.match),
                     "slot": s.insn.slot, "operands": fields}
    return out


def build_target(spec: Spec, force: bool = False) -> Target:
    built = build(spec, force=force)
    done = built.directory / "artifacts.done"
    if force or not done.exists():
        from kcgen import docs
        (built.directory / "isa.json").write_text(canonical.dumps(spec))
        (built.directory / "encodings.json").write_text(json.dumps(encoding_tables(spec), indent=1))
        docs.write_docs(spec, built.directory / "docs")
        done.write_text("ok\n")
    return Target(spec, built)
