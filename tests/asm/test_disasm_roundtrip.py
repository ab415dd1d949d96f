"""Disassembly round trips over the whole encoding space of every target (plena, amdnpu, coral, boom).

Hypothesis draws instruction words: per instruction, the fixed bits of its encoding and random bits
everywhere else (operand fields, and any bits no field claims), so every format and every operand
value is reached. A word decodes (always: its own instruction's fixed bits match), its text from
Disassembler.source() assembles again, and the word comes back:

  * exactly, when every bit of the word is a fixed bit or a field of an operand of the instruction
    it decodes to;
  * otherwise with its don't-care bits (bits that are neither fixed nor an operand's: a field of
    the format the instruction leaves unbound) as the assembler writes them (the encoding's fixed
    value, zero elsewhere), and every other bit equal. The text cannot carry such bits, so this is
    the precise rule, not a skip: the test counts such instructions per target.

VLIW bundles (amdnpu): a bundle format's fixed bits, and per slot of the format one instruction of
that slot drawn as above; the bundle must decode, and reassembling its text gives the same bundle
under the same rule per slot (a narrower bundle format never holds the same slots differently).

A second, independent check for coral and boom: objdump (GNU binutils) disassembles random words
of every instruction to the same mnemonic and operands as ours, GNU's alias choices aside.
"""
from __future__ import annotations

import random
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kcgen.asm.tables import bundle_formats

from . import common

