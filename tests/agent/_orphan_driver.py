"""A bench driver that starts one local worker on a cell and then waits to be killed (test_kill.py).
Prints the worker's pid. With "evaluator" instead: a process with an evaluator worker (as `kcgen
agent` has), printing that worker's pid.

    python tests/agent/_orphan_driver.py RUNDIR API_BASE
    python tests/agent/_orphan_driver.py evaluator
"""
import multiprocessing
import os
import sys
import time
from dataclasses import asdict

if __name__ == "__main__" and sys.argv[1] == "evaluator":
    from kcgen.evaluation import Evaluator
    evaluator = Evaluator()
    print(evaluator._executor().submit(os.getpid).result(), flush=True)
    time.sleep(300)
elif __name__ == "__main__":
    from kcgen import bench
    rundir, api_base = sys.argv[1], sys.argv[2]
    ctx = multiprocessing.get_context("spawn")
    mine, theirs = ctx.Pipe()
    options = bench.Options(api_base=api_base, attempts=1, timeout=120)
    worker = ctx.Process(target=bench._worker_main, args=(theirs, rundir, asdict(options), os.getpid()))
    worker.start()
    print(worker.pid, flush=True)
    mine.send(asdict(bench.Cell("openai/test-model", "boom", "relu", "C1", 1)))
    time.sleep(300)
