"""Generated Python for the assembler's hot paths: one matcher and one encoder per instruction,
and one "line lane" per mnemonic.

The generic code in assembler.py handles every case and says precisely what is wrong; these
straight-line functions only accept the common, correct case and return None otherwise, so the
generic path runs exactly when there is something to explain. `source` keeps the generated text
for anyone debugging it.
"""
from __future__ import annotations

import re
from typing import Callable, Optional

from isadl.params import EvalError

from .expr import parse_number

_SYMBOL_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.$")
# Operand text whose brackets are all one level deep, with no comma inside: splitting it at every
# comma gives exactly the top-level split (assembler._split_top).
_FLAT = re.compile(r"[^()\[\]]*(?:(?:\([^()\[\],]*\)|\[[^()\[\],]*\])[^()\[\]]*)*")
_PLACEHOLDER = re.compile(r"\{(\w+)\}")


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
    return _build("match", lines, scope, f"<matcher {form.name}>")


def _operand_lines(op, spec, ind: str, insensitive: bool, imm_prefix: str,
                   target: Optional[str] = None, miss: str = "return None") -> list[str]:
    """Convert the operand text in `t` to its value in `target` (default: values[name]); `miss`
    when the text is not a plain register, enum spelling or number of the right kind."""
    target = target or f"values[{op.name!r}]"
    lines = []
    if insensitive and spec.kind in ("reg", "enum"):
        lines.append(f"{ind}t = t.lower()")
    if spec.kind == "reg":
        return lines + [f"{ind}r = regnames.get(t)",
                        f"{ind}if r is None or r[0] != {spec.regfile!r} or not "
                        f"{spec.offset} <= r[1] < {spec.offset + spec.count}:",
                        f"{ind}    {miss}",
                        f"{ind}{target} = r[1]"]
    if spec.kind == "enum":
        return lines + [f"{ind}v = enums[{spec.regfile!r}].get(t)",
                        f"{ind}if v is None:",
                        f"{ind}    {miss}",
                        f"{ind}{target} = v"]
    if imm_prefix:
        lines += [f"{ind}if t.startswith({imm_prefix!r}):",
                  f"{ind}    t = t[{len(imm_prefix)}:].lstrip()"]
    lines.append(f"{ind}v = number(t)")
    if spec.kind == "pcrel":
        return lines + [f"{ind}pure = False",
                        f"{ind}if v is not None:",
                        f"{ind}    {target} = ('pcoff', v)",
                        f"{ind}elif t and t[0] not in '0123456789' and set(t) <= symbol_chars "
                        f"and regnames.get(t) is None:",
                        f"{ind}    {target} = ('sym', t, 0)",
                        f"{ind}else:",
                        f"{ind}    {miss}"]
    return lines + [f"{ind}if v is None:",
                    f"{ind}    {miss}",
                    f"{ind}{target} = v"]


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
        lines += _field_lines(lo, hi, align, vmask, pieces)
    lines.append("    return word, final")
    return _build("encode", lines, {}, f"<encoder {name}>")


def _field_lines(lo: int, hi: int, align: int, vmask: int, pieces, ind: str = "    ") -> list[str]:
    """Range-check the operand value in `v` and insert it into `word` (return None when out of range)."""
    cond = f"v < {lo} or v > {hi}" + (f" or v & {align}" if align else "")
    lines = [f"{ind}if {cond}:", f"{ind}    return None"]
    if any(vlo for vlo, _, _ in pieces) or len(pieces) > 1 or pieces[0][0] != 0:
        lines.append(f"{ind}v &= {vmask:#x}")
        for vlo, wlo, width in pieces:
            lines.append(f"{ind}word |= ((v >> {vlo}) & {(1 << width) - 1:#x}) << {wlo}")
    else:
        _, wlo, width = pieces[0]
        lines.append(f"{ind}word |= (v & {(1 << width) - 1:#x}) << {wlo}")
    return lines


def _build(name: str, lines: list[str], scope: dict, filename: str) -> Callable:
    source = "\n".join(lines)
    exec(compile(source, filename, "exec"), scope)
    fn = scope[name]
    fn.source = source
    return fn


# ---- line lanes -----------------------------------------------------------------------------------------
#
# A lane takes the operand text of a whole source line (`mnemonic operands`, nothing else on the
# line) and returns the bytes the generic path would place for it, or None. It does exactly what
# _Run.instruction does for such a line -- the same top-level comma split, the same generated
# matcher logic, form by form, committing to the first form whose operands match -- and then
# what pass 2 does with the op (the generated encoder). None means "let the generic path do it",
# from scratch: a lane has no side effects, so every diagnostic comes from the generic path.

_MISS = object()  # a form's operands do not match it: the next form may (a matched form returns bytes or None)


