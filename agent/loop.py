"""The agent loop: prompt, model turn, tool calls, repeat — recorded in a JSONL trajectory.

    summary = run(RunSettings(model="scripted/reference", target="boom", task="relu", out=Path("runs/x")))

A turn is one model reply (with any number of tool calls). The loop stops when the turn budget
(15 / 20 / 25 for levels 1 / 2 / 3 unless overridden) is spent or the model replies without a
tool call. The best kernel the run's evaluations passed (fewest cycles) is then verified: evaluated
again on at least 10 trials over every value profile, with seeds drawn from the OS that the model
never sees (they are recorded in the summary only). The run is a success when that verification
passes, and only then; its cycles are the verification's. Rerunning on the same `out` directory
resumes from the trajectory: completed tool calls are not repeated, a run that ended before its
verification (or whose summary predates verification) is verified, and a verified run just
returns its summary.

Seeds: the run's evaluations draw their inputs from `seed` + 7919 * k (k: the evaluation's
index); `seed` is drawn from the OS when RunSettings.seed is None and recorded in the meta record
and the summary (pass it back to reproduce a run's evaluations).
"""
from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Optional

from . import models, prompt
from .tools import Tools
from .trajectory import Trajectory

TURN_BUDGET = {1: 15, 2: 20, 3: 25}


@dataclass
class RunSettings:
    model: str
    target: str  # the task's target name (plena, amdnpu, coral, boom)
    task: str
    out: Path
    config: str = "C1"
    max_turns: Optional[int] = None  # default: by the task's level
    thinking: bool = False
    one_shot: bool = False
    trials: Optional[int] = None  # trials per evaluation in the loop (default: one per value profile)
    timeout: float = 600.0  # per model request, seconds
    attempts: int = 6  # requests per model turn: a transient failure (429, 5xx, timeout) is retried, counted once
    backoff: float = 2.0  # seconds before the first retry, doubling (with jitter; at least the server's Retry-After)
    max_tokens: Optional[int] = models.DEFAULT_MAX_TOKENS  # per reply; a reply cut there is recorded and handled
    api_base: Optional[str] = None
    isa: Optional[str] = None  # the ISA file (default targets/<target>.isa; co-design passes an overlay)
    seed: Optional[int] = None  # evaluation k draws its inputs from seed + 7919 * k (default: from the OS;
    # recorded; for reproduction only: the final verification always draws its own seeds from the OS)
    codesign: bool = False  # the model may propose instructions (propose_instruction) and profile its kernel
    note: str = ""  # appended to the task message (co-design phase 2: the base kernel to beat)

    def public(self) -> dict:
        d = asdict(self)
        d["out"] = str(self.out)
        return d


class RunError(Exception):
    """The run cannot start (unknown task/target, a trajectory of a different run in `out`, `out` in
    use by another process, a model that cannot be called as configured)."""


HISTORY_ARGUMENT_CHARS = 2_000  # a rejected call's string arguments longer than this are not re-sent
CONTINUE = ("Your reply was cut off at the output limit ({limit} tokens) before it was complete. Continue "
            "where you stopped, in shorter pieces (a tool call's arguments must fit in one reply).")


@dataclass
class _State:
    turns: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    tokens_reasoning: int = 0
    cost: float = 0.0
    cost_known: bool = True
    best_cycles: Optional[int] = None
    best_code: Optional[str] = None
    baseline_cycles: Optional[int] = None
    roofline_cycles: Optional[int] = None
    first_success_turn: Optional[int] = None
    evaluations: int = 0
    last_evaluated: Optional[str] = None
    seconds: float = 0.0
    retries: int = 0  # transient model errors retried (each request counted once)
    stop: str = ""
    error: Optional[str] = None
    extra: dict = field(default_factory=dict)

    def count(self, rec: dict) -> None:
        self.turns = max(self.turns, rec.get("turn", 0))
        self.tokens_in += rec.get("tokens_in", 0)
        self.tokens_out += rec.get("tokens_out", 0)
        self.tokens_reasoning += rec.get("tokens_reasoning", 0)
        if rec.get("cost") is None:
            self.cost_known = False
        else:
            self.cost += rec["cost"]
        self.seconds += rec.get("seconds", 0.0)
        self.retries += len(rec.get("retries") or [])

    def evaluated(self, ev: dict, turn: int) -> None:
        self.evaluations += 1
        self.last_evaluated = ev.get("code")
        self.baseline_cycles = ev.get("baseline_cycles") or self.baseline_cycles
        self.roofline_cycles = ev.get("roofline_cycles") or self.roofline_cycles
        if ev.get("correct") and ev.get("cycles") is not None:
            if self.first_success_turn is None:
                self.first_success_turn = turn
            if self.best_cycles is None or ev["cycles"] < self.best_cycles:
                self.best_cycles, self.best_code = ev["cycles"], ev.get("code")


