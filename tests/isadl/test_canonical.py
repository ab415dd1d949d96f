"""Canonical JSON and the content hash: stable, formatting-independent, meaning-sensitive."""
import json

import isadl
from isadl import canonical
from isadl.printer import print_isa

SRC = """
isa c "canonical" {
  param N = 8
  regs r[16]: u32 { zero r0 }
  format F { op 5:0; rd 9:6; rs 13:10; imm 31:14 }
  instruction ADDI {
    syntax "addi {rd:r}, {rs:r}, {imm:u18}"
    encoding F(op=1, rd, rs, imm)
    semantics { r[rd] = r[rs] + u32(imm) * N }
  }
}
"""


def test_hash_ignores_formatting_and_comments():
    a = isadl.load_text(SRC)
    reformatted = print_isa(a.isa).replace("\n", "\n# a comment\n", 3)
    b = isadl.load_text(reformatted)
    assert canonical.content_hash(a) == canonical.content_hash(b)
    assert canonical.dumps(a) == canonical.dumps(b)


def test_hash_changes_with_meaning_and_overrides():
    base = canonical.content_hash(isadl.load_text(SRC))
    assert canonical.content_hash(isadl.load_text(SRC.replace("op=1", "op=2"))) != base
    assert canonical.content_hash(isadl.load_text(SRC, defines={"N": 16})) != base


def test_json_content():
    data = json.loads(canonical.dumps(isadl.load_text(SRC)))
    assert data["format"] == "isadl-ir/1"
    assert data["param_values"] == {"N": 8}
    enc = data["encodings"]["ADDI"]
    assert (enc["mask"], enc["match"], enc["mnemonic"]) == ("0x3f", "0x1", "addi")
    assert enc["operands"]["imm"] == {"kind": "imm", "width": 18, "signed": False, "class": None,
                                      "offset": 0, "default": None}
    insn = data["isa"]["instructions"][0]
    assert insn["semantics"] == [{"stmt": "assign", "target": "r[rd]", "value": "r[rs] + u32(imm) * N"}]
    assert "loc" not in json.dumps(data)


def test_key_order_is_sorted():
    text = canonical.dumps(isadl.load_text(SRC))
    data = json.loads(text)
    assert list(data) == sorted(data)
    assert list(data["isa"]) == sorted(data["isa"])
