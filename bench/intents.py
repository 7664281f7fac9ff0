"""Standing-intent cost per turn: the keyword prefilter plus the firing transaction.

One workspace (a MEMORY.md of 300 curated trigger entries, indexed), two engines on
it: one whose intents table holds ``--intents`` (256) armed event intents, each with
two triggers of two terms, and one with none. For every message, interleaved so that
load spikes hit both alike, it times the whole turn context (``engine.context``) of the
engine without intents (the baseline) and of the one with them, and the intent step
alone (``reverie.intents.add_intents``). A third of the messages fire an intent (with
cooldown 0 and an endless budget, so that every hit runs the write transaction: the
worst case), a third hold one term of a trigger only (prefilter candidates that fail
the match), a third none.

    python bench/intents.py [--intents 256] [--messages 600] [--backend sqlite|postgres]
        [--dsn DSN] [--out JSON]

``--backend postgres``: both engines on PostgreSQL (their own tenants; the intents
table, the index and the requests are rows there), on ``--dsn`` or an embedded server
started for the run.

Goal: the intent step adds p95 <= 1 ms to a turn context; printed beside the baseline
turn's p95 and as the ratio (turn with intents) / (turn without) at p50 and p95.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import percentile

from reverie.clock import Clock
from reverie.engine import Reverie
from reverie.intents import add_intents
from reverie.recall.context import TurnContext

SEED = 11
Sample = tuple[float, float]


def words(rng: random.Random, n: int) -> list[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    out: set[str] = set()
    while len(out) < n:
        out.add("".join(rng.choice(letters) for _ in range(rng.randint(5, 9))))
    return sorted(out)


def timed(fn: Callable[[], Any]) -> Sample:
    w, c = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - w, time.process_time() - c


def stats(samples: Sequence[Sample]) -> dict[str, float]:
    wall, cpu = [s[0] for s in samples], [s[1] for s in samples]
    return {
        "p50": round(1000 * percentile(wall, 50), 3),
        "p95": round(1000 * percentile(wall, 95), 3),
        "cpu_p95": round(1000 * percentile(cpu, 95), 3),
    }


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--intents", type=int, default=256)
    ap.add_argument("--messages", type=int, default=600)
    ap.add_argument("--backend", choices=("sqlite", "postgres"), default="sqlite")
    ap.add_argument("--dsn", help="PostgreSQL DSN (default: an embedded server for the run)")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    rng = random.Random(SEED)
    vocab = words(rng, 4000)
    base = Path(tempfile.mkdtemp(prefix="reverie-bench-intents-"))
    env = {"REVERIE_CONFIG": str(base / "none.toml")}
    if args.backend == "postgres":
        dsn = args.dsn
        if dsn is None:
            from reverie.backends.postgres.embedded import start

            dsn, _server = start(base / "pgdata", cleanup="delete")
        env.update(REVERIE_INDEX_BACKEND="postgres", REVERIE_INDEX_DSN=dsn)
    flags = {"intent_cooldown_hours": "0", "intent_budget": "100000000", "intent_timezone": "UTC"}
    clock = Clock()
    ws = base / "ws"
    engines = {}
    for name in ("without", "with"):
        own = {**env, "REVERIE_INDEX_TENANT": f"bench-{name}-{os.getpid()}"}
        e = Reverie.open(
            ws, base / f"state-{name}", environ=own, clock=clock, use_embedder=None, **flags
        )
        e.init()
        engines[name] = e
    entries = [
        f"- Entry {n}: {' '.join(rng.sample(vocab, 12))} <!-- trigger: {vocab[n]} {vocab[n + 1]} -->"
        for n in range(0, 600, 2)
    ]
    (ws / "MEMORY.md").write_text("# Long-term memory\n\n" + "\n".join(entries) + "\n")
    trig_terms = vocab[1000:]
    triggers = []
    for n in range(args.intents):
        a, b, c, d = trig_terms[4 * n : 4 * n + 4]
        triggers.append((a, b, c, d))
        engines["with"].intents.add(
            f"intent {n}", proposer="owner", proposed_by="bench", on=f"{a}, {b}; {c}, {d}"
        )
    for e in engines.values():
        e.index()
        e.warm()
    msgs = []
    for n in range(args.messages):
        filler = rng.sample(vocab[:1000], 14)
        a, b, c, d = triggers[rng.randrange(len(triggers))]
        if n % 3 == 0:
            filler += [a, b]  # fires
        elif n % 3 == 1:
            filler += [a, d]  # one term of each trigger: a candidate that does not match
        rng.shuffle(filler)
        msgs.append(" ".join(filler))
    for m in msgs[:30]:  # warm-up
        engines["without"].context(m)
        engines["with"].context(m)
    without: list[Sample] = []
    with_: list[Sample] = []
    step: list[Sample] = []
    fired = 0
    for n, m in enumerate(msgs):  # alternate which engine goes first: no order bias
        order = ("without", "with") if n % 2 else ("with", "without")
        got = {name: timed(lambda name=name, m=m: engines[name].context(m)) for name in order}
        without.append(got["without"])
        with_.append(got["with"])
        ctx = TurnContext(m, engines["with"].bootstrap())
        step.append(timed(lambda ctx=ctx: add_intents(ctx, engines["with"].intents)))
        fired += bool(ctx.intents)
    s_without, s_with, s_step = stats(without), stats(with_), stats(step)
    ratio = {p: round(s_with[p] / s_without[p], 3) for p in ("p50", "p95", "cpu_p95")}
    paired = [w[1] - o[1] for w, o in zip(with_, without, strict=True)]  # CPU, per message
    added_cpu_p95 = round(1000 * percentile(paired, 95), 3)
    ok = s_step["p95"] <= 1.0
    load = os.getloadavg()
    print(
        f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; {args.intents} armed intents "
        f"({args.backend})"
    )
    for label, st in (("without", s_without), ("with", s_with)):
        print(
            f"turn context {label:<7} intents: p50 {st['p50']} ms  p95 {st['p95']} ms  "
            f"(cpu p95 {st['cpu_p95']} ms)"
        )
    print(
        f"ratio with / without         : p50 x{ratio['p50']}  p95 x{ratio['p95']}  "
        f"cpu p95 x{ratio['cpu_p95']}; CPU added per message, p95: {added_cpu_p95} ms"
    )
    print(
        f"intent step (prefilter + transaction): p50 {s_step['p50']} ms  p95 {s_step['p95']} ms "
        f"(cpu p95 {s_step['cpu_p95']} ms); {fired}/{len(msgs)} messages fired an intent"
    )
    print(f"goal: the intent step adds p95 <= 1 ms: {'MET' if ok else 'NOT MET'}")
    result = {
        "intents": args.intents,
        "backend": args.backend,
        "messages": len(msgs),
        "fired": fired,
        "without": s_without,
        "with": s_with,
        "step": s_step,
        "ratio": ratio,
        "added_cpu_p95_ms": added_cpu_p95,
        "goal_met": ok,
        "load": load,
    }
    if args.out:
        args.out.write_text(json.dumps(result, indent=2) + "\n")
    for e in engines.values():
        e.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
