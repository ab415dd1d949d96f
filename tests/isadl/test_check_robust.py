"""Whatever a description says, checking it yields a Spec or located errors — never a crash.

Random IR (tests/isadl/strategies.py) is mostly nonsense to the checker, which is the point:
it walks every error path with names, sizes and expressions no hand-written corpus has."""
import re
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import isadl
from isadl.printer import print_isa

try:
    from tests.isadl import strategies as S
except ImportError:  # pytest's rootdir-relative import (tests/isadl on sys.path)
    import strategies as S


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(S.isas())
def test_checking_random_descriptions_never_crashes(isa):
    text = print_isa(isa)
    try:
        spec = isadl.load_text(text, "fuzz.isa")
    except isadl.IsaError as exc:
        assert exc.diagnostics
        for d in exc.diagnostics:
            rendered = d.render(exc.sources)
            assert rendered.startswith("fuzz.isa:") and ": error: " in rendered
            assert d.message and "Traceback" not in d.message
    else:
        assert spec.isa.name == isa.name


FIXTURES = sorted((Path(__file__).parent / "fixtures").glob("*.isa"))


def _mutate(text: str, op: str, where: int, value: int) -> str:
    lines = text.split("\n")
    i = where % len(lines)
    if op == "drop_line":
        del lines[i]
    elif op == "dup_line":
        lines.insert(i, lines[i])
    elif op == "number":
        lines[i] = re.sub(r"\b\d+\b", str(value), lines[i], count=1)
    elif op == "drop_char" and lines[i]:
        j = value % len(lines[i])
        lines[i] = lines[i][:j] + lines[i][j + 1:]
    elif op == "swap_words":
        words = lines[i].split(" ")
        if len(words) > 2:
            j = value % (len(words) - 1)
            words[j], words[j + 1] = words[j + 1], words[j]
            lines[i] = " ".join(words)
    return "\n".join(lines)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(FIXTURES), st.lists(st.tuples(
    st.sampled_from(["drop_line", "dup_line", "number", "drop_char", "swap_words"]),
    st.integers(0, 10_000), st.one_of(st.integers(0, 70), st.integers(0, 2 ** 40))), min_size=1, max_size=3))
def test_mutated_fixtures_never_crash(path, mutations):
    text = path.read_text()
    for op, where, value in mutations:
        text = _mutate(text, op, where, value)
    try:
        isadl.load_text(text, path.name)
    except isadl.IsaError as exc:
        assert exc.diagnostics and all(d.message for d in exc.diagnostics)
