"""A compact instruction reference of a checked ISA, for the agent's prompt: every instruction and
pseudo-instruction by its assembly syntax, with its unit (or VLIW slot) and its cycles/latency.

    text = quickref.reference(spec, budget=30_000)

It reads only the checked Spec. When the one-row-per-instruction table (with a summary column) is
larger than `budget` characters, instructions of one section that share operands, unit and cost are
merged into one row (pseudo-instructions that differ in one literal word, such as a CSR name, too)
and the summaries are left out; the full pages stay a grep_docs away. After the tables: the math
functions the semantics compute (and those no instruction computes) and the products per cycle of
the instructions that sum products, both derived from the semantics.
"""
from __future__ import annotations

import dataclasses
import re
from collections import Counter
from dataclasses import dataclass
from typing import Iterable, Optional

from isadl import ir
from isadl.check import Spec
from isadl.semantics import MATH_UNARY

from . import facts
from .pretty import expr

MAX_TERMS = 8  # named cost subexpressions; more would make the legend the thing to read


@dataclass(frozen=True)
class Row:
    names: tuple[str, ...]  # IR names (for the tests: every instruction is in exactly one row)
    mnemonics: tuple[str, ...]
    operands: str  # the syntax after the mnemonic, as the assembler takes it
    unit: str
    cost: str  # "cycles" or "cycles/latency"
    summary: str


# ---- cost ----------------------------------------------------------------------------------------------

def _subexprs(e) -> Iterable:
    """Every expression node inside `e` (the IR is frozen dataclasses; `loc` is not a child)."""
    if isinstance(e, (tuple, list)):
        for x in e:
            yield from _subexprs(x)
        return
    if not dataclasses.is_dataclass(e) or isinstance(e, ir.Loc):
        return
    yield e
    for f in dataclasses.fields(e):
        if f.name != "loc":
            yield from _subexprs(getattr(e, f.name))


def _cost_exprs(spec: Spec) -> list[ir.Expr]:
    return [e for i in spec.isa.instructions for e in (i.cycles, i.latency) if e is not None]


def cost_terms(spec: Spec) -> list[tuple[str, str]]:
    """(name, formula) for run-time cost subexpressions that recur in many instructions (coral's
    `max(u32(1), (vl * SEW + VLEN - 1) / VLEN)` element groups), chosen greedily by characters saved."""
    exprs = [e for e in _cost_exprs(spec) if facts.const_value(spec, e) is None]
    texts = [expr(e) for e in exprs]
    cands = {expr(s) for e in exprs for s in _subexprs(e)
             if isinstance(s, (ir.Call, ir.Binary)) and facts.const_value(spec, s) is None}
    terms: list[tuple[str, str]] = []
    while len(terms) < MAX_TERMS:
        name = f"G{len(terms) + 1}"
        best, gain = None, 0
        for c in cands:
            n = sum(t.count(c) for t in texts)
            g = n * (len(c) - len(name)) - len(c) - 12  # the legend line costs the formula once
            if n >= 3 and g > gain:
                best, gain = c, g
        if best is None:
            break
        terms.append((name, best))
        texts = [t.replace(best, name) for t in texts]
    return terms


def _one_cost(spec: Spec, e: Optional[ir.Expr], terms) -> str:
    if e is None:
        return ""
    v = facts.const_value(spec, e)
    if v is not None:
        return str(v)
    text = expr(e)
    for name, formula in terms:
        text = text.replace(formula, name)
    return text


def cost(spec: Spec, insn: ir.Instruction, terms=()) -> str:
    """``cycles`` when the result is ready when the unit is free, else ``cycles/latency``."""
    c = _one_cost(spec, insn.cycles, terms) or "1"
    lat = _one_cost(spec, insn.latency, terms) or c
    return c if lat == c else f"{c}/{lat}"


# ---- rows ----------------------------------------------------------------------------------------------

def _summary(doc: str) -> str:
    return facts.one_line(doc).split(". ")[0].rstrip(".")


def instruction_rows(spec: Spec, merge: bool, terms=()) -> list[tuple[str, list[Row]]]:
    """(section title, rows) in section order; with `merge`, one row per (operands, unit, cost)."""
    out = []
    for title, _doc, items in facts.instruction_groups(spec):
        rows: dict[tuple, list] = {}
        for insn in items:
            t = spec.instructions[insn.name].template
            operands = t.text[len(t.mnemonic):].strip() if t.text.startswith(t.mnemonic) else t.text
            unit = insn.slot or insn.unit or ""
            c = cost(spec, insn, terms)
            key = (operands, unit, c) if merge else (insn.name,)
            got = rows.setdefault(key, [[], [], operands, unit, c, _summary(insn.doc)])
            got[0].append(insn.name)
            if t.mnemonic not in got[1]:
                got[1].append(t.mnemonic)
        out.append((title or "Other", [Row(tuple(n), tuple(m), ops, u, c, "" if merge else s)
                                       for n, m, ops, u, c, s in rows.values()]))
    return out