class Run:
    """One agent run; `Run(settings).run()` returns the summary record."""

    def __init__(self, settings: RunSettings, on_event: Optional[Callable[[dict], None]] = None,
                 tools_hook: Optional[Callable[["Run"], None]] = None, evaluator=None, restart: bool = False):
        """`evaluator`: a kcgen.evaluation.Evaluator to share between runs (the bench's workers keep
        one each); by default the run starts its own and closes it at the end. `restart`: set an
        earlier run in `out` aside (trajectory.N.jsonl) and start afresh. The run holds `out`'s lock
        (kcgen.runlock) from here until run() returns or close()."""
        from kcgen.runlock import LockedError, RunLock
        try:  # before anything is written: a run that cannot call its model leaves no trace
            models.check_config(settings.model, settings.api_base)
        except models.ConfigError as exc:
            raise RunError(str(exc)) from None
        self.out = Path(settings.out)
        self._lock = RunLock(self.out, f"kcgen agent {settings.target} {settings.task} --model {settings.model}")
        try:
            self._lock.acquire()
        except LockedError as exc:
            raise RunError(str(exc)) from None
        try:
            self._init(settings, on_event, tools_hook, evaluator, restart)
        except BaseException:
            self._lock.release()
            raise

    def _init(self, settings, on_event, tools_hook, evaluator, restart) -> None:
        import isadl
        from kcgen import taskspec
        from kcgen.evaluation import LayoutError, layout_for, statement
        from kcgen.paths import TARGETS
        self.settings = s = settings
        self.on_event = on_event or (lambda rec: None)
        if restart:
            self._set_aside()
        self.trajectory = Trajectory(self.out / "trajectory.jsonl")
        try:
            self.task = taskspec.find(s.task)
        except KeyError as exc:
            raise RunError(str(exc.args[0])) from None
        if s.target not in self.task.targets:
            raise RunError(f"task {s.task} does not apply to {s.target} (it applies to {', '.join(self.task.targets)})")
        self.isa_path = Path(s.isa) if s.isa else TARGETS / f"{s.target}.isa"
        self.spec = isadl.load(self.isa_path)
        try:
            self.layout = layout_for(self.spec, self.task, s.target, s.config)
        except LayoutError as exc:
            raise RunError(str(exc)) from None
        self.statement = statement(self.task, s.target, s.config, self.layout, self.spec)
        self.max_turns = s.max_turns or TURN_BUDGET[self.task.level]
        self._check_same_run()
        self._choose_seed()
        self._evaluator = evaluator
        self._own_evaluator = evaluator is None
        self._evaluations = 0
        self.tools = self._make_tools()
        if s.codesign:
            self._enable_codesign()
        if tools_hook:
            tools_hook(self)

    def _set_aside(self) -> None:
        """--restart: the earlier run's trajectory becomes trajectory.N.jsonl; its kernel files go."""
        old = self.out / "trajectory.jsonl"
        if old.exists():
            n = 1
            while (self.out / f"trajectory.{n}.jsonl").exists():
                n += 1
            old.rename(self.out / f"trajectory.{n}.jsonl")
        for f in (self.out / "workspace" / "kernel.s", self.out / "best.s"):
            f.unlink(missing_ok=True)

    def close(self) -> None:
        """Release `out` (run() does it when it returns)."""
        if self._evaluator is not None and self._own_evaluator:
            self._evaluator.close()
            self._evaluator = None
        self._lock.release()

    # -- pieces
    def _make_tools(self) -> Tools:
        from kcgen.asm import Assembler
        from kcgen.target import build_target
        target = build_target(self.spec)
        self.docs_markdown = (target.docs / f"{self.spec.isa.name}.md").read_text(encoding="utf-8")
        index = (target.docs / "index.txt").read_text(encoding="utf-8")
        return Tools(self.out / "workspace", Assembler(self.spec), self.spec, index, self._evaluate)

    # -- co-design: proposals rebuild the target the tools work on
    def _enable_codesign(self) -> None:
        from . import codesign_tools
        self.tools.extra.update(codesign_tools.tools(self))

    def switch_isa(self, path: Path) -> None:
        """From now on the tools (assembler, docs, evaluator) work on the ISA at `path`."""
        import isadl
        from kcgen.asm import Assembler
        from kcgen.target import build_target
        self.isa_path = Path(path)
        self.spec = isadl.load(self.isa_path)
        target = build_target(self.spec)  # a new IR hash: a new cache entry; the base stays cached
        self.docs_markdown = (target.docs / f"{self.spec.isa.name}.md").read_text(encoding="utf-8")
        self.tools.spec = self.spec
        self.tools.assembler = Assembler(self.spec)
        self.tools.docs_index = (target.docs / "index.txt").read_text(encoding="utf-8")

    def _evaluate(self, code: str):
        from kcgen.evaluation import Evaluator
        if self._evaluator is None:
            self._evaluator = Evaluator()
        seed = None
        if self.settings.seed is not None:  # reproducible, yet new inputs for every evaluation
            seed = (self.settings.seed + 7919 * self._evaluations) % (1 << 31)
        self._evaluations += 1
        return self._evaluator.evaluate(code, self.isa_path, self.task.path, self.settings.target,
                                        self.settings.config, trials=self.settings.trials, timeout=300,
                                        path="kernel.s", seed=seed)

    def _choose_seed(self) -> None:
        """The seed of the run's evaluations: a resumed run's own (from its meta record), else the one
        given, else one drawn from the OS. `self.settings` becomes a copy that holds it."""
        from dataclasses import replace
        from kcgen.verify import fresh_seed
        meta = next((r for r in self.trajectory.records() if r["type"] == "meta"), None)
        recorded = (meta or {}).get("settings", {}).get("seed")
        if recorded is not None:
            self.seed_source = (meta or {}).get("seed_source", "given")
            seed = recorded
        elif self.settings.seed is not None:
            self.seed_source, seed = "given", self.settings.seed
        else:
            self.seed_source, seed = "os", fresh_seed()
        self.settings = replace(self.settings, seed=seed)

    def _verify(self, code: str) -> dict:
        """The final verification of `code`: kcgen.verify.verification_trials fresh trials (every
        value profile, at least 10) on a seed drawn from the OS here, never shown to the model."""
        from kcgen import verify
        from kcgen.evaluation import Evaluator
        if self._evaluator is None:
            self._evaluator = Evaluator()
        trials, seed = verify.verification_trials(self.task), verify.fresh_seed()
        try:
            r = self._evaluator.evaluate(code, self.isa_path, self.task.path, self.settings.target,
                                         self.settings.config, trials=trials, timeout=900, path="best.s", seed=seed)
        except Exception as exc:  # kcgen's failure, not the kernel's: counted as a tool failure
            self.tools.failures += 1
            return {"correct": False, "trials": trials, "seed": seed, "seeds": [], "profiles": [], "cycles": None,
                    "suspicious": [], "error": f"the verification failed: {type(exc).__name__}: {exc}"}
        return {**r.as_json(), "trials": trials, "seed": seed}

    def _one_shot(self) -> Optional[tuple[str, str]]:
        """A reference kernel of another task on the same target (the closest level first)."""
        from kcgen import kernels, taskspec
        from kcgen.evaluation import layout_for, statement
        others = sorted((t for t in taskspec.all_tasks() if t.name != self.task.name and self.settings.target in t.targets),
                        key=lambda t: (abs(t.level - self.task.level), t.name))
        for other in others:
            lay = layout_for(self.spec, other, self.settings.target, "C1")
            k = kernels.find("reference", self.spec, other, self.settings.target, "C1", lay)
            if k is not None:
                return statement(other, self.settings.target, "C1", lay, self.spec), k.text
        return None

    def _record(self, rec: dict) -> dict:
        rec = self.trajectory.append(rec)
        self.on_event(rec)
        return rec

    # -- the loop
    def run(self) -> dict:
        try:
            return self._run()
        finally:
            self.close()

    def _run(self) -> dict:
        s = self.settings
        records = self.trajectory.records()
        last = next((r for r in reversed(records) if r["type"] == "summary"), None)
        final = next((r for r in reversed(records) if r["type"] in ("end", "summary")), None)
        # a run that ended on an infrastructure error (the model could not be reached, refused the
        # request, a missing key) is retried; one that ended by the model's own doing stays ended
        retry = final if final is not None and final.get("stop") == "model error" else None
        if final is not None and retry is None:
            if last is not None and "verified" in last:
                return last
            state = _State()  # the loop is over: verify (again: never done or not recorded)
            self._replay(records, state)
            state.stop, state.error = final.get("stop") or "", final.get("error")
            self.tools.failures += (last or {}).get("tool_failures") or 0
            self._record({"type": "resume", "turns_done": state.turns, "tool_calls_done":
                          sum(r["type"] == "tool" for r in records), "verify_only": True})
            return self._finish(state, record_end=not any(r["type"] == "end" for r in records))
        state = _State()
        if records:
            messages = self._resume(records, state, retry)
        else:
            system = prompt.system_prompt(s.target, self.docs_markdown, self.max_turns,
                                          self._one_shot() if s.one_shot else None, spec=self.spec)
            task_text = prompt.task_message(self.statement) + (f"\n\n{s.note}" if s.note else "")
            if s.codesign:
                from .codesign_tools import GUIDE
                system += "\n\n" + GUIDE
            messages = [{"role": "system", "content": system}, {"role": "user", "content": task_text}]
            self._record({"type": "meta", "settings": s.public(), "seed_source": self.seed_source,
                          "max_turns": self.max_turns,
                          "scripted": models.is_scripted(s.model), "isa": self.spec.isa.name,
                          "level": self.task.level})
            for m in messages:
                self._record({"type": "message", "role": m["role"], "content": m["content"]})
        while not state.stop:
            if state.turns >= self.max_turns:
                state.stop = "turn budget spent"
                break
            turn = state.turns + 1
            try:
                reply = models.complete(s.model, messages, self.tools.schemas, thinking=s.thinking,
                                        timeout=s.timeout, attempts=s.attempts, backoff=s.backoff,
                                        api_base=s.api_base, max_tokens=s.max_tokens)
            except models.ModelError as exc:
                state.stop, state.error = "model error", str(exc)
                state.retries += len(exc.retries)
                self._record({"type": "error", "turn": turn, "message": str(exc), "retries": exc.retries})
                break
            for i, c in enumerate(reply.tool_calls):
                c["id"] = c["id"] or f"call_{turn}_{i}"  # a server that sends none: the history needs one
            rec = self._record({"type": "assistant", "turn": turn, "content": reply.content,
                                "reasoning": reply.reasoning, "tool_calls": reply.tool_calls,
                                "finish_reason": reply.finish_reason,
                                "tokens_in": reply.tokens_in, "tokens_out": reply.tokens_out,
                                "tokens_reasoning": reply.tokens_reasoning, "cost": reply.cost,
                                "seconds": round(reply.seconds, 3), "retries": reply.retries})
            state.count(rec)
            results = [self._call(c, turn, i, state, reply.finish_reason) for i, c in enumerate(rec["tool_calls"])]
            messages += _turn_messages(rec, results)
            if reply.finish_reason == "length" and not reply.tool_calls:
                # cut by max_tokens, not finished: ask for the rest (the next turn)
                note = CONTINUE.format(limit=s.max_tokens or "the server's")
                self._record({"type": "message", "role": "user", "content": note, "turn": turn})
                messages.append({"role": "user", "content": note})
                continue
            if not reply.tool_calls:
                state.stop = "answered without a tool call"
                break
        return self._finish(state)

    def _finish(self, state: _State, record_end: bool = True) -> dict:
        """The loop is over (recorded, so a kill from here on resumes to the verification): verify
        the best kernel and write the summary."""
        if record_end:
            self._record({"type": "end", "stop": state.stop, "error": state.error})
        verification = self._verify(state.best_code) if state.best_code is not None else None
        return self._summary(state, verification)

    def _replay(self, records: list[dict], state: _State) -> None:
        """The counts and the best kernel of a finished loop, from its records (no model, no tools)."""
        for rec in records:
            if rec["type"] == "assistant":
                state.count(rec)
            elif rec["type"] == "error":
                state.retries += len(rec.get("retries") or [])
            elif rec["type"] == "tool" and "evaluation" in rec:
                state.evaluated(rec["evaluation"], rec["turn"])
                self._evaluations += 1
        accepted = [r for r in records if r["type"] == "proposal" and r.get("accepted")]
        if accepted and Path(accepted[-1]["overlay"]).exists():
            self.switch_isa(Path(accepted[-1]["overlay"]))

    def _call(self, call: dict, turn: int, index: int, state: _State, finish_reason: Optional[str] = None) -> dict:
        """Run tool call `index` of turn `turn`; returns its (recorded) tool record."""
        t0 = time.monotonic()
        result = self.tools.call(call["name"], call["arguments"])
        if finish_reason == "length" and _json_object(call["arguments"]) is None:
            result += (f"\nYour reply was cut off at the output limit ({self.settings.max_tokens or 'the server'}"
                       f"{' tokens' if self.settings.max_tokens else ''}) in the middle of this call's arguments: "
                       "send less in one call.")
        rec = {"type": "tool", "turn": turn, "index": index, "id": call["id"], "name": call["name"],
               "arguments": call["arguments"], "result": result, "seconds": round(time.monotonic() - t0, 3)}
        last = self.tools.last
        if call["name"] == "run_evaluation" and last is not None and last.code == self._current_code():
            r = last.result
            rec["evaluation"] = {"correct": r.correct, "cycles": r.cycles, "instret": r.instret,
                                 "match_rate": r.match_rate, "baseline_cycles": r.baseline_cycles,
                                 "roofline_cycles": r.roofline_cycles, "speedup": r.speedup,
                                 "trap": r.trap, "error": r.error, "seeds": r.seeds, "code": last.code}
            state.evaluated(rec["evaluation"], turn)
        return self._record(rec)

    def _current_code(self) -> Optional[str]:
        p = self.tools.kernel_path
        return p.read_text(encoding="utf-8") if p.exists() else None

    def _check_same_run(self) -> None:
        """An existing trajectory in `out` must be of this run (it is resumed), not another's."""
        records = self.trajectory.records()
        if not records:
            return
        meta = next((r for r in records if r["type"] == "meta"), None)
        if meta is None:
            raise RunError(f"{self.trajectory.path} is not a trajectory (no meta record): use another --out")
        mine = self.settings.public()
        for key in ("model", "target", "task", "config"):
            if meta["settings"].get(key) != mine[key]:
                raise RunError(f"{self.trajectory.path} is a run of {key} {meta['settings'].get(key)!r}, "
                               f"not {mine[key]!r}: use another --out (or --restart to set it aside)")

    def _resume(self, records: list[dict], state: _State, retry: Optional[dict] = None) -> list[dict]:
        """The conversation of an interrupted run, rebuilt from its records; the tool calls it made but
        never finished are run now. A call is keyed on (turn, its index in the turn), never on the
        id the server chose (some number calls per message: call_0 every turn)."""
        meta = next(r for r in records if r["type"] == "meta")
        self.max_turns = meta.get("max_turns", self.max_turns)
        entries: list[tuple[str, dict]] = []  # ("message", msg) or ("turn", {"rec": assistant, "results": {i: tool}})
        turns: dict[int, dict] = {}
        for rec in records:
            if rec["type"] == "message":
                entries.append(("message", {"role": rec["role"], "content": rec["content"]}))
            elif rec["type"] == "assistant":
                if rec["turn"] in turns:
                    continue  # a second writer's copy (before runs took a lock): the first one stands
                state.count(rec)
                turns[rec["turn"]] = block = {"rec": rec, "results": {}}
                entries.append(("turn", block))
            elif rec["type"] == "error":
                state.retries += len(rec.get("retries") or [])
            elif rec["type"] == "tool":
                block = turns.get(rec.get("turn"))
                if block is None:
                    continue
                calls = block["rec"]["tool_calls"]
                index = rec.get("index")
                if index is None:  # an older trajectory: the first call of the turn with this id not yet done
                    index = next((i for i, c in enumerate(calls) if c["id"] == rec["id"] and i not in block["results"]),
                                 None)
                if index is None or index >= len(calls) or index in block["results"]:
                    continue
                block["results"][index] = rec
                if "evaluation" in rec:
                    state.evaluated(rec["evaluation"], rec["turn"])
                    self._evaluations += 1
        accepted = [r for r in records if r["type"] == "proposal" and r.get("accepted")]
        if accepted and Path(accepted[-1]["overlay"]).exists():
            self.switch_isa(Path(accepted[-1]["overlay"]))
        done = sum(len(b["results"]) for b in turns.values())
        extra = {"retrying": f"{retry.get('stop')}: {retry.get('error')}"} if retry else {}
        self._record({"type": "resume", "turns_done": state.turns, "tool_calls_done": done, **extra})
        pending = [(b, i) for b in turns.values() for i in range(len(b["rec"]["tool_calls"])) if i not in b["results"]]
        if state.last_evaluated is not None and pending:
            self._restore_last_evaluation(state.last_evaluated)
        for block, i in pending:  # the calls the killed process never finished, in order
            rec = block["rec"]
            block["results"][i] = self._call(rec["tool_calls"][i], rec["turn"], i, state, rec.get("finish_reason"))
        messages: list[dict] = []
        for kind, item in entries:
            if kind == "message":
                messages.append(item)
            else:
                calls = item["rec"]["tool_calls"]
                messages += _turn_messages(item["rec"], [item["results"][i] for i in range(len(calls))])
        return messages

    def _restore_last_evaluation(self, code: str) -> None:
        """view_output after a resume needs the last evaluation's outputs: evaluate that code again."""
        from .tools import Evaluation
        self._evaluations -= 1  # the same inputs as that evaluation had, and the count unchanged
        r = self._evaluate(code)
        self.tools.last = Evaluation(r.correct, r.cycles, r.baseline_cycles, r.speedup, r.summary(flags=False), code, r)

    def _proposals(self) -> dict:
        from .codesign_tools import summary
        return summary(self)

    def _summary(self, state: _State, verification: Optional[dict]) -> dict:
        """The summary record. Success, cycles, speedup and flags are the verification's; the loop's
        own best is `loop_best_cycles`."""
        s = self.settings
        best_path = None
        if state.best_code is not None:
            best_path = self.out / "best.s"
            best_path.write_text(state.best_code, encoding="utf-8")
        verified = bool(verification and verification.get("correct") and verification.get("cycles") is not None)
        cycles = verification["cycles"] if verified else None
        baseline = (verification or {}).get("baseline_cycles") or state.baseline_cycles
        roofline = (verification or {}).get("roofline_cycles") or state.roofline_cycles
        return self._record({
            "type": "summary", "success": verified, "verified": verified, "model": s.model,
            "scripted": models.is_scripted(s.model), "target": s.target, "task": s.task, "config": s.config,
            "level": self.task.level, "best_cycles": cycles, "loop_best_cycles": state.best_cycles,
            "baseline_cycles": baseline, "speedup": baseline / cycles if cycles and baseline else None,
            "roofline_cycles": roofline, "roofline_fraction": roofline / cycles if roofline and cycles else None,
            "suspicious": ((verification or {}).get("suspicious") or []) if verified else [],
            "verification": verification,
            "turns": state.turns, "max_turns": self.max_turns,
            "turns_to_first_success": state.first_success_turn if verified else None,
            "evaluations": state.evaluations, "seed": s.seed, "seed_source": self.seed_source,
            "tokens_in": state.tokens_in, "tokens_out": state.tokens_out,
            "tokens_reasoning": state.tokens_reasoning, "cost": state.cost if state.cost_known else None,
            "model_seconds": round(state.seconds, 3), "stop": state.stop, "error": state.error,
            # the model could not be reached or refused the request: not the model's failure
            "infrastructure_error": state.stop == "model error", "retries": state.retries,
            "tool_failures": self.tools.failures, "isa": self.spec.isa.name, "isa_path": str(self.isa_path),
            **(self._proposals() if s.codesign else {}),
            "best_kernel": str(best_path) if best_path else None})


