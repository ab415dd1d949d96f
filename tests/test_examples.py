"""Every `example` in every fixture and target assembles with the generated assembler (and, for
instruction-level examples, encodes that instruction). Running them on the simulator comes with #4."""
from pathlib import Path

import pytest

import isadl
from kcgen.asm import Assembler

ROOT = Path(__file__).resolve().parent.parent
FILES = sorted((ROOT / "tests" / "isadl" / "fixtures").glob("*.isa")) + sorted((ROOT / "targets").glob("*.isa"))


def _cases():
    for path in FILES:
        spec = isadl.load(path)
        for insn in spec.isa.instructions:
            for i, ex in enumerate(insn.examples):
                yield pytest.param(path, insn.name, ex.code, id=f"{path.stem}-{insn.name}-{i}")
        for i, ex in enumerate(spec.isa.examples):
            yield pytest.param(path, None, ex.code, id=f"{path.stem}-isa-{i}")


@pytest.mark.parametrize("path,insn,code", list(_cases()))
def test_example_assembles(path, insn, code):
    asm = Assembler(isadl.load(path))
    program = asm.assemble(code, f"{path.name}:example")
    assert program.placed, "the example assembles to no instructions"
    if insn is not None:
        names = {name for p in program.placed for name, _ in p.ops}
        assert insn in names, f"example of {insn} assembles to {sorted(names)}"
