"""ReLU on PLENA extended with V_MAX_VF (extension.isa): the reference kernel with each row's
five-instruction sigmoid-gate emulation of max(x, 0) replaced by one V_MAX_VF against f0."""
from __future__ import annotations

import re

from kcgen.paths import TASKS, load_module

_GATE = re.compile(r"V_MUL_VF (gp\d+), (gp\d+), f\d+\n"
                   r"V_EXP_V \1, \1\n"
                   r"V_ADD_VF \1, \1, f\d+\n"
                   r"V_RECI_V \1, \1\n"
                   r"V_MUL_VV \2, \2, \1\n")


def generate(task, cfg, layout, spec):
    base = load_module(TASKS / "kernels" / "reference" / "plena.py").generate(task, cfg, layout, spec)
    text, n = _GATE.subn(lambda m: f"V_MAX_VF {m.group(2)}, {m.group(2)}, f0\n", base)
    if n == 0:
        raise ValueError("the reference relu kernel no longer has the sigmoid-gate rows this rewrites")
    return text
