"""A program image larger than the target's memories is a located assembler error (issue 17, item 10).

Every section is loaded into a memory of the target (coral: ITCM/DTCM, boom: RAM, amdnpu: the
data memory at 0; PLENA's program goes to an instruction store no memory holds). A `.space`
with a huge count, an alignment to a huge boundary, or many moderately large directives must be
refused with `file:line:col: error: ...` naming the section and the sizes, before anything of
that size is built: the assembler's peak memory stays small (checked with tracemalloc).
"""
from __future__ import annotations

import functools
import os
import resource
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest

import isadl
from kcgen.asm import AsmError, Assembler
from kcgen.asm.assembler import MAX_IMAGE

ROOT = Path(__file__).resolve().parents[2]
TARGETS = ROOT / "targets"
PEAK_LIMIT = 64 << 20  # bytes the assembler may allocate while refusing a 2 GB image

# The memory program sections are loaded into, per target, and its size in bytes.
HOME = {"coral": ("itcm and dtcm", 2 << 20), "boom": ("ram", 4 << 20), "amdnpu": ("dm", 256 << 10)}
RET = {"coral": "ret", "boom": "ret", "amdnpu": "done"}  # a first instruction


@functools.lru_cache(maxsize=None)
def target(name: str) -> Assembler:
    return Assembler(isadl.load(TARGETS / f"{name}.isa"))


def refused(name: str, text: str) -> tuple:
    """Assemble text that must fail; the first diagnostic and the peak bytes allocated meanwhile."""
    asm = target(name)
    tracemalloc.start()
    try:
        with pytest.raises(AsmError) as info:
            asm.assemble(text, "k.s")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    d = info.value.diagnostics[0]
    assert d.severity == "error"
    assert "Traceback" not in str(info.value)
    return d, peak


def many(line: str, n: int) -> str:
    return "".join(line + "\n" for _ in range(n))


def crossing(name: str, source: str, per: int) -> int:
    """The line of `source` (after its `.data` line) that first takes the image past the memory,
    each line adding `per` bytes after the first instruction."""
    text = len(target(name).assemble(RET[name] + "\n", "r.s").text.data)
    return (HOME[name][1] - text) // per + 2


# (target, source, line, column) of the first error: huge counts, huge alignments, accumulation
RISCV_CASES = [
    (".data\nbuf: .space 2000000000\n", 2, 13),
    (".data\n.zero 2000000000\n", 2, 7),
    (".skip 2000000000, 0xff\n", 1, 7),
    (".section .rodata\n.space 1 << 40\n", 2, 8),
    (".data\n.byte 1\n.balign 1073741824\n", 3, 9),
    (".data\n.byte 1\n.p2align 31\n", 3, 10),
    (".data\n.byte 1\n.align 30\n", 3, 8),
    (".data\n" + many(".space 1000000", 5), None, 8),  # the line that crosses the memory's size
    (".data\n" + many(".zero 40000", 200), None, 7),
    (".equ N, 1 << 31\n.data\n.space N\n", 3, 8),
]


@pytest.mark.parametrize("name", ["coral", "boom"])
@pytest.mark.parametrize("source,line,col", RISCV_CASES)
def test_riscv_image_larger_than_memory_is_a_located_error(name, source, line, col):
    text = f"{RET[name]}\n{source}"
    d, peak = refused(name, text)
    memory, size = HOME[name]
    if line is None:  # accumulation: the first directive that does not fit
        line = crossing(name, source, int(source.splitlines()[1].split()[1]))
    assert (d.loc.line, d.loc.column) == (line + 1, col), d
    assert "section ." in d.message and f"memor{'ies' if ' and ' in memory else 'y'} {memory}" in d.message, d.message
    assert f"the {size} bytes" in d.message, d.message
    assert peak < PEAK_LIMIT, f"{peak} bytes allocated to refuse the image"


AMDNPU_CASES = [
    (".data\n.byte 1\n.p2align 31\n", 3, 10),
    (".data\n.byte 1\n.p2align 20\n", 3, 10),
    (".data\n" + many(".long " + ", ".join(["0x12345678"] * 64), 1100), None, 7),  # 256 bytes a line
]


@pytest.mark.parametrize("source,line,col", AMDNPU_CASES)
def test_amdnpu_image_larger_than_data_memory_is_a_located_error(source, line, col):
    d, peak = refused("amdnpu", f"done\n{source}")
    line = crossing("amdnpu", source, 256) if line is None else line
    assert (d.loc.line, d.loc.column) == (line + 1, col), d
    assert "section .data" in d.message and "memory dm" in d.message and "262144 bytes" in d.message, d.message
    assert peak < PEAK_LIMIT


