"""The negative assembly corpus: every file in tests/asm/bad/ is a small program with exactly one mistake.

Each file is named after its error and starts with comment lines (in the dialect's comment syntax):

    # isa: rv32i_mini
    # expect: 3:13: unknown register 'a22'; did you mean 'a2'?
    # note: 9:5: in macro 'm' invoked here   (one per note the diagnostic must carry, in order;
                                              without any, it must carry none)
    # xfail: BUG: ...            (optional: a known assembler bug; the expectation is the correct output)
    # xfail-render: BUG: ...     (optional: the bug also spoils the rendered report)

`expect` gives the first diagnostic exactly: line:column (1-based) of the offending token, and the
message. `isa` names a fixture of tests/asm/common.py.
"""
from __future__ import annotations

import functools
import re
import subprocess
import sys
from pathlib import Path

import pytest

import isadl
from kcgen.asm import AsmError, Assembler

from .common import FIXTURES, NAMES, ROOT, assembler

BAD_DIR = Path(__file__).resolve().parent / "bad"
BAD_FILES = sorted(BAD_DIR.glob("*.s"))
HEADER = re.compile(r"^(?:#|//|;)\s*(isa|expect|note|xfail|xfail-render):\s*(.*)$")
EXPECT = re.compile(r"^(\d+):(\d+): (.+)$")
CARET = re.compile(r"^[ \t]*\^$")
MIN_FILES = 35


def header(path: Path) -> dict[str, str]:
    out = {}
    for raw in path.read_text().splitlines():
        m = HEADER.match(raw)
        if not m:
            break
        if m.group(1) == "note":
            out.setdefault("notes", []).append(m.group(2))
            continue
        out[m.group(1)] = m.group(2)
    assert "isa" in out and "expect" in out, f"{path.name}: needs '# isa:' and '# expect:' header lines"
    assert out["isa"] in NAMES, f"{path.name}: unknown isa {out['isa']!r}"
    return out


def expectation(path: Path) -> tuple[str, int, int, str]:
    h = header(path)
    m = EXPECT.match(h["expect"])
    assert m, f"{path.name}: expect must be LINE:COL: MESSAGE"
    return h["isa"], int(m.group(1)), int(m.group(2)), m.group(3)


def _param(path: Path, key: str = "xfail"):
    reason = header(path).get(key)
    marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
    return pytest.param(path, id=path.stem, marks=marks)


def _assemble_error(path: Path) -> AsmError:
    isa = header(path)["isa"]
    with pytest.raises(AsmError) as info:
        assembler(isa).assemble(path.read_text(), str(path))
    return info.value


@pytest.mark.parametrize("path", [_param(p) for p in BAD_FILES])
def test_first_diagnostic_is_the_expected_one(path: Path):
    isa, line, column, message = expectation(path)
    exc = _assemble_error(path)
    assert exc.diagnostics, "AsmError without diagnostics"
    first = exc.diagnostics[0]
    got = (first.loc.line, first.loc.column, first.message)
    assert got == (line, column, message), \
        f"\nexpected {line}:{column}: {message}\n     got {got[0]}:{got[1]}: {got[2]}\n\n{exc}"
    notes = [f"{n.loc.line}:{n.loc.column}: {n.message}" for n in first.notes]
    assert notes == header(path).get("notes", []), f"notes differ:\n{exc}"
    # One mistake, one error: nothing reported twice.
    keys = [(d.loc.line, d.loc.column, d.message) for d in exc.diagnostics if d.severity == "error"]
    assert len(keys) == len(set(keys)), f"duplicate diagnostics:\n{exc}"


@pytest.mark.parametrize("path", [_param(p, "xfail-render") for p in BAD_FILES])
def test_report_is_gnu_style_with_source_line_and_caret(path: Path):
    # The rendering of whatever is reported first (its location is checked by the test above).
    exc = _assemble_error(path)
    first = exc.diagnostics[0]
    line, column = first.loc.line, first.loc.column
    text = str(exc)
    head = f"{path}:{line}:{column}: error: {first.message}"
    assert text.splitlines()[0] == head, text
    lines = text.splitlines()
    assert len(lines) >= 3, text
    assert lines[1] == path.read_text().splitlines()[line - 1], text
    assert CARET.match(lines[2]), f"no caret line after the source line:\n{text}"
    assert len(lines[2]) == column, f"caret is not under column {column}:\n{text}"
    assert "Traceback" not in text


def test_corpus_is_large_covers_every_fixture_and_every_error_is_distinct():
    assert len(BAD_FILES) >= MIN_FILES, f"only {len(BAD_FILES)} files in {BAD_DIR}"
    seen: dict[str, str] = {}
    for path in BAD_FILES:
        _, _, _, message = expectation(path)
        assert message not in seen, f"{path.name} and {seen[message]} expect the same message: {message}"
        seen[message] = path.name
    assert {expectation(p)[0] for p in BAD_FILES} == set(NAMES)


# ---- every error of a file in one pass ------------------------------------------------------------------

