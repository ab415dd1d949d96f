"""The generated disassembler: bytes → one line per instruction, from the same declarations.

Decoding tries instructions from the most specific encoding (most fixed bits) to the least, so an
encoding that refines another (a hint, `nop` over `addi`) wins. VLIW bundles are recognised by
their fixed tag bits, then each slot is decoded among that slot's instructions.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from isadl.check import Spec
from isadl.syntax import Operand

from .tables import Encoding, bundle_formats, encodings, pcrel_base


@dataclass(frozen=True)
class Decoded:
    address: int
    size: int  # bytes
    word: int
    ops: tuple[tuple[str, dict], ...]  # (instruction name, operand values; pc-relative = target address)
    text: str  # assembly text, or `.word 0x…` when undecodable

    @property
    def ok(self) -> bool:
        return bool(self.ops)


class Disassembler:
    def __init__(self, spec: Spec):
        self.spec = spec
        self.encs = encodings(spec)
        self.word_bytes = spec.word // 8
        self.order = "little" if (spec.isa.endian or "little") == "little" else "big"
        self.pcrel_next = pcrel_base(spec) == "next"
        self.bundles = bundle_formats(spec)
        groups: dict[str, list[Encoding]] = {}
        for e in self.encs.values():
            groups.setdefault(e.slot or f"w{e.width}", []).append(e)
        # most fixed bits first: the more specific encoding wins
        self.groups = {k: sorted(v, key=lambda e: (-bin(e.insn.mask).count("1"), e.name)) for k, v in groups.items()}
        self.widths = sorted({e.width for e in self.encs.values() if not e.slot})
        isa = spec.isa
        self.reg_names = {}
        preferred = {}
        for rf in isa.regfiles:
            for a in rf.aliases:  # ABI names are what objdump prints
                idx = a.target if isinstance(a.target, int) else spec.regnames.get(a.target, (None, None))[1]
                preferred.setdefault((rf.name, idx), a.name)
        for name, key in spec.regnames.items():
            self.reg_names.setdefault(key, preferred.get(key, name))
        for key, name in preferred.items():
            self.reg_names[key] = name
        self.enum_names = {e.name: {i.value: i.name for i in reversed(e.items)} for e in isa.enums}
        self.closed_enums = {e.name for e in isa.enums if not e.numbers}
        opts = {o.name: o.values for o in isa.dialect.options} if isa.dialect else {}
        self.imm_prefix = (opts.get("immediate_prefix") or ("",))[0]
        self.bundle_sep = (opts.get("bundle_separator") or (";",))[0]
        labels = set(opts.get("labels", ("named",)))
        self.labels_ok = "named" in labels
        self.data_directives = {".word", ".byte"} <= set(opts.get("directives", ()))

    # ---- decoding -----------------------------------------------------------------------------
    def decode_word(self, word: int, group: str) -> Optional[tuple[Encoding, dict]]:
        for e in self.groups.get(group, ()):
            if word & e.insn.mask == e.insn.match:
                vals = self.operands(e, word)
                if self._reserved(e, vals):
                    continue
                return e, vals
        return None

    def _reserved(self, e: Encoding, vals: dict) -> bool:
        """A value of a closed enum operand that has no name is a reserved encoding (RISC-V's rounding
        modes 5 and 6), and so is a register number past the end of its file (a 4-bit field for 10
        registers) or an immediate outside its operand's range (a field wider than the operand):
        no instruction, since no text could write it."""
        for b in e.bindings:
            o = b.operand
            if o.kind == "reg" and not o.offset <= vals[o.name] < o.offset + o.count:
                return True
            if o.kind == "imm" and not o.lo <= vals[o.name] <= o.hi:  # a u1 operand in a 3-bit field
                return True
            if o.kind == "enum" and o.regfile in self.closed_enums and vals[o.name] not in self.enum_names[o.regfile] \
                    and vals[o.name] != o.default:  # an optional operand left out (vm = 1: unmasked)
                return True
        return False

    def operands(self, e: Encoding, word: int) -> dict:
        out = {}
        for b in e.bindings:
            o, f = b.operand, b.field
            v = f.extract(word)
            if o.signed and v >> (f.value_width - 1):
                v -= 1 << f.value_width
            if o.kind == "reg":
                v += o.offset
            out[o.name] = v
        return out

    def decode(self, data: bytes, base: int = 0) -> list[Decoded]:
        out = []
        pos = 0
        while pos < len(data):
            d = self.decode_at(data, pos, base + pos)
            out.append(d)
            pos += d.size
        return out

    def decode_at(self, data: bytes, pos: int, address: int) -> Decoded:
        if self.bundles:
            return self._bundle_at(data, pos, address)
        for width in self.widths:
            n = width // 8
            if pos + n > len(data):
                continue
            word = int.from_bytes(data[pos:pos + n], self.order)
            hit = self.decode_word(word, f"w{width}")
            if hit:
                e, vals = hit
                return Decoded(address, n, word, ((e.name, self._targets(e, vals, address, n)),), "")
        n = min(self.word_bytes, len(data) - pos)
        word = int.from_bytes(data[pos:pos + n], self.order)
        return Decoded(address, n, word, (), "")

    def bundle_slots(self, data: bytes, pos: int):
        """The bundle at data[pos]: (format, size, word, [(slot, (encoding, operands))] for every slot,
        filler nops included), or None when no bundle format decodes there."""
        for fmt in self.bundles:
            n = fmt.width // 8
            if pos + n > len(data):
                continue
            word = int.from_bytes(data[pos:pos + n], self.order)
            if word & fmt.fixed_mask != fmt.fixed_match:
                continue
            hits = [(slot, self.decode_word(field.extract(word), slot)) for slot, field in fmt.fields.items()]
            if all(hit is not None for _, hit in hits):
                return fmt, n, word, hits
        return None

    def _bundle_at(self, data: bytes, pos: int, address: int) -> Decoded:
        found = self.bundle_slots(data, pos)
        if found is not None:
            fmt, n, word, hits = found
            ops, nops = [], []
            for slot, (e, vals) in hits:
                op = (e.name, self._targets(e, vals, address, n))
                (nops if e.insn.template.mnemonic == self._slot_nop(slot) else ops).append(op)
            # Filler nops are left out, unless without them the assembler would pick a narrower bundle.
            used = {self.encs[name].slot for name, _ in ops}
            if ops and next(b for b in self.bundles if used <= set(b.fields)) is not fmt:
                ops = sorted(ops + nops, key=lambda o: list(fmt.fields).index(self.encs[o[0]].slot))
            if not ops:  # nothing but nops: show one that only this bundle format holds, so it reassembles here
                own = [o for o in nops if next(b for b in self.bundles if self.encs[o[0]].slot in b.fields) is fmt]
                ops = own[:1] or nops
            return Decoded(address, n, word, tuple(ops), "")
        n = min(self.word_bytes, len(data) - pos)
        return Decoded(address, n, int.from_bytes(data[pos:pos + n], self.order), (), "")

    def _slot_nop(self, slot: str) -> str:
        return next((s.nop for s in self.spec.isa.slots if s.name == slot), "")

    def _targets(self, e: Encoding, vals: dict, address: int, size: int) -> dict:
        for b in e.bindings:
            if b.operand.kind == "pcrel":
                vals[b.operand.name] += address + (size if self.pcrel_next else 0)
        return vals

    # ---- printing -------------------------------------------------------------------------------
    def format_op(self, name: str, vals: dict, labels: dict[int, str], address: int, size: int) -> str:
        e = self.encs[name]
        specs = e.insn.operands
        out = [e.insn.template.mnemonic]
        parts = e.insn.template.parts
        # Trailing optional operands at their defaults are left out (with the text before them).
        last = len(parts)
        tail = ""  # what stays of the literal text before the first operand left out: `)` of `({rs1}), {vm}`
        while last > 0:
            p = parts[last - 1]
            if isinstance(p, Operand) and p.optional and specs[p.name].default == vals.get(p.name):
                last -= 1
                tail = ""
                while last > 0 and isinstance(parts[last - 1], str):
                    text = parts[last - 1]
                    last -= 1
                    if "," in text:  # the separator goes; text before it (a closing bracket) stays
                        tail = text[:text.rindex(",")] + tail
                        break
                    tail = ""
                continue
            break
        for p in parts[:last]:
            if isinstance(p, str):
                out.append(p)
                continue
            s = specs[p.name]
            v = vals[p.name]
            if s.kind == "reg":
                out.append(self.reg_names.get((s.regfile, v), f"{s.regfile}{v}"))
            elif s.kind == "enum":
                out.append(self.enum_names[s.regfile].get(v, str(v)))
            elif s.kind == "pcrel":
                label = labels.get(v)
                out.append(label if label else str(v - address - (size if self.pcrel_next else 0)))
            else:
                out.append(str(v))
        out.append(tail)
        return "".join(out)

    def text(self, d: Decoded, labels: dict[int, str]) -> str:
        if not d.ok:
            return f".word {d.word:#0{2 + 2 * d.size}x}" if d.size == 4 else \
                f".byte {', '.join(hex(b) for b in d.word.to_bytes(d.size, self.order))}"
        sep = f" {self.bundle_sep} "
        return sep.join(self.format_op(name, vals, labels, d.address, d.size) for name, vals in d.ops)

    def branch_labels(self, decoded: list[Decoded]) -> dict[int, str]:
        """Labels for every in-range branch target, named by address."""
        if not self.labels_ok:
            return {}
        lo = decoded[0].address if decoded else 0
        hi = decoded[-1].address + decoded[-1].size if decoded else 0
        starts = {d.address for d in decoded}
        labels = {}
        for d in decoded:
            for name, vals in d.ops:
                for b in self.encs[name].bindings:
                    if b.operand.kind == "pcrel":
                        t = vals[b.operand.name]
                        if lo <= t < hi and t in starts:
                            labels[t] = f"L_{t:x}"
        return labels

    def listing(self, data: bytes, base: int = 0) -> str:
        """`ADDR: WORD  TEXT` per instruction, with labels for branch targets."""
        decoded = self.decode(data, base)
        labels = self.branch_labels(decoded)
        lines = []
        digits = max(8, (self.bundles[-1].width // 4) if self.bundles else max(self.widths, default=32) // 4)
        for d in decoded:
            if d.address in labels:
                lines.append(f"{labels[d.address]}:")
            lines.append(f"{d.address:8x}: {d.word:0{min(digits, 2 * d.size)}x}  {self.text(d, labels)}")
        return "\n".join(lines) + ("\n" if lines else "")

    def source(self, data: bytes, base: int = 0) -> str:
        """Re-assemblable text: labels and instructions only (what `assemble` reads back).
        Raises ValueError for an undecodable word when the dialect has no data directive for it."""
        decoded = self.decode(data, base)
        if any(not d.ok for d in decoded) and not self.data_directives:
            bad = next(d for d in decoded if not d.ok)
            raise ValueError(f"word {bad.word:#x} at {bad.address:#x} is no instruction, and this assembly "
                             f"dialect has no .word/.byte directive to write it")
        labels = self.branch_labels(decoded)
        lines = []
        for d in decoded:
            if d.address in labels:
                lines.append(f"{labels[d.address]}:")
            lines.append("    " + self.text(d, labels))
        return "\n".join(lines) + "\n"
