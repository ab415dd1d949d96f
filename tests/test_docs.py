"""The language reference's worked example is a real, checked ISA."""
import re
from pathlib import Path

import isadl

DOC = Path(__file__).resolve().parent.parent / "docs" / "isadl.md"


def test_worked_example_parses_and_checks():
    blocks = re.findall(r"```isadl\n(.*?)```", DOC.read_text(), re.S)
    assert blocks, "docs/isadl.md has no ```isadl worked example"
    spec = isadl.load_text(blocks[0], "docs/isadl.md#example")
    assert len(spec.isa.instructions) >= 5 and spec.isa.pseudos and spec.isa.abi and spec.isa.timing