FIVE_ERRORS = """\
start:
    addd a0, a1, a2
    add a0, a1, a22
    addi a0, a1, 4096
    beq a0, a1, nowhere
    .wrod 5
    ebreak
"""
FIVE_EXPECTED = [
    (2, 5, "unknown instruction 'addd'; did you mean 'add'?"),
    (3, 17, "unknown register 'a22'; did you mean 'a2'?"),
    (4, 18, "immediate 4096 is out of range for imm: i12 takes -2048..2047"),
    (5, 17, "undefined symbol 'nowhere'"),
    (6, 5, "unknown directive '.wrod'; did you mean '.word'?"),
]


def test_all_errors_of_a_file_are_reported_in_line_order():
    with pytest.raises(AsmError) as info:
        assembler("rv32i_mini").assemble(FIVE_ERRORS, "five.s")
    got = [(d.loc.line, d.loc.column, d.message) for d in info.value.diagnostics]
    assert got == FIVE_EXPECTED


def test_errors_on_later_lines_are_reported_after_pass_2_errors_of_earlier_lines():
    # Pass-1 errors (syntax) and pass-2 errors (symbols, ranges) are merged and sorted by position.
    text = "    j nowhere_yet\n    bogus\n    beq a0, a1, 3\n"
    with pytest.raises(AsmError) as info:
        assembler("rv32i_mini").assemble(text, "mixed.s")
    lines = [d.loc.line for d in info.value.diagnostics]
    assert lines == sorted(lines) and set(lines) == {1, 2, 3}


def test_many_errors_do_not_crash():
    text = "".join(f"    bogus{i} a0\n" for i in range(500))
    with pytest.raises(AsmError) as info:
        assembler("rv32i_mini").assemble(text, "many.s")
    assert 1 <= len(info.value.diagnostics) <= 500
    assert info.value.diagnostics[0].loc.line == 1


# ---- the command line ---------------------------------------------------------------------------------------

def _kcgen() -> list[str]:
    script = Path(sys.executable).with_name("kcgen")
    return [str(script)] if script.exists() else [sys.executable, "-m", "kcgen.cli"]


