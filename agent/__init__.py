"""The LLM agent: a litellm tool-calling loop over the run's generated tooling (loop.py), its
tools (tools.py), prompts (prompt.py), JSONL trajectories (trajectory.py), model access with
retries (models.py) and the offline scripted models (scripted.py).

Not installed as a top-level package (PyPI has an unrelated `agent`): load it with
`kcgen.paths.agent()`.
"""
from .loop import TURN_BUDGET, Run, RunError, RunSettings, run

__all__ = ["TURN_BUDGET", "Run", "RunError", "RunSettings", "run"]
