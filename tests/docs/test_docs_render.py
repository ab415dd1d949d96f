"""Markdown, HTML and text index: content, structure, escaping, parameters, determinism."""
from __future__ import annotations

import re

import pytest

import isadl
import kcgen.docs as docs
from isadl.parser import parse_text

NAMES = ("rv32i_mini", "vliw_mini", "plena_mini")


def _mask_re(mask: int) -> re.Pattern:
    """The mask as hex with any zero padding, as a whole word."""
    return re.compile(rf"\b0x0*{mask:x}\b")


# ---- every instruction is documented in every format -------------------------------------------

@pytest.mark.parametrize("name", NAMES)
def test_every_instruction_in_markdown(specs, helpers, name):
    spec = specs[name]
    md = docs.render_markdown(spec)
    for iname, ispec in spec.instructions.items():
        sec = helpers.md_section(md, f"insn-{iname}")
        assert f"`{iname}`" in sec
        assert ispec.template.text in sec, iname
        assert _mask_re(ispec.mask).search(sec), (iname, hex(ispec.mask))
        assert _mask_re(ispec.match).search(sec), (iname, hex(ispec.match))


@pytest.mark.parametrize("name", NAMES)
def test_every_instruction_in_html(specs, helpers, name):
    spec = specs[name]
    page = docs.render_html(spec)
    for iname, ispec in spec.instructions.items():
        text = helpers.html_text(helpers.html_section(page, f"insn-{iname}"))
        assert iname in text
        assert ispec.template.text in text, iname
        assert _mask_re(ispec.mask).search(text), iname
        assert _mask_re(ispec.match).search(text), iname


@pytest.mark.parametrize("name", NAMES)
def test_every_instruction_in_index(specs, helpers, name):
    spec = specs[name]
    index = docs.render_index(spec)
    for iname, ispec in spec.instructions.items():
        rec = helpers.index_record(index, f"INSTRUCTION: {iname}")
        assert f"\nSYNTAX: {ispec.template.text}\n" in rec
        enc = re.search(r"^ENCODING: .*$", rec, re.M).group(0)
        assert _mask_re(ispec.mask).search(enc) and _mask_re(ispec.match).search(enc)
        if ispec.insn.semantics:
            # one statement a line, indented under SEMANTICS:
            body = rec.split("\nSEMANTICS:\n", 1)[1].split("\n")
            assert body[0].startswith("  ") and body[0].strip()


@pytest.mark.parametrize("name", NAMES)
def test_pseudos_documented_with_expansions(specs, helpers, name):
    spec = specs[name]
    md, page, index = docs.render_markdown(spec), docs.render_html(spec), docs.render_index(spec)
    for p in spec.isa.pseudos:
        assert f'id="pseudo-{p.name}"' in md and f'id="pseudo-{p.name}"' in page
        rec = helpers.index_record(index, f"PSEUDO: {p.name}")
        for e in p.expansions:
            for line in e.lines:
                assert f"\n  {line}" in rec
                assert line in helpers.html_text(helpers.html_section(page, f"pseudo-{p.name}"))


def test_instructions_grouped_by_section_in_declaration_order(specs):
    spec = specs["rv32i_mini"]
    md = docs.render_markdown(spec)
    titles = list(dict.fromkeys(i.section for i in spec.isa.instructions))
    positions = [md.index(f"### {t}\n") for t in titles]
    assert positions == sorted(positions)
    for i, insn in enumerate(spec.isa.instructions):
        at = md.index(f'<a id="insn-{insn.name}"></a>')
        k = titles.index(insn.section)
        assert positions[k] < at and (k + 1 == len(positions) or at < positions[k + 1])
        if i:
            assert md.index(f'<a id="insn-{spec.isa.instructions[i - 1].name}"></a>') < at


# ---- HTML structure --------------------------------------------------------------------------

@pytest.mark.parametrize("name", NAMES)
def test_html_is_well_formed_and_standalone(specs, helpers, name):
    page = docs.render_html(specs[name])
    p = helpers.check_html(page)
    assert p.errors == [] and p.stack == []
    assert not re.search(r"https?://", page)
    assert not ({"script", "link", "img", "iframe"} & p.tags)
    assert "<style>" in page and page.startswith("<!DOCTYPE html>")
    assert len(p.ids) == len(set(p.ids)), "duplicate ids"
    for href in p.hrefs:  # every link is an in-page anchor that exists
        assert href.startswith("#") and href[1:] in p.ids, href
    for iname in specs[name].instructions:
        assert f"insn-{iname}" in p.ids


