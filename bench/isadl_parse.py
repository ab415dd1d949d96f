"""Benchmark: parse + check a generated ISA of 500 instructions (target ≤ 1 s).

    .venv/bin/python bench/isadl_parse.py [--instructions 500] [--repeat 5]

The generated ISA is realistic in shape: R/I/B-style formats, register files, a memory,
semantics with loops, requires and memory traffic, distinct encodings for every instruction.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import isadl  # noqa: E402
from isadl.parser import parse_text  # noqa: E402

HEADER = """\
isa bench "generated benchmark ISA" {
  word 32
  param VLEN = 64
  param MEM = 1 << 16
  float bf16(exp=8, man=7)
  regs x[32]: i32 { asm "x{n}"; zero x0 }
  regs f[32]: bf16 { asm "f{n}" }
  memory vmem: bf16[MEM] { align 2 }
  memory ram: u8[MEM]
  format R { op 8:0; rd 13:9; rs1 18:14; rs2 23:19; ignore 31:24 }
  format I { op 8:0; rd 13:9; rs1 18:14; imm 31:19 }
  format B { op 8:0; rs1 13:9; rs2 18:14; off { 13:1 = 31:19 } }
  timing inorder { unit alu; unit vec; unit mem }
"""

BODIES = [
    ("R", "x[rd] = x[rs1] + x[rs2] * {k}", "alu", "{m} {{rd:x}}, {{rs1:x}}, {{rs2:x}}", "R(op={op}, rd, rs1, rs2)"),
    ("I", "x[rd] = x[rs1] ^ sext(imm, 32)", "alu", "{m} {{rd:x}}, {{rs1:x}}, {{imm:i13}}", "I(op={op}, rd, rs1, imm)"),
    ("R", """require x[rs1] % VLEN == 0 : "vector address must be VLEN-aligned"
      for i in 0..VLEN {{
        vmem[u32(x[rd]) + i] = max(vmem[u32(x[rs1]) + i], vmem[u32(x[rs2]) + i]) + bf16({k})
      }}""", "vec", "{m} {{rd:x}}, {{rs1:x}}, {{rs2:x}}", "R(op={op}, rd, rs1, rs2)"),
    ("I", "x[rd] = load(ram, i32, u32(x[rs1]) + u32(sext(imm, 32)))", "mem", "{m} {{rd:x}}, {{imm:i13}}({{rs1:x}})",
     "I(op={op}, rd, rs1, imm)"),
    ("B", "if x[rs1] < x[rs2] {{ pc = target }}", "alu", "{m} {{rs1:x}}, {{rs2:x}}, {{target:pcrel14}}",
     "B(op={op}, rs1, rs2, off=target)"),
    ("R", "f[rd] = bf16(sum(i in 0..VLEN: f32(vmem[u32(x[rs1]) + i])))", "vec", "{m} {{rd:f}}, {{rs1:x}}",
     "R(op={op}, rd, rs1, rs2=0)"),
]


def generate(n: int) -> str:
    out = [HEADER]
    for i in range(n):
        _, sem, unit, syntax, enc = BODIES[i % len(BODIES)]
        fields = {"m": f"op{i}", "k": i % 7 + 1, "op": i}  # a distinct 9-bit opcode each
        out.append(f"""  instruction OP{i} {{
    syntax "{syntax.format(**fields)}"
    encoding {enc.format(**fields)}
    unit {unit}; cycles {1 + i % 4}
    semantics {{
      {sem.format(**fields)}
    }}
    doc "Generated instruction {i}."
  }}
""")
    out.append("}\n")
    return "".join(out)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--instructions", type=int, default=500, help="at most 512 (9-bit opcodes)")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    text = generate(args.instructions)
    parse_times, total_times = [], []
    spec = None
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        parse_text(text, "<bench>")
        t1 = time.perf_counter()
        spec = isadl.load_text(text, "<bench>")
        t2 = time.perf_counter()
        parse_times.append(t1 - t0)
        total_times.append(t2 - t1)
    print(f"{len(text.splitlines())} lines, {spec.summary()}")
    print(f"parse only:    median {statistics.median(parse_times) * 1000:.0f} ms")
    print(f"parse + check: median {statistics.median(total_times) * 1000:.0f} ms "
          f"(min {min(total_times) * 1000:.0f} ms, max {max(total_times) * 1000:.0f} ms, {args.repeat} runs)")


if __name__ == "__main__":
    main()