def compile_lane(mnemonic: str, forms: list, asm, values: bool = False) -> Optional[Callable]:
    """The lane of a mnemonic whose forms are all real, non-pc-relative instructions, or None.

    `asm` is the Assembler: regnames, enum_values, insensitive, imm_prefix, encs, plans, endian.
    With `values`, the same lane returns [(instruction name, {operand: value}, size)] instead of
    the bytes: what the source map records for the line."""
    forms = [f for f in forms if f.fast is not None]  # _Run.instruction tries only these before the careful path
    if not forms:
        return None
    scope = _lane_scope(asm)
    order = "little" if asm.endian == "little" else "big"
    compound = any(not g.single for f in forms for g in f.groups)
    lines = ["def lane(t):",
             f"    # {mnemonic}: " + " | ".join(f.template.text for f in forms)]
    if compound:
        scope["flat"] = _FLAT.fullmatch
        lines += ["    if ('(' in t or ')' in t or '[' in t or ']' in t) and flat(t) is None:",
                  "        return None  # a comma inside brackets: the generic split decides"]
    else:
        lines += ["    if '(' in t or ')' in t or '[' in t or ']' in t:",
                  "        return None"]
    lines += ["    p = t.split(',') if t else []", "    n = len(p)"]
    if len(forms) == 1:
        body = _form_lines(forms[0], 0, asm, scope, order, "    ", "return None", values)
        if body is None:
            return None
        lines += body
    else:
        for k, form in enumerate(forms):
            body = _form_lines(form, k, asm, scope, order, "    ", "return MISS", values)
            if body is None:
                return None
            fn = _build("form", ["def form(p, n):", f"    # {form.name}: {form.template.text}"] + body, dict(scope),
                        f"<lane form {form.name}>")
            scope[f"form{k}"] = fn
            lines += [f"    b = form{k}(p, n)",
                      "    if b is not MISS:",
                      "        return b  # the first form that matches decides, as in the generic path"]
        lines.append("    return None")
    fn = _build("lane", lines, scope, f"<lane {mnemonic}>")
    if len(forms) > 1:
        fn.source += "".join(f"\n\n{scope[f'form{k}'].source}" for k in range(len(forms)))
    return fn


def _lane_scope(asm) -> dict:
    return {"regnames": asm.regnames, "enums": asm.enum_values, "number": parse_number, "MISS": _MISS}


def _form_lines(form, k: int, asm, scope: dict, order: str, ind: str, miss: str,
                values: bool) -> Optional[list[str]]:
    """Match the pieces `p` (n of them) against one instruction form and encode it: lines that
    end in `return bytes` (or the values) or `return None` (matched, but the encoder refuses),
    or run `miss`."""
    enc = asm.encs[form.name]
    plan = asm.plans[form.name]
    names = {op.name for g in form.groups for op in g.operands}
    if any(kind == 2 or op not in names for op, kind, *_ in plan):
        return None
    lines = [f"{ind}if n < {form.required} or n > {len(form.groups)}:", f"{ind}    {miss}"]
    lines += _group_lines(form, k, asm, scope, ind, miss, {})
    lines.append(f"{ind}word = {enc.insn.match:#x}  # matched: from here on this form decides")
    for op, kind, lo, hi, offset, align, vmask, pieces in plan:
        lines.append(f"{ind}v = o_{op}")
        default = _default_of(form, op)
        if default is not _REQUIRED and default.__class__ is not int:
            lines += [f"{ind}if v.__class__ is not int:", f"{ind}    return None"]
        if offset:
            lines.append(f"{ind}v -= {offset}")
        lines += _field_lines(lo, hi, align, vmask, pieces, ind)
    if values:  # the operands as the encoder saw them, in its order
        final = ", ".join(f"{op!r}: o_{op}" for op, *_ in plan)
        lines.append(f"{ind}return [({form.name!r}, {{{final}}}, {enc.width // 8})]")
    else:
        lines.append(f"{ind}return word.to_bytes({enc.width // 8}, {order!r})")
    return lines


_REQUIRED = object()


def _default_of(form, op_name: str):
    for i, g in enumerate(form.groups):
        if any(o.name == op_name for o in g.operands):
            return _REQUIRED if i < form.required else form.specs[op_name].default
    return _REQUIRED


def _group_lines(form, k: int, asm, scope: dict, ind: str, miss: str, texts: dict) -> list[str]:
    """Operand values into locals o_<name> (the written text into x_<name> for names in `texts`)."""
    lines = []
    for i, group in enumerate(form.groups):
        gi = ind
        if i >= form.required:
            lines.append(f"{ind}if n > {i}:")
            gi = ind + "    "
        if group.single:
            op = group.operands[0]
            lines.append(f"{gi}t = p[{i}].strip()")
            if op.name in texts:
                lines.append(f"{gi}x_{op.name} = t")
            lines += _operand_lines(op, form.specs[op.name], gi, asm.insensitive, asm.imm_prefix,
                                    f"o_{op.name}", miss)
        else:
            scope[f"rx{k}_{i}"] = group.regex
            lines += [f"{gi}m = rx{k}_{i}.fullmatch(p[{i}])", f"{gi}if m is None:", f"{gi}    {miss}"]
            for op in group.operands:
                lines.append(f"{gi}t = m.group({op.name!r}).strip()")
                lines += _operand_lines(op, form.specs[op.name], gi, asm.insensitive, asm.imm_prefix,
                                        f"o_{op.name}", miss)
        if i >= form.required:
            lines.append(f"{ind}else:")
            for op in group.operands:
                lines.append(f"{ind}    o_{op.name} = {form.specs[op.name].default!r}")
                if op.name in texts:
                    lines.append(f"{ind}    x_{op.name} = ''")
    return lines


