"""`kcgen codesign TARGET TASK --model M`: the two-phase co-design session.

Phase 1: the agent writes the best kernel it can on the base ISA (an ordinary run, in
OUT/base/). Phase 2: a co-design run (OUT/extended/) that starts from that kernel and may propose
instructions (propose_instruction), profile its kernel (profile_kernel) and rewrite it for the
extended ISA. OUT/summary.json holds base_cycles, extended_cycles, speedup, accepted (mnemonics)
and rejected (mnemonic + reason), and what the accepted instructions cost in silicon (added_area in
base lanes, min_latency, speedup_per_area, hw_cost: kcgen.hwcost); both phases resume from their
trajectories like any run.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Callable, Optional

from .loop import Run, RunSettings

NOTE = """Phase 2 of a co-design session. Your best kernel on the base machine takes {cycles} cycles:

```
{kernel}
```

Make it faster. You may now extend the machine with propose_instruction (see the co-design
rules in the system prompt) and use profile_kernel to see where the cycles go."""

NOTE_NONE = """Phase 2 of a co-design session: phase 1 found no correct kernel on the base machine. You may
extend the machine with propose_instruction and use profile_kernel."""


def run_codesign(target: str, task: str, model: str, out: Path, config: str = "C1", max_turns: Optional[int] = None,
                 thinking: bool = False, seed: Optional[int] = None, api_base: Optional[str] = None,
                 on_event: Optional[Callable[[str, dict], None]] = None) -> dict:
    out = Path(out)
    common = dict(model=model, target=target, task=task, config=config, max_turns=max_turns, thinking=thinking,
                  seed=seed, api_base=api_base)
    emit = on_event or (lambda phase, rec: None)
    base = Run(RunSettings(out=out / "base", **common), on_event=lambda r: emit("base", r)).run()
    # phase 2 starts from phase 1's verified kernel only (a best kernel that failed its verification is no base)
    best = Path(base["best_kernel"]).read_text(encoding="utf-8") if base.get("success") and base.get("best_kernel") \
        else None
    note = NOTE.format(cycles=base["best_cycles"], kernel=best.strip()) if best else NOTE_NONE
    ext_run = Run(RunSettings(out=out / "extended", codesign=True, note=note, **common),
                  on_event=lambda r: emit("extended", r))
    if best is not None and not ext_run.tools.kernel_path.exists():
        ext_run.tools.write_code(best)  # the workspace starts from the base kernel
    extended = ext_run.run()
    from .codesign_tools import summary as proposals
    outcome = proposals(ext_run)
    base_cycles, ext_cycles = base.get("best_cycles"), extended.get("best_cycles")
    result = {"target": target, "task": task, "config": config, "model": model, "scripted": base.get("scripted"),
              "base_cycles": base_cycles, "extended_cycles": ext_cycles,
              "speedup": base_cycles / ext_cycles if base_cycles and ext_cycles else None,
              "accepted": outcome["accepted"], "rejected": outcome["rejected"],
              "extended_isa": extended.get("isa_path"), "base_kernel": base.get("best_kernel"),
              "extended_kernel": extended.get("best_kernel")}
    result.update(hardware_cost(target, extended.get("isa_path"), outcome["accepted"], result["speedup"]))
    from kcgen.redact import redact  # everything written goes through the one redaction
    (out / "summary.json").write_text(json.dumps(redact(result), indent=1) + "\n", encoding="utf-8")
    return result


def hardware_cost(target: str, isa_path: Optional[str], accepted: list[str], speedup: Optional[float]) -> dict:
    """What the accepted instructions cost in silicon (kcgen.hwcost, against the original target, not
    an earlier overlay of the chain): added_area in base lanes, min_latency per mnemonic, and the
    speedup per area."""
    if not accepted or not isa_path:
        return {"added_area": 0.0 if not accepted else None, "min_latency": {}, "speedup_per_area": None,
                "hw_cost": {}}
    import isadl
    from kcgen import hwcost
    base, overlay = isadl.load(isadl.find_target(target)), isadl.load(isa_path)
    costs = [hwcost.estimate(base, overlay, m) for m in accepted if m in overlay.instructions]
    area = sum(c.added_area for c in costs)
    return {"added_area": round(area, 3), "min_latency": {c.mnemonic: c.min_latency for c in costs},
            "speedup_per_area": (round(hwcost.speedup_per_area(speedup, area, costs[0].base_lanes), 3)
                                 if speedup and costs else None),
            "hw_cost": {c.mnemonic: c.to_json() for c in costs}}

