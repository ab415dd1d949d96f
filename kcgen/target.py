"""A built target: every artifact generated from one checked ISA, cached together.

`build_target(spec)` compiles the C simulator (kcgen.sim.build, content-addressed) and writes
beside it the canonical IR (`isa.json`, which also holds every instruction's encoding: mask,
match and operand fields, the tables an assembler or decoder needs) and the documentation (`docs/`: Markdown, HTML, the grep index). A second call with the same ISA,
overrides and generator is a cache hit and only reads file names.
"""
from __future__ import annotations

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


def build_target(spec: Spec, force: bool = False) -> Target:
    built = build(spec, force=force)
    done = built.directory / "artifacts.done"
    if force or not done.exists():
        from kcgen import docs
        (built.directory / "isa.json").write_text(canonical.dumps(spec))
        docs.write_docs(spec, built.directory / "docs")
        done.write_text("ok\n")
    return Target(spec, built)