def compile_pseudo_lane(mnemonic: str, form, asm, lanes: dict, values: bool = False) -> Optional[Callable]:
    """The lane of a mnemonic that is one simple pseudo-instruction whose operands are registers,
    enums and numbers, or None. It does what _Run.instruction and _Run.expand do for numbers: pick
    the expansion by its `when`, write each line of it with the numbers, fold %reloc(number), and
    hand each line to the lane of its (real, non-pc-relative) instruction in `lanes` (lanes of
    the same `values` kind: the result is their bytes, or their lists, joined)."""
    if form.fast is None or not form.simple or any(s.kind == "pcrel" for s in form.simple_specs):
        return None
    ops = [op.name for op in form.simple]
    defaults = [form.specs[op.name].default for op in form.simple[form.required:]]
    if any(d.__class__ is not int for d in defaults):
        return None  # not a number: the generic path expands it differently
    scope = _lane_scope(asm)
    scope.update(EvalError=EvalError, creloc=asm.const_reloc_rx, fold=asm.fold_reloc)
    lines = ["def lane(t):",
             f"    # pseudo {form.name}: {form.template.text}",
             "    if '(' in t or ')' in t or '[' in t or ']' in t:",
             "        return None",
             "    p = t.split(',') if t else []",
             "    n = len(p)",
             f"    if n < {form.required} or n > {len(form.groups)}:",
             "        return None"]
    lines += _group_lines(form, 0, asm, scope, "    ", "return None", {o: True for o in ops})
    for name in ops:  # the pseudo's own operand ranges (li's i32)
        s = form.specs[name]
        if s.kind == "imm":
            lines += [f"    if not {s.lo} <= o_{name} <= {s.hi}:", "        return None"]
    if any(e.when is not None for e in form.pseudo.expansions):
        lines.append("    known = {" + ", ".join(f"{n!r}: o_{n}" for n in ops) + "}")
    for j, exp in enumerate(form.pseudo.expansions):
        ind = "    "
        if exp.when is not None:
            scope[f"when{j}"] = asm.when[id(exp)]
            lines += ["    try:", f"        hit = when{j}(known)", "    except (EvalError, KeyError):",
                      "        hit = False", "    if hit:"]
            ind = "        "
        parts = []
        for i, line in enumerate(exp.lines):
            text = _expansion_operands(line, form, asm, lanes)
            if text is None:
                lines.append(f"{ind}return None  # {line!r}: not a line a lane takes")
                break
            target, expr = text
            scope[f"lane_{j}_{i}"] = lanes[target]
            lines += [f"{ind}s = {expr}  # {line}",
                      f"{ind}if '%' in s:",
                      f"{ind}    s = creloc.sub(fold, s)  # %hi(123) and friends: their value",
                      f"{ind}b{i} = lane_{j}_{i}(s.strip())",
                      f"{ind}if b{i} is None:", f"{ind}    return None"]
            parts.append(f"b{i}")
        else:
            lines.append(f"{ind}return " + " + ".join(parts) if parts else f"{ind}return None")
        if exp.when is None:
            break  # later expansions are never reached
    else:
        lines.append("    return None")
    return _build("lane", lines, scope, f"<pseudo lane {mnemonic}>")


def _expansion_operands(line: str, form, asm, lanes: dict):
    """(lane key, Python expression for the operand text) of one expansion line, or None."""
    stripped = line.lstrip()
    head = re.match(r"[^\s{%]+(?=\s)", stripped)
    if head is None:
        return None
    key = asm._norm(head.group(0))
    if key not in lanes:
        return None
    rest = stripped[head.end():]
    out, pos = [], 0
    for m in _PLACEHOLDER.finditer(rest):
        if m.start() > pos:
            out.append(repr(rest[pos:m.start()]))
        name = m.group(1)
        spec = form.specs.get(name)
        if spec is not None and spec.kind == "imm" and name in {o.name for o in form.simple}:
            out.append(f"str(o_{name})")
        elif spec is not None and name in {o.name for o in form.simple}:
            out.append(f"x_{name}")
        # any other name reads as '' (as _Run.expand substitutes it)
        pos = m.end()
    if pos < len(rest):
        out.append(repr(rest[pos:]))
    return key, " + ".join(out) if out else "''"