_TOKEN = re.compile(r"\{[^}]*\}|[A-Za-z0-9_.]+|[^\sA-Za-z0-9_.{}]")


def _expansion(p: ir.Pseudo) -> str:
    """The instructions a pseudo becomes: ``lui; addi`` (alternatives by operand value: ``addi or lui; addi``)."""
    alts = []
    for e in p.expansions:
        seq = "; ".join(line.split()[0] for line in e.lines if line.split())
        if seq not in alts:
            alts.append(seq)
    return " or ".join(alts)


def pseudo_rows(spec: Spec, merge: bool) -> list[tuple[str, list[Row]]]:
    """(section, rows) of the pseudo-instructions; with `merge`, pseudos of one section with the same
    expansion whose syntax differs in one literal word (``csrr {rd:x}, fflags`` / ``frm``)
    share a row (``csrr {rd:x}, fflags/frm``)."""
    groups: dict[str, list[dict]] = {}
    for p in spec.isa.pseudos:
        tpl = spec.pseudos.get(p.name)
        text = tpl.text if tpl else p.syntax
        toks = [(m.start(), m.end(), m.group()) for m in _TOKEN.finditer(text)]
        rows = groups.setdefault(p.section or "Pseudo-instructions", [])
        exp = _expansion(p)
        for last in (rows if merge else ()):
            if last["exp"] != exp or len(last["toks"]) != len(toks):
                continue
            diff = [i for i, (x, y) in enumerate(zip(last["toks"], toks)) if x[2] != y[2]]
            if len(diff) == 1 and diff[0] > 0 and not toks[diff[0]][2].startswith("{") \
                    and set(last["alt"]) <= {diff[0]}:
                last["alt"].setdefault(diff[0], [last["toks"][diff[0]][2]]).append(toks[diff[0]][2])
                last["names"].append(p.name)
                break
        else:
            rows.append({"names": [p.name], "mnemonic": tpl.mnemonic if tpl else text.split()[0], "text": text,
                         "toks": toks, "alt": {}, "exp": exp, "doc": _summary(p.doc)})
    out = []
    for sec, rows in groups.items():
        made = []
        for r in rows:
            text = r["text"]
            for i, alts in r["alt"].items():
                lo, hi, _ = r["toks"][i]
                text = text[:lo] + "/".join(alts) + text[hi:]
            m = r["mnemonic"]
            operands = text[len(m):].strip() if text.startswith(m) else text
            made.append(Row(tuple(r["names"]), (m,), operands, "", r["exp"], "" if merge else r["doc"]))
        out.append((sec, made))
    return out


# ---- what the hardware computes ------------------------------------------------------------------------

def _calls(spec: Spec, body, seen: set) -> set[str]:
    """Builtin math functions the statements call, through the ISA's own functions."""
    found = set()
    fns = {f.name: f for f in spec.isa.functions}
    for node in _subexprs(body):
        if isinstance(node, ir.Call):
            if node.func in MATH_UNARY:
                found.add(node.func)
            elif node.func in fns and node.func not in seen:
                seen.add(node.func)
                found |= _calls(spec, fns[node.func].body, seen)
    return found


def math_functions(spec: Spec) -> dict[str, list[str]]:
    """Math function -> the mnemonics whose semantics compute it: the builtins (exp, log, sqrt, recip,
    tanh, erf) and "float division" (a `/` on float operands, typed by the datapath analysis)."""
    from kcgen.hwcost import _Analysis  # the semantics' own type checker tells a float `/` from an integer one
    out: dict[str, list[str]] = {"float division": [], **{f: [] for f in MATH_UNARY}}
    for insn in spec.isa.instructions:
        m = spec.instructions[insn.name].template.mnemonic
        found = _calls(spec, insn.semantics, set())
        if any(isinstance(n, ir.Binary) and n.op == "/" for n in _subexprs(insn.semantics)):
            ops = _Analysis(spec, insn.name).run().ops
            if any(o.kind == "div" and o.op == "/" and o.is_float for o in ops):
                found.add("float division")
        for f in found:
            if m not in out[f]:
                out[f].append(m)
    return out


