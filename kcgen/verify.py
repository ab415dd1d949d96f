"""Final verification and suspicious-result flags: what makes a reported success a verified one.

    trials = verification_trials(task)          # >= 10, a whole number of rounds over the profiles
    seed = fresh_seed()                         # from the OS; never derived from a name
    result = evaluate_item(kernel, spec, task, target, config, trials=trials, seed=seed)
    result.suspicious                           # why a human should look (flags(...) fills it)

An agent run (and so every bench cell) ends by re-evaluating its best kernel this way, on seeds
the agent never saw; its success is that evaluation's verdict alone.

A verified result is flagged, never altered, when it is
- more than SUSPICIOUS_SPEEDUP (1.5) times faster than the item's reference kernel. The references
  are the project's hand-written expert kernels (tasks/kernels/reference/); beating one by half
  again is either a better algorithm than the expert found (worth a look, and worth adopting as
  the reference) or work skipped through a gap in the checks;
- below the roofline bound (roofline cycles / kernel cycles > 1), which no correct kernel reaches
  if the bound, the timing model and the checks are right; or
- within ROOFLINE_MARGIN of it (a fraction of at least 0.9) while faster than the item's reference
  kernel (or on an item without one). The margin alone would flag the references themselves: 18
  of the 146 reference kernels at C1 and C3 are at 0.9 of their bound or above (boom and coral
  matrix kernels, PLENA gemv; boom gemm C3 at 0.9998; measured when these flags were introduced),
  so nearness is suspicious only beyond what an expert kernel showed possible.
"""
from __future__ import annotations

import secrets
from typing import Optional

SUSPICIOUS_SPEEDUP = 1.5  # faster than the item's reference kernel by more than this: flagged
ROOFLINE_MARGIN = 0.9  # roofline cycles / kernel cycles at or above this: flagged
MIN_TRIALS = 10  # a final verification's least number of trials


def fresh_seed() -> int:
    """A seed from the operating system's entropy (31 bits, as every seed the evaluator records)."""
    return secrets.randbits(31)


def verification_trials(task) -> int:
    """At least MIN_TRIALS, and a whole number of rounds over the task's value profiles (trial k
    draws under profile k mod their number), so every profile is drawn equally often: 16 for the
    eight profiles."""
    n = max(1, len(task.profiles))
    return -(-MIN_TRIALS // n) * n


def flags(cycles: Optional[int], reference_cycles: Optional[int], roofline_cycles: Optional[int]) -> list[str]:
    """Why a correct kernel of `cycles` cycles deserves a human's look (empty: nothing found).
    `reference_cycles`: the item's reference kernel's (None: it has none)."""
    out = []
    if not cycles:
        return out
    if reference_cycles and reference_cycles / cycles > SUSPICIOUS_SPEEDUP:
        out.append(f"{reference_cycles / cycles:.2f}x faster than the item's reference kernel "
                   f"({cycles} vs {reference_cycles} cycles; flagged above {SUSPICIOUS_SPEEDUP:g}x)")
    if roofline_cycles:
        fraction = roofline_cycles / cycles
        if fraction > 1:
            out.append(f"below the roofline bound ({cycles} < {roofline_cycles} cycles): the bound, the timing "
                       f"model or the checks are wrong, or the kernel skips work")
        elif fraction >= ROOFLINE_MARGIN and (not reference_cycles or cycles < reference_cycles):
            beyond = f", faster than the reference kernel's {reference_cycles}" if reference_cycles else ""
            out.append(f"at {100 * fraction:.1f}% of the roofline bound ({cycles} vs {roofline_cycles} cycles{beyond}; "
                       f"flagged from {100 * ROOFLINE_MARGIN:.0f}%)")
    return out
