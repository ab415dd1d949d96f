"""amdnpu template baseline of mqa (NH query heads sharing one K/V head): per K/V head and block of query rows,
q k^T / sqrt(D) (linear template), softmax (template), @ v (gemm template); see _lib.attention."""
from pathlib import Path

from kcgen.paths import load_module

L = load_module(Path(__file__).resolve().parent / "_lib.py")
unscheduled = L.attention_generator(lambda cfg: (cfg["NH"], 1))
generate = L.B.scheduled(unscheduled)