def mac_rates(spec: Spec) -> list[tuple[str, int, int, str]]:
    """(mnemonic, products, cycles, sum type) of the instructions that sum products (dot products,
    matrix and batched products), fastest per cycle first: the table's cycles alone hide that their
    work per instruction differs by orders of magnitude. Products are the terms of the instruction's
    sum reductions; where its operands choose between reductions (amdnpu's cfg modes), each sum type
    is listed with its largest one."""
    from kcgen.hwcost import _Analysis
    out = {}
    for insn in spec.isa.instructions:
        if not any(isinstance(n, ir.Reduce) for n in _subexprs(insn.semantics)):
            continue
        cycles = facts.const_value(spec, insn.cycles) if insn.cycles is not None else 1
        if not cycles:
            continue
        m = spec.instructions[insn.name].template.mnemonic
        best: dict[str, int] = {}
        a = _Analysis(spec, insn.name).run()
        if not any(o.kind in ("mul", "fma") for o in a.ops):  # a plain sum (V_RED_SUM) is not a product
            continue
        for r in a.reductions:
            if r.op == "sum" and r.terms > 1:
                best[r.type] = max(best.get(r.type, 0), r.terms * r.count)
        for t, products in best.items():
            out.setdefault((m, t), (m, products, cycles, t))
    return sorted(out.values(), key=lambda r: (-r[1] / r[2], r[0]))


def _mac_line(spec: Spec) -> str:
    rates = mac_rates(spec)
    if not rates:
        return ""
    def rate(p, c):
        return f"{p // c}" if p % c == 0 else f"{p / c:.3g}"
    alike: dict[tuple, list[str]] = {}
    for m, p, c, t in rates:
        alike.setdefault((p, c, t), []).append(m)
    return ("Products summed per instruction (the terms of its sum reductions), fastest first, as products / "
            "cycles = per cycle, with the sum's type: "
            + "; ".join(f"{' '.join(ms)} {p}/{c} = {rate(p, c)} ({t})" for (p, c, t), ms in alike.items()) + ".")


def _math_line(spec: Spec) -> str:
    fns = math_functions(spec)
    have = [f"{f} ({', '.join(ms)})" for f, ms in fns.items() if ms]
    lack = [f for f, ms in fns.items() if not ms]
    text = "Math functions in hardware: " + ("; ".join(have) if have else "none") + "."
    if lack:
        text += f" No instruction computes {', '.join(lack)}: a kernel needing one builds it from " \
                + ("+, * and the functions above" if have else "+ and *") + " (polynomials, range reduction, Newton steps)."
    return text


# ---- the reference -------------------------------------------------------------------------------------

def _cell(s: str) -> str:
    return s.replace("|", "\\|") or "-"


def _table(rows: list[Row], with_summary: bool, pseudo: bool, unit: str = "unit") -> list[str]:
    head = ["syntax", "expands to" if pseudo else unit, *([] if pseudo else ["cycles"])]
    if with_summary:
        head.append("does")
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        syntax = f"{' '.join(r.mnemonics)} {r.operands}".strip()
        cells = [syntax, r.cost] if pseudo else [syntax, r.unit, r.cost]
        if with_summary:
            cells.append(r.summary)
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    return lines


def _render(spec: Spec, merge: bool, terms, computes: list[str]) -> str:
    isa = spec.isa
    vliw = bool(isa.slots)
    out = ["## Instruction reference", "",
           f"Every instruction ({len(isa.instructions)}) and pseudo-instruction ({len(isa.pseudos)}) of {isa.name}, "
           "by assembly syntax. An operand is written {name:kind}: kind is a register file or class (write a "
           "register of it, e.g. by the names under Register files), iN / uN a signed / unsigned N-bit immediate, "
           "pcrelN a label, or an enumeration; {name:kind=d} may be left out (default d). "
           f"`{'slot' if vliw else 'unit'}`: the {'VLIW slot it takes in a bundle' if vliw else 'execution unit it uses'}. "
           "`cycles`: how long it holds that unit, then /latency when its result is ready later (one number "
           "when equal); figures are this model's, after any -D overrides."
           + (" Rows list several mnemonics when they share operands, unit and cycles." if merge else "")
           + " grep_docs with '^INSTRUCTION: NAME' or the mnemonic gives an instruction's full page: semantics, "
           "encoding, timing, example."]
    if terms:
        out += ["", "Run-time cost terms (they depend on operands or state): "
                + "; ".join(f"{n} = {f}" for n, f in terms) + "."]
    for title, rows in instruction_rows(spec, merge, terms):
        out += ["", f"### {title}", *_table(rows, not merge, False, "slot" if vliw else "unit")]
    for title, rows in pseudo_rows(spec, merge):
        heading = title if "pseudo" in title.lower() else f"Pseudo-instructions: {title}"
        out += ["", f"### {heading}", *_table(rows, not merge, True)]
    out += ["", "## What the hardware does and does not compute", ""] + [f"- {c}" for c in computes]
    return "\n".join(out)


def reference(spec: Spec, budget: int = 30_000, absent: Iterable[str] = ()) -> str:
    """The instruction reference: one row per instruction with a summary when that fits in `budget`
    characters, else rows merged by (operands, unit, cycles) and no summaries."""
    terms = cost_terms(spec)
    computes = [line for line in (_math_line(spec), _mac_line(spec), *absent) if line]
    text = _render(spec, False, terms, computes)
    if len(text) > budget:
        text = _render(spec, True, terms, computes)
    return text
