"""The system prompt against each target's ISA: every instruction and pseudo-instruction by its
syntax, unit and cycles/latency within the budget, the math functions and product throughput the
semantics compute, and the "does not have" claims checked against the semantics' datapath."""
from __future__ import annotations

import re
from functools import lru_cache

import pytest

import isadl
import kcgen.docs as docs
from isadl.params import evaluate
from isadl.types import VecT
from kcgen.docs.pretty import expr
from kcgen.docs.semantics import lines as semantics_lines
from kcgen.paths import TARGETS, agent

prompt = agent().prompt
TARGET_NAMES = ("plena", "amdnpu", "coral", "boom")


@lru_cache(maxsize=None)
def spec(name):
    return isadl.load(TARGETS / f"{name}.isa")


@lru_cache(maxsize=None)
def system(name):
    return prompt.system_prompt(name, docs.render_markdown(spec(name)), 20)


def reference(name) -> str:
    text = system(name)
    return text[text.index("## Instruction reference"):]


def tables(name, pseudo: bool) -> list[list[str]]:
    """The rows (cells) of the prompt's instruction tables, or of its pseudo-instruction tables (those
    whose second column is the expansion)."""
    out, kind = [], None
    for line in reference(name).splitlines():
        if line.startswith("| syntax | "):
            kind = line.startswith("| syntax | expands to |")
        elif line.startswith("| ") and kind is pseudo:
            out.append([c.strip() for c in line.strip().strip("|").split(" | ")])
        elif not line.startswith("|"):
            kind = None
    return out


def value(s, e):
    """A cost expression's value under the ISA's parameters, or None when it depends on operands or state."""
    def lookup(n):
        if n.id in s.params:
            return s.params[n.id]
        raise KeyError(n.id)
    try:
        return evaluate(e, lookup)
    except Exception:
        return None


def terms(name) -> dict[str, str]:
    m = re.search(r"^Run-time cost terms \(they depend on operands or state\): (.*)\.$", reference(name), re.M)
    return dict(t.split(" = ", 1) for t in m.group(1).split("; ")) if m else {}


def expected_cost(s, insn) -> str:
    """cycles, or cycles/latency when the latency differs, from the ISA's own timing expressions."""
    def one(e):
        if e is None:
            return None
        v = value(s, e)
        return str(v) if v is not None else expr(e)
    c = one(insn.cycles) or "1"
    lat = one(insn.latency) or c
    return c if lat == c else f"{c}/{lat}"


@pytest.mark.parametrize("name", TARGET_NAMES)
def test_every_instruction_is_listed_by_syntax_with_unit_and_cycles(name):
    s = spec(name)
    legend = terms(name)
    rows = tables(name, pseudo=False)
    for insn in s.isa.instructions:
        t = s.instructions[insn.name].template
        operands = t.text[len(t.mnemonic):].strip()
        found = []
        for r in rows:
            cell = r[0]
            if cell.endswith(operands) and t.mnemonic in cell[:len(cell) - len(operands)].split():
                found.append(r)
        assert found, f"{name}: {t.text} is not in the prompt"
        want = expected_cost(s, insn)
        ok = False
        for r in found:
            shown = r[2]
            for n, formula in legend.items():  # the prompt names recurring run-time terms G1, G2, ...
                shown = re.sub(rf"\b{n}\b", formula, shown)
            ok |= r[1] == (insn.slot or insn.unit or "-") and shown == want
        assert ok, f"{name}: {t.text}: rows {found}, expected unit {insn.slot or insn.unit} and cycles {want}"


def _variants(cell: str) -> set[str]:
    """A merged pseudo row's syntax spelled out: ``csrr {rd:x}, fflags/frm`` -> both spellings."""
    m = re.search(r"(?<![{\w])([\w.]+(?:/[\w.]+)+)", cell)
    if not m:
        return {cell}
    return {v for alt in m.group(1).split("/") for v in _variants(cell[:m.start()] + alt + cell[m.end():])}


