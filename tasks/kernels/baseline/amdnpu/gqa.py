"""amdnpu template baseline of gqa (NH query heads sharing NKV K/V heads): per K/V head and block of query rows,
q k^T / sqrt(D) (linear template), softmax (template), @ v (gemm template); see _lib.attention."""
from pathlib import Path

from kcgen.paths import load_module

L = load_module(Path(__file__).resolve().parent / "_lib.py")
unscheduled = L.attention_generator(lambda cfg: (cfg["NH"], cfg["NKV"]))
generate = L.B.scheduled(unscheduled)