ROOT = Path(__file__).resolve().parents[2]
TARGETS = ("plena", "amdnpu", "coral", "boom")
SETTINGS = settings(max_examples=25, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


for _t in TARGETS:  # the shared helpers look ISAs up by name
    common.FIXTURES.setdefault(_t, ROOT / "targets" / f"{_t}.isa")
spec, asm, dis = common.spec, common.assembler, common.disassembler


def operand_bits(target: str, name: str) -> int:
    """The bits of an instruction's word that its operands' fields occupy."""
    m = 0
    for b in dis(target).encs[name].bindings:
        m |= b.field.word_mask
    return m


def care_bits(target: str, name: str) -> int:
    """Fixed bits and operand bits: what the assembly text determines."""
    return dis(target).encs[name].insn.mask | operand_bits(target, name)


def instructions(target: str, slot: str | None = None) -> list[str]:
    return sorted(n for n, e in dis(target).encs.items() if (e.slot or None) == slot)


@st.composite
def word_of(draw, target: str, name: str) -> int:
    e = dis(target).encs[name]
    free = draw(st.integers(0, (1 << e.width) - 1))
    return (free & ~e.insn.mask) | e.insn.match


def reassembled(target: str, data: bytes, base: int) -> tuple[str, bytes]:
    source = dis(target).source(data, base)
    before, after = loop_frame(target, source)
    again = asm(target).assemble(before + source + after, "roundtrip.s")
    assert again.text.base == base
    n = dis(target).encs[spec(target).isa.hwloop.start].width // 8 if before else 0
    return source, bytes(again.text.data)[n:n + len(data)] if after or before else bytes(again.text.data)


def loop_frame(target: str, source: str) -> tuple[str, str]:
    """A hardware loop's closing instruction alone does not assemble (nor an opening one left open):
    the assembler checks that they pair. Give a lone one its partner."""
    h = spec(target).isa.hwloop
    if h is None or not h.start:
        return "", ""
    mnemonic = source.split()[0]
    start = spec(target).instructions[h.start].template.mnemonic
    end = spec(target).instructions[h.end].template.mnemonic
    if mnemonic == end:
        return dis(target).source(canonical(target, h.start).to_bytes(4, dis(target).order), 0), ""
    if mnemonic == start:
        return "", dis(target).source(canonical(target, h.end).to_bytes(4, dis(target).order), 0)
    return "", ""


def canonical(target: str, name: str) -> int:
    """The word of an instruction with every operand field zero, closed enums at their first name."""
    e = dis(target).encs[name]
    word = e.insn.match
    for b in e.bindings:
        o = b.operand
        if o.kind == "enum" and o.regfile in dis(target).closed_enums:
            word = b.field.insert(word, min(dis(target).enum_names[o.regfile]))
    return word


def check_word(target: str, word: int, got: int, decoded_as: str, source: str) -> None:
    care = care_bits(target, decoded_as)
    e = dis(target).encs[decoded_as]
    expected = (word & care) | (e.insn.match & ~care)
    assert got == expected, (f"{target}: {word:#x} decodes to {source.strip()!r} ({decoded_as}), which assembles "
                             f"to {got:#x}; want {expected:#x} (don't-care bits {~care & ((1 << e.width) - 1):#x})")


def base_of(target: str) -> int:
    a = spec(target).isa.abi
    return asm(target).assemble("", "empty.s").text.base if a is not None else 0


# ---- scalar (one instruction a word) targets ---------------------------------------------------

SCALAR = [(t, n) for t in TARGETS if not spec(t).isa.slots for n in instructions(t)]


@pytest.mark.parametrize("target", [t for t in TARGETS if not spec(t).isa.slots])
@settings(max_examples=300, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_every_word_of_every_instruction_reassembles(target, data):
    name = data.draw(st.sampled_from(instructions(target)), label="instruction")
    assert_word_round_trip(target, name, data.draw(word_of(target, name), label="word"))


@pytest.mark.parametrize("target", [t for t in TARGETS if not spec(t).isa.slots])
def test_three_random_words_of_each_instruction_reassemble(target):
    """Every instruction, not only those hypothesis happens to draw: three seeded random words each."""
    rnd = random.Random(3)
    for name in instructions(target):
        e = dis(target).encs[name]
        for _ in range(3):
            assert_word_round_trip(target, name, (rnd.getrandbits(e.width) & ~e.insn.mask) | e.insn.match)


def assert_word_round_trip(target: str, name: str, word: int) -> None:
    d = dis(target)
    n = d.encs[name].width // 8
    raw = word.to_bytes(n, d.order)
    base = base_of(target)
    (decoded,) = d.decode(raw, base)
    if not decoded.ok:  # only a reserved value (a rounding mode 5, a register past its file's end) makes it no instruction
        assert reserved_value(target, name, word), f"{target}: {word:#x} has {name}'s fixed bits but does not decode"
        assert_undecodable_round_trip(target, raw, base)
        return
    source, again = reassembled(target, raw, base)
    assert len(again) == n, f"{target}: {word:#x} -> {source!r} assembles to {len(again)} bytes"
    check_word(target, word, int.from_bytes(again, d.order), decoded.ops[0][0], source)


def assert_undecodable_round_trip(target: str, raw: bytes, base: int) -> None:
    """A word that is no instruction is written as `.word`, which gives it back, or (a dialect
    without data directives: plena) source() refuses it by name."""
    if not dis(target).data_directives:
        with pytest.raises(ValueError, match="is no instruction"):
            dis(target).source(raw, base)
        return
    source, again = reassembled(target, raw, base)
    assert source.split()[0] == ".word" and again == raw, source


def reserved_value(target: str, name: str, word: int) -> bool:
    d = dis(target)
    for b in d.encs[name].bindings:
        o, v = b.operand, b.field.extract(word)
        if o.kind == "reg" and not o.offset <= v + o.offset < o.offset + o.count:
            return True  # a register number past the end of its file
        if o.kind == "imm":
            sv = v - (1 << b.field.value_width) if o.signed and v >> (b.field.value_width - 1) else v
            if not o.lo <= sv <= o.hi:
                return True  # a field wider than its operand, holding more than the operand can say
        if o.kind == "enum" and o.regfile in d.closed_enums and v not in d.enum_names[o.regfile] and v != o.default:
            return True
    return False


@pytest.mark.parametrize("target", [t for t in TARGETS if not spec(t).isa.slots])
def test_each_instruction_decodes_from_its_own_encoding(target):
    """Each instruction is reachable: its canonical word (fixed bits, zero operands) decodes to it or
    to a more specific instruction that refines it (a hint over its base, nop over addi)."""
    d = dis(target)
    for name in instructions(target):
        e = d.encs[name]
        hit = d.decode_word(canonical(target, name), f"w{e.width}")
        assert hit is not None, name
        other = hit[0]
        assert other.name == name or (other.insn.mask & e.insn.mask) == e.insn.mask, (name, other.name)


def test_riscv_words_have_no_dont_care_bits(capsys):
    """Every bit of a RISC-V instruction is fixed or an operand (the spec reserves the rest as other
    encodings), so coral and boom words must come back exactly. plena and amdnpu have format fields
    some instructions leave unbound: their count is printed, the rule above applies to them."""
    found = {t: sorted(n for n, e in dis(t).encs.items() if care_bits(t, n) != (1 << e.width) - 1) for t in TARGETS}
    with capsys.disabled():
        for t in TARGETS:
            print(f"\n{t}: {len(found[t])} of {len(dis(t).encs)} instructions have don't-care bits")
    assert found["coral"] == [] and found["boom"] == [], (found["coral"], found["boom"])


# ---- VLIW bundles ----------------------------------------------------------------------------

@st.composite
def bundle_of(draw, target: str) -> tuple[int, dict]:
    fmts = bundle_formats(spec(target))
    fmt = draw(st.sampled_from(fmts), label="bundle format")
    word = fmt.fixed_match
    chosen = {}
    for slot, field in fmt.fields.items():
        name = draw(st.sampled_from(instructions(target, slot)), label=f"slot {slot}")
        w = draw(word_of(target, name))
        chosen[slot] = name
        word = field.insert(word, w)
    return fmt, word, chosen


@pytest.mark.parametrize("target", [t for t in TARGETS if spec(t).isa.slots])
@settings(max_examples=300, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_every_bundle_reassembles(target, data):
    fmt, word, names = data.draw(bundle_of(target))
    assert_bundle_round_trip(target, fmt, word, names)


@pytest.mark.parametrize("target", [t for t in TARGETS if spec(t).isa.slots])
def test_each_slot_instruction_reassembles_in_a_bundle(target):
    """Every instruction of every slot, in a seeded random bundle format that has its slot, with
    seeded random instructions in the other slots."""
    rnd = random.Random(3)
    fmts = bundle_formats(spec(target))
    for slot in sorted({e.slot for e in dis(target).encs.values() if e.slot}):
        for name in instructions(target, slot):
            fmt = rnd.choice([f for f in fmts if slot in f.fields])
            word, names = fmt.fixed_match, {}
            for other, field in fmt.fields.items():
                names[other] = name if other == slot else rnd.choice(instructions(target, other))
                e = dis(target).encs[names[other]]
                word = field.insert(word, (rnd.getrandbits(e.width) & ~e.insn.mask) | e.insn.match)
            assert_bundle_round_trip(target, fmt, word, names)


def assert_bundle_round_trip(target: str, fmt, word: int, names: dict) -> None:
    d = dis(target)
    raw = word.to_bytes(fmt.width // 8, d.order)
    base = base_of(target)
    found = d.bundle_slots(raw, 0)
    if found is None:
        assert any(reserved_value(target, name, fmt.fields[slot].extract(word)) for slot, name in names.items()), \
            f"{target}: bundle {word:#x} of {fmt.name} does not decode"
        assert_undecodable_round_trip(target, raw, base)
        return
    _, n, _, hits = found
    source, again = reassembled(target, raw, base)
    assert len(again) == n, f"{target}: {fmt.name} bundle -> {source!r} assembles to {len(again)} bytes"
    back = int.from_bytes(again, d.order)
    for slot, (e, _) in hits:
        field = fmt.fields[slot]
        check_word(target, field.extract(word), field.extract(back), e.name, source)
    assert back & fmt.fixed_mask == fmt.fixed_match


# ---- objdump as a second opinion -----------------------------------------------------------------

OBJDUMP = shutil.which("riscv64-unknown-elf-objdump")
AS = shutil.which("riscv64-unknown-elf-as")
GNU_MARCH = {"coral": ("rv32imf_zve32x_zicsr_zifencei_zbb", "ilp32"), "boom": ("rv64imfd_zicsr_zifencei", "lp64d")}
_OBJDUMP_LINE = re.compile(r"^\s*([0-9a-f]+):\s+([0-9a-f]{8})\s+(.*)$")


def objdump_texts(target: str, words: list[int], workdir: Path) -> list[str]:
    """objdump -M no-aliases of each word (assembled with .insn, so the ELF attributes name the
    extensions), in order."""
    march, abi = GNU_MARCH[target]
    src, obj = workdir / "w.s", workdir / "w.o"
    src.write_text("".join(f".insn {w:#010x}\n" for w in words))
    subprocess.run([AS, f"-march={march}", f"-mabi={abi}", "-o", str(obj), str(src)], check=True,
                   capture_output=True, text=True)
    out = subprocess.run([OBJDUMP, "-d", "-M", "no-aliases", str(obj)], check=True, capture_output=True,
                         text=True).stdout
    texts = [m.group(3) for m in map(_OBJDUMP_LINE.match, out.splitlines()) if m]
    assert len(texts) == len(words), out
    return texts


def normalized(text: str) -> list:
    """Tokens of an instruction's text: numbers as values (objdump writes branch targets as bare hex
    followed by <symbol+offset>, immediates in hex or decimal), names in lower case."""
    text = re.sub(r"\s*#.*$", "", text)
    m = re.match(r"^(\S+)\s+(.*?)([0-9a-f]+) <[^>]*>$", text)
    if m:
        text = f"{m.group(1)} {m.group(2)}0x{m.group(3)}"
    head, *rest = text.strip().split(None, 1)
    rest = rest[0] if rest else ""
    out: list = [head.lower()]
    for tok in re.split(r"[,()\s]+", rest):
        if not tok:
            continue
        try:
            out.append(int(tok, 0))
        except ValueError:
            out.append(tok.lower())
    return out


def ours_text(target: str, word: int, address: int) -> tuple[str, str]:
    d = dis(target)
    (decoded,) = d.decode(word.to_bytes(4, d.order), address)
    if not decoded.ok:
        return "", ""
    name, vals = decoded.ops[0]
    xlen = 32 if target == "coral" else 64  # objdump writes a target below 0 as an unsigned address
    targets = {vals[b.operand.name]: hex(vals[b.operand.name] % (1 << xlen)) for b in d.encs[name].bindings
               if b.operand.kind == "pcrel"}
    return name, d.format_op(name, vals, targets, address, 4)


def agrees(target: str, name: str, ours: list, gnu: list) -> bool:
    if ours == gnu:
        return True
    spec_ops = dis(target).encs[name].insn.operands
    # A CSR without a name here (one the target does not implement) is a number for us, a name for objdump.
    if "csr" in spec_ops and len(ours) == len(gnu):
        return all(a == b or (isinstance(a, int) and isinstance(b, str)) for a, b in zip(ours, gnu))
    return False


# GNU prints these encodings under another name even with -M no-aliases (its table marks them as
# instructions of their own): (our text, objdump's mnemonic).
OBJDUMP_OWN_NAMES = {("csrrw zero, cycle, zero", "unimp")}


@pytest.mark.skipif(not (AS and OBJDUMP), reason="GNU binutils for RISC-V missing: "
                    "apt-get install -y binutils-riscv64-unknown-elf")
@pytest.mark.parametrize("target", ["coral", "boom"])
def test_disassembly_text_agrees_with_objdump(target, capsys):
    rnd = random.Random(21)
    d = dis(target)
    words = []
    for name in instructions(target):
        e = d.encs[name]
        for _ in range(3):
            words.append((rnd.getrandbits(32) & ~e.insn.mask) | e.insn.match)
    with tempfile.TemporaryDirectory() as tmp:
        gnu = objdump_texts(target, words, Path(tmp))
    equal = reserved = 0
    differ = []
    for k, (word, g) in enumerate(zip(words, gnu)):
        name, text = ours_text(target, word, 4 * k)
        if not text:
            reserved += 1  # no instruction for us (a reserved value): objdump prints its best guess
            continue
        if agrees(target, name, normalized(text), normalized(g)) or (text, g.split()[0]) in OBJDUMP_OWN_NAMES:
            equal += 1
        else:
            differ.append(f"{word:#010x}: ours {text!r} objdump {g!r}")
    with capsys.disabled():
        print(f"\n{target}: {equal} of {len(words) - reserved} random words disassemble as objdump does "
              f"({reserved} reserved encodings left out)")
    assert not differ, "\n".join(differ[:40])


@pytest.mark.parametrize("text", ["vle8.v v1, (a0)", "vse32.v v2, (a1)", "vle8.v v1, (a0), v0.t",
                                  "vlm.v v1, (a0)", "vlse16.v v1, (a0), a1", "vluxei8.v v1, (a0), v2"])
def test_vector_memory_text_keeps_its_parenthesis(text):
    """`kcgen disasm coral` printed `vle8.v v1, (a0` for an unmasked unit-stride access: the
    closing parenthesis went with the omitted mask operand."""
    word = asm("coral").assemble(text + "\n", "v.s").text.data
    assert dis("coral").source(bytes(word), 0).strip() == text
