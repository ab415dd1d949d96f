"""The C of a timing section's caches and branch predictor (docs/simulator.md, "Caches and branch
prediction"), generated beside the timing model by kcgen.sim.cgen.

Their state lives in the simulator's timing scratch (`s->tstate`, words cleared at reset: every run
starts with cold caches and an untrained predictor):

- a cache of S sets and W ways: a tag word (line number / S + 1; 0 is an empty way) and a last-use
  word per way (least recently used replacement), its access and miss counters; a data cache its
  MSHRs (the cycle each outstanding miss completes);
- the predictor: 2-bit counters indexed by pc xor the global history (gshare) over a bimodal table
  indexed by pc alone (a gshare entry predicts once it has been trained, the bimodal counter until
  then: a one-table stand-in for TAGE's tagged tables over its base predictor), the history, a
  direct-mapped BTB (tag and target per entry) and a return-address stack.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

from isadl import ir
from isadl.check import Spec


@dataclass
class Cache:
    name: str
    sets: int
    ways: int
    line: int
    latency: int  # load-to-use cycles at a hit of this level
    next: Optional[str]
    memory_latency: int  # last level: cycles a miss adds beyond this level's latency
    mshrs: int
    serves: Optional[str]  # data | fetch | None (a lower level)
    memory: Optional[str]  # the memory a data cache caches
    tags: int = 0  # offsets in tstate
    lru: int = 0
    stats: int = 0  # accesses, misses
    mshr: int = 0


@dataclass
class Predictor:
    name: str
    entries: int
    history: int
    btb: int
    ras: int
    link: int
    btb_miss_penalty: int
    counters: int = 0
    state: int = 0  # global history, RAS depth
    stats: int = 0  # transfers, mispredicts, BTB misses
    btb_at: int = 0
    ras_at: int = 0


# the predictor's words: after `state` its history and RAS depth, after `stats` its counters
P_HIST, P_DEPTH = range(2)
P_BRANCHES, P_MISSES, P_BTB_MISSES = range(3)


def _value(spec: Spec, x: ir.Structure, name: str, default=None):
    e = x.get(name)
    if e is None:
        return default
    if isinstance(e, ir.Name) and e.id not in spec.params:
        return e.id  # a name: the next level, what a cache serves, the memory it caches
    return int(spec.params_eval(e))


def read(spec: Spec, reserve: Callable[..., int]) -> tuple[list[Cache], Optional[Predictor], int]:
    """The timing section's caches and predictor, their state reserved in tstate (`keep`: contents a
    warm reset keeps: tags, counters, targets; not statistics or cycle times); and the word that holds
    the current instruction's extra load latency (its data accesses' misses)."""
    t = spec.isa.timing
    if t is None or t.model not in ("inorder", "ooo"):
        return [], None, -1
    caches = []
    for x in t.caches:
        c = Cache(x.name, _value(spec, x, "sets"), _value(spec, x, "ways"), _value(spec, x, "line"),
                  _value(spec, x, "hit_latency"), _value(spec, x, "next"), _value(spec, x, "memory_latency", 0),
                  _value(spec, x, "mshrs", 0), _value(spec, x, "serves"), _value(spec, x, "storage"))
        c.tags = reserve(f"cache_{c.name}_tags", c.sets * c.ways, keep=True)
        c.lru = reserve(f"cache_{c.name}_lru", c.sets * c.ways, keep=True)
        c.stats = reserve(f"cache_{c.name}_stats", 2)
        if c.mshrs:
            c.mshr = reserve(f"cache_{c.name}_mshr", c.mshrs)
        caches.append(c)
    pred = None
    if t.predictors:
        x = t.predictors[0]
        pred = Predictor(x.name, _value(spec, x, "entries"), _value(spec, x, "history", 0), _value(spec, x, "btb", 0),
                         _value(spec, x, "ras", 0), _value(spec, x, "link", 1), _value(spec, x, "btb_miss_penalty", 0))
        pred.counters = reserve(f"predictor_{pred.name}_counters", 2 * pred.entries, keep=True)  # gshare, bimodal
        pred.state = reserve(f"predictor_{pred.name}_state", 2, keep=True)
        pred.stats = reserve(f"predictor_{pred.name}_stats", 3)
        pred.btb_at = reserve(f"predictor_{pred.name}_btb", 2 * pred.btb, keep=True) if pred.btb else 0
        pred.ras_at = reserve(f"predictor_{pred.name}_ras", pred.ras, keep=True) if pred.ras else 0
    extra = reserve("load_extra", 1) if caches else -1
    reserve("tick", 1, keep=True)
    return caches, pred, extra


def caches_c(caches: list[Cache], tick: int) -> list[str]:
    """One lookup function per cache: it fills the line on a miss (least recently used way) and
    returns the cycles the access takes beyond its own level's hit latency. Last levels first (C
    defines a level before the level above that misses to it)."""
    out = []
    by_name = {c.name: c for c in caches}
    for c in sorted(caches, key=lambda c: _depth(c, by_name)):
        shift = c.line.bit_length() - 1
        sshift = c.sets.bit_length() - 1
        if c.next is not None:
            nxt = by_name[c.next]
            miss = f"{max(nxt.latency - c.latency, 0)} + kc_cache_{nxt.name}(s, a)"
        else:
            miss = str(c.memory_latency)
        out += [f"/* cache {c.name}: {c.sets} sets x {c.ways} ways of {c.line}-byte lines, hit in {c.latency}; a miss "
                f"{'goes to ' + c.next if c.next else f'costs {c.memory_latency} more (memory)'} */",
                f"static uint64_t kc_cache_{c.name}(kc_s *restrict s, uint64_t a) {{",
                f"    uint64_t line = a >> {shift}, set = line & {c.sets - 1}, tag = (line >> {sshift}) + 1;",
                f"    uint64_t *tg = s->tstate + {c.tags} + set * {c.ways}, *lr = s->tstate + {c.lru} + set * {c.ways};",
                f"    uint64_t now = ++s->tstate[{tick}];",
                f"    s->tstate[{c.stats}]++;",
                "    int victim = 0;",
                f"    for (int w = 0; w < {c.ways}; w++) {{",
                "        if (tg[w] == tag) { lr[w] = now; return 0; }",
                "        if (lr[w] < lr[victim]) victim = w;",
                "    }",
                "    tg[victim] = tag; lr[victim] = now;",
                f"    s->tstate[{c.stats + 1}]++;",
                f"    return {miss};",
                "}"]
    return out


def _depth(c: Cache, by_name: dict) -> int:
    """How many levels lie below c (0: the last level)."""
    n = 0
    while c.next is not None:
        c = by_name[c.next]
        n += 1
    return n


def data_access_c(cache: Cache, extra: int) -> list[str]:
    """kc_daccess(s, address, is_store): a load or store of the cached memory; a load's misses raise the
    current instruction's extra latency (a store's are absorbed by the store buffer: it fills the line)."""
    return ["static inline void kc_daccess(kc_s *restrict s, uint64_t a, int store) {",
            "    if (s->untimed) return;",
            f"    uint64_t x = kc_cache_{cache.name}(s, a);",
            f"    if (!store && x > s->tstate[{extra}]) s->tstate[{extra}] = x;",
            "}"]


def predictor_c(p: Predictor, penalty: int) -> list[str]:
    """kc_predict(s, kind, pc, npc, next_pc): after a control transfer, whether it was mispredicted (1) or
    only its target was unknown to the BTB (the cycles of a fetch bubble, returned negated)."""
    hmask = (1 << p.history) - 1
    S = p.state
    btb = [f"    uint64_t *e = s->tstate + {p.btb_at} + 2 * ((pc >> 2) & {p.btb - 1});",
           "    uint64_t known = e[0] == pc + 1 ? e[1] : 0;",
           "    e[0] = pc + 1; e[1] = npc;"] if p.btb else ["    uint64_t known = 0;"]
    push = [f"    if (call) {{ uint64_t k = s->tstate[{S + P_DEPTH}]++; s->tstate[{p.ras_at} + k % {p.ras}] = next_pc; }}"] \
        if p.ras else []
    pop = ([f"    if (ret && s->tstate[{S + P_DEPTH}]) {{ uint64_t k = --s->tstate[{S + P_DEPTH}]; "
            f"guess = s->tstate[{p.ras_at} + k % {p.ras}]; }}"] if p.ras else [])
    return [
        f"/* predictor {p.name}: gshare over {p.entries} 2-bit counters and {p.history} bits of global history over a",
        f"   bimodal table of {p.entries} (the gshare entry predicts once trained: a one-table stand-in for TAGE), a",
        f"   {p.btb}-entry direct-mapped BTB, a {p.ras}-entry return-address stack. kind: 1 conditional branch,",
        "   2 direct jump, 3 indirect jump; call/ret: it links / it returns through the link register. Returns",
        "   1 for a mispredict, else the fetch bubble of a taken transfer whose target the BTB did not hold. */",
        "static int64_t kc_predict(kc_s *restrict s, int kind, int call, int ret, int taken, uint64_t pc, uint64_t npc, "
        "uint64_t next_pc) {",
        f"    s->tstate[{p.stats + P_BRANCHES}]++;",
        *btb,
        "    int miss = 0, bubble = 0;",
        "    if (kind == 1) {  /* counters are stored xor 2 (so 0, the reset value, is weakly taken); a gshare",
        "                         entry holds 4 once trained, until then the bimodal counter predicts */",
        f"        uint64_t h = s->tstate[{S + P_HIST}];",
        f"        uint64_t *g = s->tstate + {p.counters} + (((pc >> 2) ^ h) & {p.entries - 1});",
        f"        uint64_t *b = s->tstate + {p.counters + p.entries} + ((pc >> 2) & {p.entries - 1});",
        "        uint64_t gc = (*g & 3) ^ 2, bc = *b ^ 2;",
        "        int guess = (*g & 4 ? gc : bc) >= 2;",
        "        gc = taken ? (gc < 3 ? gc + 1 : 3) : (gc > 0 ? gc - 1 : 0);",
        "        bc = taken ? (bc < 3 ? bc + 1 : 3) : (bc > 0 ? bc - 1 : 0);",
        "        *g = 4 | (gc ^ 2); *b = bc ^ 2;",
        f"        s->tstate[{S + P_HIST}] = ((h << 1) | (uint64_t)taken) & {hmask};",
        "        miss = guess != taken;",
        "        if (!miss && taken && known != npc) bubble = 1;",
        "    } else if (kind == 2) {",
        "        if (known != npc) bubble = 1;",
        *["    " + x for x in push],
        "    } else {",
        "        uint64_t guess = known;",
        *["    " + x for x in pop],
        "        miss = guess != npc;",
        *["    " + x for x in push],
        "    }",
        f"    if (miss) {{ s->tstate[{p.stats + P_MISSES}]++; return 1; }}",
        f"    if (bubble) {{ s->tstate[{p.stats + P_BTB_MISSES}]++; return -(int64_t){p.btb_miss_penalty}; }}",
        "    return 0;",
        "}"]