@pytest.mark.parametrize("name", TARGET_NAMES)
def test_every_pseudo_instruction_is_listed_with_its_expansion(name):
    s = spec(name)
    rows = tables(name, pseudo=True)
    for p in s.isa.pseudos:
        text = s.pseudos[p.name].text
        alts = [[ln.split()[0] for ln in e.lines if ln.split()] for e in p.expansions]
        hit = [r for r in rows if text in _variants(r[0])]
        assert hit, f"{name}: pseudo {text} is not in the prompt"
        assert all("; ".join(a) in hit[0][1].split(" or ") for a in alts), (text, hit[0])
    assert len(s.isa.pseudos) == 0 or sum(len(_variants(r[0])) for r in rows) == len(s.isa.pseudos)


@pytest.mark.parametrize("name", TARGET_NAMES)
def test_the_reference_keeps_its_budget(name):
    assert len(reference(name)) <= prompt.MAX_SUMMARY_CHARS
    # the target's whole documentation page is far larger: the prompt is a digest, not a copy
    assert f"Every instruction ({len(spec(name).isa.instructions)}) and pseudo-instruction " \
           f"({len(spec(name).isa.pseudos)})" in reference(name)


def test_the_prompt_is_built_from_the_isa_whether_or_not_the_loop_passes_it():
    md = docs.render_markdown(spec("plena"))
    assert prompt.system_prompt("plena", md, 20, spec=spec("plena")) == system("plena")
    # docs of an ISA that is not the shipped target of that name: the docs' own summaries
    isa = spec("plena").isa
    counts = f"{len(isa.instructions)} instructions, {len(isa.pseudos)} pseudo-instructions"
    assert counts in md
    other = md.replace(counts, f"{len(isa.instructions) + 1} instructions, {len(isa.pseudos)} pseudo-instructions")
    assert "## Instruction summary" in prompt.system_prompt("plena", other, 20)
    renamed = md.replace('id="insn-M_MM"', 'id="insn-M_MM2"')
    assert "## Instruction summary" in prompt.system_prompt("plena", renamed, 20)


# ---- what the semantics compute ----------------------------------------------------------------------

def _semantic_text(s, insn) -> str:
    """The instruction's semantics as printed, with the bodies of the ISA functions it calls (transitively)."""
    text = "\n".join(semantics_lines(insn.semantics))
    fns = {f.name: expr(f.body) for f in s.isa.functions}
    seen = set()
    while True:
        new = [f for f in fns if f not in seen and re.search(rf"\b{f}\(", text)]
        if not new:
            return text
        seen.update(new)
        text += "\n" + "\n".join(fns[f] for f in new)


@pytest.mark.parametrize("name", TARGET_NAMES)
def test_math_functions_are_those_the_semantics_call(name):
    s = spec(name)
    line = next(ln for ln in reference(name).splitlines() if ln.startswith("- Math functions in hardware: "))
    for fn in ("exp", "log", "sqrt", "recip", "tanh", "erf"):
        users = sorted({s.instructions[i.name].template.mnemonic for i in s.isa.instructions
                        if re.search(rf"\b{fn}\(", _semantic_text(s, i))})
        if users:
            listed = re.search(rf"\b{fn} \(([^)]*)\)", line)
            assert listed and sorted(listed.group(1).split(", ")) == users, (fn, line)
        else:
            assert re.search(rf"No instruction computes [^:]*\b{fn}\b", line), (fn, line)


def test_plena_states_the_real_cost_of_its_matrix_instructions():
    s = spec("plena")
    p = s.params
    text = reference("plena")
    # plena.isa: M_MM does BLEN x BLEN x MLEN multiply-accumulates in MLEN cycles; M_BMV
    # HEADS x HLEN x MLEN in one; M_BMM HEADS x MLEN x HLEN x MLEN in MLEN
    mm = f"M_MM M_TMM {p['BLEN'] * p['BLEN'] * p['MLEN']}/{p['MLEN']}"
    bmv = f"M_BMV M_BTMV {p['HEADS'] * p['HLEN'] * p['MLEN']}/1"
    bmm = f"M_BMM M_BTMM {p['HEADS'] * p['MLEN'] * p['HLEN'] * p['MLEN']}/{p['MLEN']}"
    assert mm in text and bmv in text and bmm in text
    assert text.index(bmv) < text.index(mm)  # fastest first
    rows = {r[0].split()[0]: r for r in tables("plena", pseudo=False)}
    assert rows["M_MM"][2] == str(p["MLEN"]) and rows["M_BMV"][2] == "1"