NASTY = '''isa nasty "Title <b>&amp; \\"q\\"</b>" {
  version "1<2"
  doc """
    First paragraph with <script>alert(1)</script> & a | pipe and *stars* and `ticks`.

    Second paragraph.
  """
  param N = 4 "count | with <i>pipe</i> & amp"
  regs r[4]: u32 { asm "r{n}"; zero r0; doc "regs <x>" }
  memory m: u8[N * 4] { base 0x100; align 4; readonly; doc "mem & <mem>" }
  format F { op 7:0; rd 9:8; rs 11:10; imm 31:12 }
  instruction ADD {
    syntax "add {rd:r}, {rs:r}, {imm:u20}"
    encoding F(op=1, rd, rs, imm)
    semantics { require imm < 100 : "imm <too> \\"big\\" & bad"; r[rd] = r[rs] + u32(imm) }
    doc "Adds </code></pre><script>x</script>.\\n\\nPara two | here."
    example "add r1, r0, 5" { expect { r[1] == 5 } }
  }
}
'''


def test_html_escapes_everything(helpers):
    spec = isadl.load_text(NASTY, "nasty.isa")
    page = docs.render_html(spec)
    p = helpers.check_html(page)
    assert p.errors == [] and p.stack == []
    assert {"script", "b", "i", "x", "too", "mem"}.isdisjoint(p.tags)
    text = helpers.html_text(page)
    for s in ("<script>alert(1)</script>", 'Title <b>&amp; "q"</b>', "count | with <i>pipe</i> & amp",
              'imm <too> \\"big\\" & bad', "Adds </code></pre><script>x</script>.", "mem & <mem>"):
        assert s in text, s


def test_markdown_keeps_tables_intact_and_text_readable():
    spec = isadl.load_text(NASTY, "nasty.isa")
    md = docs.render_markdown(spec)
    row = next(line for line in md.splitlines() if line.startswith("| `N` |"))
    # 4 columns: 5 unescaped pipes
    assert len(re.findall(r"(?<!\\)\|", row)) == 5
    assert not re.search(r"(?<!\\)</?(script|i|b)\b", md)  # tags from the description are escaped
    assert "\\*stars\\*" in md  # no accidental emphasis
    assert "Para two" in md


def test_index_records_have_no_blank_lines_and_label_every_line():
    spec = isadl.load_text(NASTY, "nasty.isa")
    index = docs.render_index(spec)
    recs = index.rstrip("\n").split("\n\n")
    for rec in recs:
        lines = rec.split("\n")
        assert re.match(r"^[A-Z_]+: \S", lines[0])
        for line in lines:
            assert line.strip(), rec
            assert re.match(r"^[A-Z_]+:( |$)", line) or line.startswith("  "), line
    ins = [r for r in recs if r.startswith("INSTRUCTION: ")]
    assert len(ins) == 1
    assert "DOC: Adds </code></pre><script>x</script>. Para two | here." in ins[0]
    assert 'require imm < 100 : "imm <too> \\"big\\" & bad"' in ins[0]


# ---- parameters, values and timing -----------------------------------------------------------

def test_params_show_values_formulas_and_overrides(helpers):
    base = helpers.load("plena_mini")
    big = helpers.load("plena_mini", {"MLEN": 128, "VLEN": 128})
    i0, i1 = docs.render_index(base), docs.render_index(big)
    heads0 = helpers.index_record(i0, "PARAM: HEADS")
    heads1 = helpers.index_record(i1, "PARAM: HEADS")
    assert "VALUE: 4\n" in heads0 + "\n" and "VALUE: 8\n" in heads1 + "\n"
    assert "FORMULA: MLEN / HLEN" in heads0 and "FORMULA: MLEN / HLEN" in heads1
    assert "SET_BY" not in heads1  # derived, recomputed, not overridden
    mlen1 = helpers.index_record(i1, "PARAM: MLEN")
    assert "VALUE: 128" in mlen1 and "FORMULA: 64" in mlen1 and "SET_BY" in mlen1
    # memory sizes follow: vsram = VSRAM_ROWS * VLEN bf16 elements
    vs = helpers.index_record(i1, "MEMORY: vsram")
    assert "131072 (0x20000) elements" in vs and "262144 (0x40000) bytes" in vs
    md = docs.render_markdown(big)
    row = next(line for line in md.splitlines() if line.startswith("| `MLEN` |"))
    assert "128" in row and "-D" in row and "`64`" in row
    assert "-D MLEN=128" in md and "-D VLEN=128" in md
    page = docs.render_html(big)
    assert "MLEN / HLEN" in helpers.html_text(page)


