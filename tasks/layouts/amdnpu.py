"""amdnpu's data layout: the kernel ABI's (inputs packed into `inputs`, outputs into `outputs`, larger
tensors in the neighbours' memories; pointers in p0.., sizes in r0..), and at levels 2-3 the data
memory no tensor occupies as scratch.

A composite kernel (an FFN, attention, a decoder block) keeps intermediates -- q, k, v, the residual
stream -- that do not fit the 4 KiB `tmp` region, as a compiler would place them in the tile's free
data memory; so at levels 2-3 every byte of dm[IMAGE_END..DM_BYTES) outside the tensors is scratch (as
PLENA's layout gives composite kernels the HBM after the inputs). Level 1 keeps the ABI's rule: a
relu that stores past y or into a neighbour's memory fails.
"""
from __future__ import annotations

from kcgen.evaluation import abi_layout
from kcgen.integrity import Span

IMAGE_END = 0x4000  # dm[0..PM_BYTES) holds the program image (targets/amdnpu.isa, abi)


def layout(spec, task, target, config):
    lay = abi_layout(spec, task, target, config)
    if (task.level or 1) >= 2:
        dm = next(m for m in spec.isa.memories if m.name == "dm")
        end = spec.params_eval(dm.size)
        used = sorted((s.lo, s.hi) for s in (lay.extent(spec, n) for n in lay.placements) if s.memory == "dm")
        lo = IMAGE_END
        for a, b in used + [(end, end)]:
            if a > lo:
                lay.scratch.append(Span("dm", lo, a, "data memory no tensor occupies (levels 2-3)"))
            lo = max(lo, b)
    return lay