# ---- what amdnpu and coral do not have -----------------------------------------------------------------

@lru_cache(maxsize=None)
def datapath(name):
    from kcgen.hwcost import _Analysis
    s = spec(name)
    return {i.name: _Analysis(s, i.name).run() for i in s.isa.instructions}


DATA = re.compile(r"[iu](8|16|32|64)|bf16|f16|f32|f64")  # element types (not index arithmetic's inferred widths)


def _claim(name, start):
    return next(a for a in prompt.ABSENT[name] if a.startswith(start))


def _named(claim, s) -> set[str]:
    """The vector mnemonics (v...) a claim names; its prose also holds words that are scalar mnemonics (add)."""
    mnemonics = {t.mnemonic for t in (x.template for x in s.instructions.values())}
    return {w for w in re.findall(r"\bv[\w.]*\w", claim) if w in mnemonics}


def test_the_claims_are_in_the_prompts():
    for claim in prompt.ABSENT["amdnpu"] + prompt.ABSENT["coral"]:
        name = "amdnpu" if claim in prompt.ABSENT["amdnpu"] else "coral"
        assert "- " + claim in reference(name)


def test_amdnpu_has_no_elementwise_vector_multiply():
    s = spec("amdnpu")
    claim = _claim("amdnpu", "No element-wise vector multiply")
    vector_files = {rf.name for rf in s.isa.regfiles if isinstance(s.types.get(rf.name), VecT)}
    multiplies = set()
    for n, a in datapath("amdnpu").items():
        if not {k[0] for k in a.writes} & vector_files:
            continue  # the scalar mul
        if any(o.kind in ("mul", "fma") and DATA.fullmatch(o.type) for o in a.ops):
            multiplies.add(s.instructions[n].template.mnemonic)
            assert any(r.op == "sum" and r.terms > 1 for r in a.reductions), f"{n} multiplies without summing"
    assert multiplies and multiplies == _named(claim, s)


def test_amdnpu_has_no_vector_float_add_of_its_own_and_no_scalar_float():
    s = spec("amdnpu")
    claim = _claim("amdnpu", "No vector floating-point add")
    floats = set()
    for n, a in datapath("amdnpu").items():
        ops = [o for o in a.ops if o.is_float and o.kind != "select"]
        if not ops:
            continue
        floats.add(s.instructions[n].template.mnemonic)
        if any(o.kind == "add" and o.op in ("+", "-") for o in ops):
            assert any(o.kind in ("mul", "fma") for o in ops), f"{n} adds floats without a product"
        touched = {k[0] for k in list(a.reads) + list(a.writes)}
        assert any(isinstance(s.types.get(f), VecT) for f in touched), f"{n}: float work on scalars"
    # every instruction doing float arithmetic is one the claim names (vconv.fp32.bf16, an exact widening,
    # does none, but the claim lists it as the way into fp32)
    assert floats and floats <= _named(claim, s)


def test_amdnpu_has_no_broadcast():
    s = spec("amdnpu")
    vector_files = {rf.name for rf in s.isa.regfiles if isinstance(s.types.get(rf.name), VecT)}
    for n, a in datapath("amdnpu").items():
        if not {k[0] for k in a.writes} & vector_files:
            continue
        ops = s.instructions[n].operands
        scalar_in = {o for o, spec_ in ops.items() if spec_.kind == "reg" and spec_.regfile in ("r",)}
        # the claim's three kinds of scalar operand of a vector instruction, by the ISA's operand names
        # (configuration word, shuffle mode, mask); a broadcast would take a scalar data operand
        assert scalar_in <= {"cfg", "mode", "rm"}, (n, scalar_in)


def test_coral_vector_instructions_have_no_floating_point():
    s = spec("coral")
    assert "v" in {rf.name for rf in s.isa.regfiles}
    vector_insns = 0
    for n, a in datapath("coral").items():
        if "v" not in {k[0] for k in list(a.reads) + list(a.writes)}:
            continue
        vector_insns += 1
        assert not [o for o in a.ops if o.is_float], f"{n} does float arithmetic on vector registers"
    assert vector_insns > 200