def test_timing_formula_and_value(helpers, specs):
    i0 = docs.render_index(specs["plena_mini"])
    mm = helpers.index_record(i0, "INSTRUCTION: M_MM")
    assert re.search(r"^UNIT: matrix$", mm, re.M)
    assert re.search(r"^CYCLES: 64 = MLEN$", mm, re.M)
    pre = helpers.index_record(i0, "INSTRUCTION: H_PREFETCH_V")
    # (V_PREFETCH_ROWS * VLEN * 9 / 8 + 63) / 64 with 4 rows of 64: (288 + 63) // 64 = 5
    assert re.search(r"^LATENCY: 5 = \(V_PREFETCH_ROWS \* VLEN \* 9 / 8 \+ 63\) / 64$", pre, re.M)
    big = docs.render_index(helpers.load("plena_mini", {"MLEN": 128, "VLEN": 128}))
    assert re.search(r"^CYCLES: 128 = MLEN$", helpers.index_record(big, "INSTRUCTION: M_MM"), re.M)
    lw = helpers.index_record(docs.render_index(specs["rv32i_mini"]), "INSTRUCTION: LW")
    assert re.search(r"^UNIT: mem$", lw, re.M) and re.search(r"^LATENCY: 2$", lw, re.M)
    vl = helpers.index_record(docs.render_index(specs["vliw_mini"]), "INSTRUCTION: VMAC")
    assert re.search(r"^SLOT: vec$", vl, re.M) and re.search(r"^BUNDLES: B128$", vl, re.M)


def test_overview_sections(specs, helpers):
    spec = specs["rv32i_mini"]
    md = docs.render_markdown(spec)
    for heading in ("Hardware parameters", "Register files", "Memories", "Kernel ABI", "Timing model",
                    "Assembler dialect", "Instructions", "Pseudo-instructions"):
        assert f"## {heading}\n" in md
    assert "RV32I subset (mini)" in md and "version 0.1" in md
    index = docs.render_index(spec)
    regs = helpers.index_record(index, "REGISTERS: x")
    assert "NAMES: x0..x31" in regs and "ZERO: x0" in regs and "a0=x10" in regs and "fp=x8" in regs
    abi = helpers.index_record(index, "ABI: rv32i_mini")
    assert "ARGS: a0, a1, a2" in abi and "END: halt ebreak" in abi and "STACK: sp = 65536" in abi
    assert re.search(r"^REGION: input: ram\[4096\.\.32768\] in", abi, re.M)
    dia = helpers.index_record(index, "DIALECT: rv32i_mini")
    assert 'COMMENT: "#"' in dia and "RELOC: %hi(x) = ((x + 2048) >> 12) & 0xfffff" in dia
    assert "RELOC: %pcrel_lo(x) =" in dia and "(paired with %pcrel_hi)" in dia
    mem = helpers.index_record(index, "MEMORY: ram")
    assert "ELEMENT: u8" in mem and "BASE: 0x0" in mem
    # plena: numeric formats, state, hardware loops, helper functions
    pi = docs.render_index(specs["plena_mini"])
    e4 = helpers.index_record(pi, "FLOAT: e4m3")
    assert "BITS: 8" in e4 and "EXPONENT: 4" in e4 and "MANTISSA: 3" in e4 and "BIAS: 7" in e4 and "finite" in e4
    e8 = helpers.index_record(pi, "FLOAT: e8m0")
    assert "BITS: 8" in e8 and "BIAS: 127" in e8 and "unsigned" in e8
    mx = helpers.index_record(pi, "MX: mxfp8")
    assert "ELEMENT: e4m3" in mx and "SCALE: e8m0" in mx and "BLOCK: 8" in mx and "BITS_PER_BLOCK: 72" in mx
    assert "SHAPE: [BLEN][BLEN] = [4][4]" in helpers.index_record(pi, "STATE: m_accum")
    hw = helpers.index_record(pi, "HWLOOP: plena_mini")
    assert "START: C_LOOP_START" in hw and "END: C_LOOP_END" in hw and "DEPTH: 4 = LOOP_DEPTH" in hw
    assert "lane_on" in helpers.index_record(pi, "FUNCTION: lane_on")
    assert "UNIT: dma (asynchronous)" in helpers.index_record(pi, "TIMING: inorder")
    vi = docs.render_index(specs["vliw_mini"])
    assert "GROUP: {r[16 + 2 * n], r[17 + 2 * n]}" in helpers.index_record(vi, "REGISTERS: l")
    assert "l0 = {r16, r17}" in helpers.index_record(vi, "REGISTERS: l")


EXTRA = """isa extra {
  word 32
  param N = 8
  enum rm { rne = 0, rtz = 1, "r.up" = 3 } "rounding"
  regs x[16]: i32 { alias zero=0, sp=2; zero x0 }
  regclass xc = x[8..15] "compressed registers"
  state mode: u8 = 3 readonly "a constant"
  memory rom: u32[N] { readonly }
  format F { op 6:0; rd 10:7; rs 14:11; m 16:15; imm { 12:1 = 31:20 }; ignore 19:17 }
  timing ooo { unit alu count 2 pipelined "two ALUs"; width = 2; rob = 32 }
  instruction OP {
    syntax "op {rd:xc}, {rs:x}, {imm:i13}, {m:rm=rtz}"
    encoding F(op=0x13, rd, rs, m, imm)
    warn rs == 0 : "reads <zero>"
    unit alu; cycles 1 + N / 4; latency imm > 0 ? 2 : 3
    semantics { if m == 0 { x[rd] = x[rs] } else if m == 1 { x[rd] = x[rs] + imm } else { trap "bad m" } }
  }
  pseudo o "o {rd:xc}" { expands "op {rd}, zero, 0" }
}
"""


