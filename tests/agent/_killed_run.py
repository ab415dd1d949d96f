"""Run the agent against a test server and SIGKILL this very process right after the N-th record
of a kind is written (test_kill.py): a real kill -9 at an exact phase, no clean-up of any kind.

    python tests/agent/_killed_run.py OUT API_BASE KIND N      (KIND "never": the test kills it)
"""
import os
import signal
import sys
from pathlib import Path

if __name__ == "__main__":
    out, api_base, kind, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    from kcgen.paths import agent
    A = agent()
    seen = {"n": 0}

    def hook(rec):
        if rec["type"] == kind:
            seen["n"] += 1
            if seen["n"] == n:
                os.kill(os.getpid(), signal.SIGKILL)

    A.Run(A.RunSettings(model="openai/test-model", target="boom", task="relu", out=Path(out), api_base=api_base,
                        seed=7, backoff=0.01, attempts=2, timeout=60), on_event=hook).run()
    sys.exit(3)  # not killed: the test's phase never came