def test_amdnpu_image_that_fits_assembles():
    program = target("amdnpu").assemble("done\n.data\n" + many(".long " + ", ".join(["1"] * 64), 900), "k.s")
    assert len(program.sections[".data"].data) == 900 * 256


@pytest.mark.parametrize("directive", [".space 2000000000", ".fill 2000000000, 1, 0", ".org 0x7fffffff",
                                       ".zero 2000000000"])
def test_plena_has_no_directives_so_a_huge_reservation_is_refused_at_once(directive):
    d, peak = refused("plena", f"S_ADDI_INT gp1, gp0, 1\n{directive}\n")
    assert (d.loc.line, d.loc.column) == (2, 1)
    assert "directives are not allowed" in d.message
    assert peak < PEAK_LIMIT


@pytest.mark.parametrize("name", ["coral", "boom"])
@pytest.mark.parametrize("directive", [".fill 2000000000, 1, 0", ".org 0x7fffffff", ".incbin \"/dev/zero\""])
def test_directives_the_dialect_lacks_are_refused_without_building_anything(name, directive):
    d, peak = refused(name, f"{RET[name]}\n.data\n{directive}\n")
    assert d.loc.line == 3 and "directive" in d.message
    assert peak < PEAK_LIMIT


def test_plena_instruction_store_is_bounded():
    asm = Assembler(isadl.load(TARGETS / "plena.isa"))
    assert asm.room == MAX_IMAGE  # the pc is 32 bits: 4 GiB, more than the assembler's own limit
    assert "instruction store" in asm.room_text
    asm.room = 64  # a small store: the 17th instruction (offset 64) is the first that does not fit
    with pytest.raises(AsmError) as info:
        asm.assemble(many("S_ADDI_INT gp1, gp1, 1", 20), "k.s")
    d = info.value.diagnostics[0]
    assert (d.loc.line, d.loc.column) == (17, 1)
    assert d.message.startswith("section .text is 80 bytes, more than"), d.message


def test_coral_section_straddling_two_memories_is_a_located_error():
    # text fills most of ITCM; .data then starts in ITCM and would run into DTCM: the loader puts
    # each section in one memory, so this image cannot load although it fits in ITCM + DTCM
    text = "ret\n.space 1048000\n.data\n.word 1\n.space 600\n.word 2\n"
    with pytest.raises(AsmError) as info:
        target("coral").assemble(text, "k.s")
    d = info.value.diagnostics[0]
    assert (d.loc.line, d.loc.column) == (5, 8), d
    assert d.message == ("section .data (608 bytes at 0xffdd0..0x10002f) runs past the end of memory itcm "
                         "(1048576 bytes at 0x0..0xfffff)")


@pytest.mark.parametrize("name,size", [("coral", (1 << 20) - 64), ("boom", (4 << 20) - 64)])
def test_images_up_to_the_memory_size_assemble(name, size):
    program = target(name).assemble(f"{RET[name]}\n.data\nbuf: .space {size}, 0x5a\n", "k.s")
    data = program.sections[".data"].data
    assert len(data) == size and data[:2] == b"\x5a\x5a" and data[-1] == 0x5a


def _limit_memory():  # the child process may not grow past 1.5 GB of address space
    resource.setrlimit(resource.RLIMIT_AS, (1536 << 20, 1536 << 20))


@pytest.mark.parametrize("command", ["asm", "eval"])
def test_cli_prints_the_located_error_and_exits_1(tmp_path, command):
    src = tmp_path / "k.s"
    src.write_text(".text\nret\n.data\nbuf: .space 2000000000\n")
    args = ["asm", "coral", str(src)] if command == "asm" else ["eval", "coral", "relu", str(src)]
    env = dict(os.environ, PYTHONPATH=str(ROOT), OPENBLAS_NUM_THREADS="1")
    r = subprocess.run([sys.executable, "-m", "kcgen", *args], capture_output=True, text=True, env=env,
                       preexec_fn=_limit_memory, timeout=600)
    out = r.stdout + r.stderr
    assert r.returncode == 1, out
    assert f"{src}:4:13: error: .space 2000000000: section .data would grow to 2000000000 bytes" in out, out
    assert "Traceback" not in out and "MemoryError" not in out, out