def test_enums_regclasses_scaled_immediates_and_defaults(helpers):
    spec = isadl.load_text(EXTRA, "extra.isa")
    index = docs.render_index(spec)
    op = helpers.index_record(index, "INSTRUCTION: OP")
    assert "rd: register x8..x15" in op
    assert "imm: signed 13-bit integer -4096..4094, a multiple of 2" in op
    assert "m: one of rne (0), rtz (1), r.up (3), default rtz" in op
    assert re.search(r"^CYCLES: 3 = 1 \+ N / 4$", op, re.M)
    assert re.search(r"^LATENCY: \(?imm > 0\)? \? 2 : 3 \(depends on operands or state\)$", op, re.M)
    assert "} else if m == 1 {" in op and 'trap "bad m"' in op
    assert re.search(r"^WARN: rs == 0 : reads <zero>$", op, re.M)
    assert "BITS: 31:20 imm[12:1] | 19:17 ignore | 16:15 m | 14:11 rs | 10:7 rd | 6:0 op=0010011" in op
    assert "NAMES: x8..x15" in helpers.index_record(index, "REGCLASS: xc")
    assert "VALUES: rne=0, rtz=1, r.up=3" in helpers.index_record(index, "ENUM: rm")
    st = helpers.index_record(index, "STATE: mode")
    assert "INIT: 3" in st and "ACCESS: read-only" in st
    assert "UNIT: alu (count 2, pipelined) -- two ALUs" in helpers.index_record(index, "TIMING: ooo")
    assert "rd: register x8..x15" in helpers.index_record(index, "PSEUDO: o")
    page = docs.render_html(spec)
    assert helpers.check_html(page).errors == []
    assert "rs == 0</code>: reads &lt;zero&gt;" in page
    assert "Register classes" in docs.render_markdown(spec)


# ---- semantics are readable and still isadl -----------------------------------------------------

@pytest.mark.parametrize("name", NAMES)
def test_semantics_text_reparses_to_the_same_ir(specs, name):
    from kcgen.docs import semantics
    for insn in specs[name].isa.instructions:
        body = semantics.text(insn.semantics)
        src = f'isa t {{ instruction X {{ syntax "x"\n semantics {{\n{body}\n}} }} }}'
        assert parse_text(src)[0].instructions[0].semantics == insn.semantics, insn.name
        one = semantics.inline(insn.semantics)
        src = f'isa t {{ instruction X {{ syntax "x"\n semantics {{ {one} }} }} }}'
        assert parse_text(src)[0].instructions[0].semantics == insn.semantics, insn.name


def test_readable_expressions_reparse_and_parenthesise_bit_operations(specs):
    from kcgen.docs.pretty import expr
    d = specs["rv32i_mini"].isa.dialect
    for r in d.relocs:
        src = f"isa t {{ dialect {{ reloc {r.name}({r.arg}) = {expr(r.value)} }} }}"
        assert parse_text(src)[0].dialect.relocs[0].value == r.value
    hi = next(r for r in d.relocs if r.name == "hi")
    assert expr(hi.value) == "((x + 2048) >> 12) & 0xfffff"


# ---- determinism --------------------------------------------------------------------------------

@pytest.mark.parametrize("name", NAMES)
def test_output_is_deterministic(helpers, name, tmp_path):
    a, b = helpers.load(name), helpers.load(name)
    for render in (docs.render_markdown, docs.render_html, docs.render_index):
        assert render(a) == render(a) == render(b)
    p1 = docs.write_docs(a, tmp_path / "one")
    p2 = docs.write_docs(b, tmp_path / "two")
    assert [p.name for p in p1] == [p.name for p in p2] == [f"{name}.md", f"{name}.html", "index.txt"]
    for x, y in zip(p1, p2):
        assert x.read_bytes() == y.read_bytes()


def test_write_docs_formats(specs, tmp_path):
    written = docs.write_docs(specs["vliw_mini"], tmp_path / "d", formats=("txt",))
    assert [p.name for p in written] == ["index.txt"]
    assert sorted(p.name for p in (tmp_path / "d").iterdir()) == ["index.txt"]
    with pytest.raises(ValueError, match="pdf"):
        docs.write_docs(specs["vliw_mini"], tmp_path / "e", formats=("pdf",))
