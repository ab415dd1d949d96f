"""Generated Python for the assembler's hot paths: one matcher and one encoder per instruction.

The generic code in assembler.py handles every case and says precisely what is wrong; these
straight-line functions only accept the common, correct case and return None otherwise, so the
generic path runs exactly when there is something to explain. `source` keeps the generated text
for anyone debugging it.
"""
from __future__ import annotations

from typing import Callable, Optional

from .expr import parse_number

_SYMBOL_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.$")


def compile_matcher(form, regnames: dict, enum_values: dict, norm_insensitive: bool,
                    imm_prefix: str) -> Optional[Callable]:
    """fn(pieces) -> ({operand: value}, all values are numbers) for the operand groups between
    top-level commas, or None to fall back to the generic path."""
    if not form.groups or any(form.specs.get(op.name) is None for g in form.groups for op in g.operands):
        return None
    n_req = form.required
    n_all = len(form.groups)
    lines = ["def match(pieces):",
             "    n = len(pieces)",
             f"    if n < {n_req} or n > {n_all}:",
             "        return None",
             "    values = {}",
             "    pure = True"]
    scope = {"regnames": regnames, "enums": enum_values, "number": parse_number, "symbol_chars": _SYMBOL_CHARS}
    for i, group in enumerate(form.groups):
        ind = "    "
        if i >= n_req:
            lines.append(f"    if n > {i}:")
            ind = "        "
        if group.single:
            lines.append(f"{ind}t = pieces[{i}][0].strip()")
            lines += _operand_lines(group.operands[0], form.specs[group.operands[0].name], ind, norm_insensitive,
                                    imm_prefix)
        else:
            scope[f"rx{i}"] = group.regex
            lines += [f"{ind}m = rx{i}.fullmatch(pieces[{i}][0])",
                      f"{ind}if m is None:",
                      f"{ind}    return None"]
            for op in group.operands:
                lines.append(f"{ind}t = m.group({op.name!r}).strip()")
                lines += _operand_lines(op, form.specs[op.name], ind, norm_insensitive, imm_prefix)
        if i >= n_req:
            lines.append("    else:")
            for op in group.operands:
                lines.append(f"        values[{op.name!r}] = {form.specs[op.name].default!r}")
    lines.append("    return values, pure")
    source = "\n".join(lines)
    exec(compile(source, f"<matcher {form.name}>", "exec"), scope)
    fn = scope["match"]
    fn.source = source
    return fn


def _operand_lines(op, spec, ind: str, insensitive: bool, imm_prefix: str) -> list[str]:
    lines = []
    if insensitive and spec.kind in ("reg", "enum"):
        lines.append(f"{ind}t = t.lower()")
    if spec.kind == "reg":
        return lines + [f"{ind}r = regnames.get(t)",
                        f"{ind}if r is None or r[0] != {spec.regfile!r} or not "
                        f"{spec.offset} <= r[1] < {spec.offset + spec.count}:",
                        f"{ind}    return None",
                        f"{ind}values[{op.name!r}] = r[1]"]
    if spec.kind == "enum":
        return lines + [f"{ind}v = enums[{spec.regfile!r}].get(t)",
                        f"{ind}if v is None:",
                        f"{ind}    return None",
                        f"{ind}values[{op.name!r}] = v"]
    if imm_prefix:
        lines += [f"{ind}if t.startswith({imm_prefix!r}):",
                  f"{ind}    t = t[{len(imm_prefix)}:].lstrip()"]
    lines.append(f"{ind}v = number(t)")
    if spec.kind == "pcrel":
        return lines + [f"{ind}pure = False",
                        f"{ind}if v is not None:",
                        f"{ind}    values[{op.name!r}] = ('pcoff', v)",
                        f"{ind}elif t and t[0] not in '0123456789' and set(t) <= symbol_chars "
                        f"and regnames.get(t) is None:",
                        f"{ind}    values[{op.name!r}] = ('sym', t, 0)",
                        f"{ind}else:",
                        f"{ind}    return None"]
    return lines + [f"{ind}if v is None:",
                    f"{ind}    return None",
                    f"{ind}values[{op.name!r}] = v"]


def compile_encoder(name: str, match: int, plan: tuple, pcrel_next: bool) -> Callable:
    """fn(values, address, size) -> (word, final values) when every operand is a number in range, else None."""
    lines = ["def encode(values, address, size):", f"    word = {match:#x}", "    final = {}"]
    for op, kind, lo, hi, offset, align, vmask, pieces in plan:
        lines += [f"    v = values[{op!r}]",
                  "    if v.__class__ is not int:",
                  "        return None",
                  f"    final[{op!r}] = v"]
        if kind == 2:
            lines.append("    v -= address + size" if pcrel_next else "    v -= address")
        elif offset:
            lines.append(f"    v -= {offset}")
        cond = f"v < {lo} or v > {hi}" + (f" or v & {align}" if align else "")
        lines += [f"    if {cond}:", "        return None"]
        if any(vlo for vlo, _, _ in pieces) or len(pieces) > 1 or pieces[0][0] != 0:
            lines.append(f"    v &= {vmask:#x}")
            for vlo, wlo, width in pieces:
                lines.append(f"    word |= ((v >> {vlo}) & {(1 << width) - 1:#x}) << {wlo}")
        else:
            _, wlo, width = pieces[0]
            lines.append(f"    word |= (v & {(1 << width) - 1:#x}) << {wlo}")
    lines.append("    return word, final")
    source = "\n".join(lines)
    scope: dict = {}
    exec(compile(source, f"<encoder {name}>", "exec"), scope)
    fn = scope["encode"]
    fn.source = source
    return fn