def _json_object(text) -> Optional[dict]:
    try:
        value = json.loads(text) if isinstance(text, str) else None
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _history_arguments(raw: str, result: str) -> str:
    """A call's arguments as the conversation re-sends them: valid JSON always (servers such as vLLM
    parse every replayed call and refuse the request otherwise: `{}` stands in for a malformed or cut
    text, whose error the model got as the call's result), and a rejected call's long strings
    shortened (a refused 1 MB kernel is not re-sent on every later turn)."""
    args = _json_object(raw)
    if args is None:
        return "{}"
    if result.startswith("error:") and len(raw) > HISTORY_ARGUMENT_CHARS:
        args = {k: (f"[{len(v)} characters not kept: the call was rejected]" if isinstance(v, str) and len(v) > 200
                    else v) for k, v in args.items()}
        text = json.dumps(args)
        return text if len(text) <= HISTORY_ARGUMENT_CHARS else "{}"
    return raw


def _turn_messages(assistant: dict, results: list[dict]) -> list[dict]:
    """One turn in the conversation: the assistant message, then each call's result in call order."""
    calls = assistant["tool_calls"]
    reply = models.Reply(assistant.get("content") or "", calls)
    msgs = [reply.message([_history_arguments(c["arguments"], r["result"]) for c, r in zip(calls, results)])]
    return msgs + [{"role": "tool", "tool_call_id": c["id"], "content": r["result"]} for c, r in zip(calls, results)]


def run(settings: RunSettings, on_event: Optional[Callable[[dict], None]] = None, restart: bool = False) -> dict:
    return Run(settings, on_event, restart=restart).run()
