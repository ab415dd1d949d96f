"""dllm_sampling on PLENA extended with V_RED_ARGMAX (extension.isa in this directory, wrapped as
`isa plena_<tag> extends plena { ... }`): generate(task, cfg, layout, spec) -> assembly text.

The same kernel as the base-ISA reference (tasks/kernels/reference/plena/dllm_sampling.py, whose
module doc explains it) with V_RED_ARGMAX in two places:
- per position, one V_RED_ARGMAX per chunk (chunk = 0..3 in its group of 256 logits, running
  across the row) gives the largest logit m and the index of its first occurrence in its group,
  and a few scalar instructions per group track that group (the bf16 index is exact only below
  256); it replaces V_RED_MAX and the token-score pass (two V_MUL_VF, a V_ADD_VV and a V_RED_MAX
  per chunk); the softmax sum pass (V_SUB_VF, V_EXP_V, V_RED_SUM) is unchanged, as the task
  defines the confidence by it;
- per extract-max round, one V_RED_ARGMAX per row of 64 positions gives the pick (it replaces
  V_RED_MAX and the position-score pass).
"""
from __future__ import annotations

from kcgen.paths import TASKS, load_module

_ref = load_module(TASKS / "kernels" / "reference" / "plena" / "dllm_sampling.py")


def generate(task, cfg, layout, spec):
    if "V_RED_ARGMAX" not in spec.instructions:
        raise ValueError(f"{spec.isa.name} has no V_RED_ARGMAX: load the overlay of extension.isa")
    return _ref.generate(task, cfg, layout, spec, ext=True)