def _cli_asm(isa: str, source: Path) -> subprocess.CompletedProcess:
    return subprocess.run(_kcgen() + ["asm", str(FIXTURES[isa]), str(source)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)


CLI_SAMPLES = ["unknown_register", "no_bundle_format", "hwloop_end_without_start", "enum_unknown_spelling"]


@pytest.mark.parametrize("name", CLI_SAMPLES)
def test_cli_reports_file_line_col_source_and_caret(name: str):
    path = BAD_DIR / f"{name}.s"
    isa, line, column, message = expectation(path)
    proc = _cli_asm(isa, path)
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    err = proc.stderr.splitlines()
    assert err[0] == f"{path}:{line}:{column}: error: {message}", proc.stderr
    assert err[1] == path.read_text().splitlines()[line - 1]
    assert CARET.match(err[2]) and len(err[2]) == column, proc.stderr


def test_cli_reports_every_error_and_counts_them(tmp_path):
    src = tmp_path / "five.s"
    src.write_text(FIVE_ERRORS)
    proc = _cli_asm("rv32i_mini", src)
    assert proc.returncode == 1
    assert "Traceback" not in proc.stdout + proc.stderr
    heads = [ln for ln in proc.stderr.splitlines() if ": error: " in ln]
    assert heads == [f"{src}:{ln}:{col}: error: {msg}" for ln, col, msg in FIVE_EXPECTED]
    assert proc.stderr.rstrip().endswith("5 errors")


def test_cli_missing_source_file_is_an_error_not_a_traceback(tmp_path):
    proc = _cli_asm("rv32i_mini", tmp_path / "absent.s")
    assert proc.returncode != 0
    assert "Traceback" not in proc.stdout + proc.stderr
    assert "error" in proc.stderr.lower()


@pytest.mark.parametrize("path", BAD_FILES, ids=lambda p: p.stem)
def test_cli_in_process_exits_1_without_a_traceback(path: Path):
    """`kcgen asm FIXTURE FILE` for every corpus file (in-process, so the whole corpus runs quickly)."""
    from click.testing import CliRunner

    from kcgen.cli import main
    isa = header(path)["isa"]
    result = CliRunner().invoke(main, ["asm", str(FIXTURES[isa]), str(path)])
    assert result.exit_code == 1, result.output
    assert isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.output
    first = result.stderr.splitlines()[0]
    assert re.match(rf"^{re.escape(str(path))}:\d+:\d+: error: ", first), result.stderr


# ---- robustness: any text gives a Program or located errors, never another exception ---------------------------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from .common import spec, write_insn  # noqa: E402

_NOISE = list(",()[]#%:;.-+ '\"\\\t") + ["1b", "0x", "lab", "%lo(", "%pcrel_lo(lab)", "1e400", "((((", "\r"]
_END = {"rv32i_mini": "ebreak", "vliw_mini": "done", "plena_mini": "C_BREAK", "toy16": "stop"}


@st.composite
def mangled_program(draw):
    """Valid instructions of a random fixture with characters deleted, inserted or duplicated."""
    name = draw(st.sampled_from(NAMES))
    insns = sorted(spec(name).instructions) + sorted(spec(name).pseudos)
    lines = []
    for _ in range(draw(st.integers(1, 5))):
        t = draw(write_insn(name, draw(st.sampled_from(insns)), free_labels=("lab",))).text
        for _ in range(draw(st.integers(0, 3))):
            i = draw(st.integers(0, len(t)))
            how = draw(st.sampled_from(["delete", "insert", "repeat"]))
            if how == "delete":
                t = t[:i] + t[i + 1:]
            elif how == "insert":
                t = t[:i] + draw(st.sampled_from(_NOISE)) + t[i:]
            else:
                t = t[:i] + t[i:] + t[i:]
        lines.append(t)
    lines.append(draw(st.sampled_from(["lab: " + _END[name], ""])))
    return name, "\n".join(lines)


@settings(max_examples=600, deadline=None, suppress_health_check=list(HealthCheck))
@given(case=mangled_program())
def test_mangled_input_gives_located_errors_or_a_program(case):
    name, text = case
    try:
        program = assembler(name).assemble(text, "m.s")
    except AsmError as exc:
        lines = text.split("\n")
        assert exc.diagnostics
        for d in exc.diagnostics:
            assert 1 <= d.loc.line <= len(lines), (d, text)
            assert 1 <= d.loc.column <= len(lines[d.loc.line - 1]) + 1, (d, lines[d.loc.line - 1])
        str(exc)
        return
    from .common import disassembler
    disassembler(name).listing(bytes(program.text.data), program.text.base)


@pytest.mark.parametrize("expr", ["(" * 5000 + "1" + ")" * 5000, "-" * 5000 + "1"])
def test_deeply_nested_expression_is_a_located_error(expr):
    with pytest.raises(AsmError) as info:
        assembler("rv32i_mini").assemble(f"nop\naddi a0, a0, {expr}\n", "deep.s")
    assert info.value.diagnostics[0].loc.line == 2


def test_character_constant_holding_the_comment_character():
    program = assembler("rv32i_mini").assemble(".data\n.byte '#', 'a'\n", "chars.s")
    assert bytes(program.sections[".data"].data) == b"#a"


def test_cli_accepts_a_source_with_a_byte_order_mark(tmp_path):
    from click.testing import CliRunner

    from kcgen.cli import main
    src = tmp_path / "bom.s"
    src.write_text("nop\nebreak\n", encoding="utf-8-sig")
    result = CliRunner().invoke(main, ["asm", str(FIXTURES["rv32i_mini"]), str(src), "--hex"])
    assert result.exit_code == 0, result.output
    assert result.stdout.split() == ["00000013", "00100073"]


def test_source_in_a_dialect_without_directives_is_reassemblable_or_refused():
    from .common import disassembler
    data = bytes.fromhex("ffffffff")
    try:
        text = disassembler("plena_mini").source(data, 0)
    except ValueError:
        return  # refusing is fine: there is no way to write raw data in this dialect
    assert bytes(assembler("plena_mini").assemble(text, "s.s").text.data) == data


def test_wrong_register_file_names_every_accepted_file():
    with pytest.raises(AsmError) as info:
        assembler("vliw_mini").assemble("vlda x1, [p0, #0]\n", "forms.s")
    message = info.value.diagnostics[0].message
    assert "wl" in message and "wh" in message, message
    assert message == "'x1' is a register of x; d needs a register of wl or wh"


@functools.lru_cache(maxsize=None)
def forms16():
    return Assembler(isadl.load(BAD_DIR.parent / "fixtures" / "forms16.isa"))


@pytest.mark.parametrize("line,column,message", [
    # the form that matched the most operands speaks: q1 fits `mov {qd:q}, {qs:q}`, r2 does not
    ("mov q1, r2", 9, "'r2' is a register of r; qs needs a register of q"),
    ("mov q1, q2, q3", 13, "expected an immediate for imm, got register 'q3'"),
    ("ld q1, [r2]", 8, "expected {off}({rs}), got '[r2]'"),
    # a register where an immediate or another file's register is wanted: the register form speaks
    ("mov r1, q2", 9, "'q2' is a register of q; rs needs a register of r"),
    ("ld sp", 4, "'ld' expects 2 operand groups, got 1 (syntax: ld {rd:r}, {off:u6}({rs:r}) or ld {rd:r}, "
                 "[{rs:r}] or ld {qd:q}, {off:u6}({rs:r}))"),
])
def test_the_form_that_fits_best_gives_the_message(line, column, message):
    with pytest.raises(AsmError) as info:
        forms16().assemble(line + "\n", "forms.s")
    d = info.value.diagnostics[0]
    assert (d.loc.line, d.loc.column, d.message) == (1, column, message)
