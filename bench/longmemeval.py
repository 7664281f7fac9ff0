"""LongMemEval_S (development half), retrieval only: does recall find the sessions and
turns a question needs, and does the model read them within a budget?

Each question's haystack becomes its own workspace of dated journals (bench/_lme.py),
indexed with the engine's defaults, the clock at the question's date. Every question
but the abstention ones (``_abs``: nothing to find, as LongMemEval's own retrieval
evaluation skips them) is asked twice:

- ranked: ``Reverie.search(question, max_results=--depth)``; the hits, in rank order,
  give a ranked list of sessions and of turns, scored with LongMemEval's recall_any@k,
  recall_all@k (k = 5, 10) and ndcg_any@10 against ``answer_session_ids`` and the turns
  marked ``has_answer``;
- what the model reads: the default call with ``budget_tokens=2000``, framed snippets
  read in order while they fit; an evidence turn counts as read when its whole line is
  inside them (a turn longer than one chunk, cut into pieces by the engine: when a read
  hit covers its line).

Beside it, in the same run, a naive baseline over the raw turns (one line a turn, no
chunking, no decay): 0.7 x cosine of the shipped embedder + 0.3 x BM25 (bm25s), ranked
the same way and read whole within the same budget. Embedding those turns is also the
"embedder alone" figure that the index's CPU time is held against.

    python bench/longmemeval.py [--data ../shared/datasets/longmemeval/longmemeval-s-dev.jsonl.gz]
        [--limit N] [--types multi-session,...] [--jobs 2] [--cache-dir DIR] [--cold]
        [--set name=value ...] [--out r.json]

Built workspaces (and the baseline's turn vectors) are kept in ``--cache-dir``: a
re-run after a ranking change re-indexes nothing (the index's own incremental sync
finds every file current). ``--cold`` empties the cache first.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import shutil
import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from datetime import UTC
from pathlib import Path
from typing import Any

# one BLAS thread a worker, before numpy loads anywhere (each worker is one core)
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
DATA = HERE.parent.parent / "shared" / "datasets" / "longmemeval" / "longmemeval-s-dev.jsonl.gz"
BUDGET = 2000

_state: dict[str, Any] = {}


def _worker_init(sets: dict[str, str], depth: int) -> None:
    """One embedder a worker process, one BLAS thread (each worker is one core)."""
    from reverie.settings import load_settings
    from reverie.storage.embedders.factory import make_embedder

    settings = load_settings(dict(sets), environ={})
    _state["sets"], _state["depth"] = sets, depth
    _state["embedder"] = make_embedder(settings)
    if _state["embedder"] is not None:
        _state["embedder"].embed_documents(["warm-up"])  # load the model outside the timings


def _cpu() -> float:
    return time.process_time()


def _naive_vectors(embedder: Any, lines: list[str], cache: Path) -> tuple[Any, float]:
    """The raw turns' vectors (cached); the CPU seconds the embedder alone spent (0 when
    read from the cache)."""
    import numpy as np

    if cache.is_file():
        return np.load(cache), 0.0
    t = _cpu()
    vecs = np.asarray(embedder.embed_documents(lines), dtype=np.float32)
    spent = _cpu() - t
    np.save(cache, vecs)
    return vecs, spent


def run_question(row: dict[str, Any], cache_dir: str) -> dict[str, Any]:
    """Build (or reuse) the question's workspace, index it, ask it; the figures."""
    from _agentview import NaiveBaseline, found, read_within
    from _lme import build_layout, parse_date, ranked_ids, retrieval_metrics

    from reverie.clock import Clock
    from reverie.engine import Reverie

    layout = build_layout(row)
    base = Path(cache_dir) / str(row["question_id"])
    ws, state = base / "workspace", base / "state"
    now = parse_date(row["question_date"]).replace(tzinfo=UTC)
    engine = Reverie.open(
        ws, state, clock=Clock(now), use_embedder=_state["embedder"], environ={}, **_state["sets"]
    )
    out: dict[str, Any] = {"id": row["question_id"], "type": row["question_type"]}
    fresh = not (base / "built").is_file()
    if fresh:
        shutil.rmtree(base, ignore_errors=True)
        engine.init()
        for rel in layout.files:
            target = ws / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(layout.text(rel), encoding="utf-8")
    t_cpu, t_wall = _cpu(), time.perf_counter()
    stats = engine.index()
    out["index_cpu"], out["index_wall"] = _cpu() - t_cpu, time.perf_counter() - t_wall
    out["fresh"], out["chunks"] = fresh, stats.chunks_written
    (base / "built").write_text("1")
    out["chars"] = sum(len(x) for lines in layout.files.values() for x in lines)

    turn_ids = list(layout.turn_text)
    lines = [layout.turn_text[t] for t in turn_ids]
    vecs, embed_cpu = _naive_vectors(_state["embedder"], lines, base / "naive.npy")
    out["embed_cpu"] = embed_cpu
    if row["question_id"].endswith("_abs") or not layout.evidence_turns:
        engine.close()
        out["skipped"] = True
        return out
    question = str(row["question"])
    gold_s = {str(s) for s in row["answer_session_ids"]}
    gold_t = set(layout.evidence_turns)
    t_q = _cpu()
    resp = engine.search(question, max_results=_state["depth"], record=False)
    sess, turns = ranked_ids(layout, ((h.path, h.start_line, h.end_line) for h in resp.hits))
    ours = {**retrieval_metrics(sess, gold_s, "s_"), **retrieval_metrics(turns, gold_t, "t_")}
    view = engine.search(question, budget_tokens=BUDGET, record=False)
    out["search_cpu"] = _cpu() - t_q
    ours["budget"] = _read_share(view.hits, layout, gold_t, engine.settings.chunk_tokens)
    engine.close()

    order = NaiveBaseline(lines, _state["embedder"], vecs).order(question)
    n_turns = [turn_ids[i] for i in order]
    n_sess = list(dict.fromkeys(t.split("#")[0] for t in n_turns))
    base_m = {**retrieval_metrics(n_sess, gold_s, "s_"), **retrieval_metrics(n_turns, gold_t, "t_")}
    base_m["budget"] = found(
        read_within([lines[i] for i in order], BUDGET), [layout.turn_text[t] for t in gold_t]
    )
    out["ours"], out["naive"] = ours, base_m
    return out


def _read_share(hits: Sequence[Any], layout: Any, gold: set[str], piece_tokens: int) -> float:
    """Share of evidence turns the model reads in the framed snippets that fit BUDGET:
    a turn's whole line inside them, or, for a turn longer than a chunk (indexed as
    pieces of ``piece_tokens``), a read hit on its line."""
    from _agentview import found, read_within

    from reverie.tokens import count_tokens

    read, used = [], 0
    for h in hits:
        cost = count_tokens(h.framed)
        if used + cost > BUDGET:
            break
        used += cost
        read.append(h)
    text = read_within([h.framed for h in read], BUDGET)
    got = 0
    for tid in gold:
        line = layout.turn_text[tid]
        path, ln = layout.turns[tid]
        if found(text, [line]) or (
            count_tokens(line) > piece_tokens
            and any(h.path == path and h.start_line <= ln <= h.end_line for h in read)
        ):
            got += 1
    return got / len(gold)


def summarise(results: list[dict[str, Any]]) -> dict[str, dict[str, dict[str, float]]]:
    from _lme import METRICS

    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in results:
        if not r.get("skipped"):
            groups[r["type"]].append(r)
            groups["overall"].append(r)
    out: dict[str, dict[str, dict[str, float]]] = {}
    for name, rows in groups.items():
        out[name] = {
            side: {m: sum(r[side][m] for r in rows) / len(rows) for m in METRICS}
            for side in ("ours", "naive")
        }
        out[name]["n"] = {"questions": float(len(rows))}
    return out


def render(summary: dict[str, Any]) -> list[str]:
    from _lme import METRICS, TYPES

    head = f"{'type':<26} {'n':>4} | " + " ".join(f"{m:>9}" for m in METRICS)
    lines = [head, "-" * len(head)]
    for name in [*TYPES, "overall"]:
        if name not in summary:
            continue
        row = summary[name]
        n = int(row["n"]["questions"])
        lines.append(f"{name:<26} {n:>4} | " + " ".join(f"{row['ours'][m]:9.3f}" for m in METRICS))
        lines.append(
            f"{'  naive':<26} {'':>4} | " + " ".join(f"{row['naive'][m]:9.3f}" for m in METRICS)
        )
    return lines


def goals(summary: dict[str, Any]) -> list[str]:
    o = summary.get("overall", {}).get("ours", {})
    behind = [
        f"{name} {m}"
        for name, row in summary.items()
        for m in ("s_any@5", "budget")
        if name != "overall" and row["ours"][m] + 1e-9 < row["naive"][m]
    ]

    def met(ok: bool) -> str:
        return "MET" if ok else "MISSED"

    return [
        f"session recall_any@5 {o.get('s_any@5', 0):.3f} >= 0.95: {met(o.get('s_any@5', 0) >= 0.95)}",
        f"session recall_all@10 {o.get('s_all@10', 0):.3f} >= 0.90: {met(o.get('s_all@10', 0) >= 0.90)}",
        f"budget share {o.get('budget', 0):.3f} >= 0.85: {met(o.get('budget', 0) >= 0.85)}",
        "every type >= naive (recall_any@5, budget): "
        + ("MET" if not behind else "MISSED " + ", ".join(behind)),
    ]


def main(argv: Sequence[str] | None = None) -> int:
    from _common import add_set_option, parse_sets
    from _lme import load

    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--limit", type=int, default=0, help="questions, round-robin over types [all]")
    ap.add_argument("--types", default="", help="comma-separated question types [all]")
    ap.add_argument(
        "--jobs", type=int, default=os.cpu_count() or 1, help="worker processes [cores]"
    )
    ap.add_argument("--depth", type=int, default=50, help="max_results of the ranked search [50]")
    ap.add_argument("--cache-dir", type=Path, default=Path("/tmp/reverie-bench-lme"))
    ap.add_argument("--cold", action="store_true", help="empty the cache first")
    ap.add_argument("--out", type=Path)
    add_set_option(ap, "A setting passed to Reverie.open (repeatable).")
    args = ap.parse_args(argv)
    sets = parse_sets(args.sets)
    rows = load(args.data, types=[t for t in args.types.split(",") if t], limit=args.limit)
    cache = args.cache_dir  # one cache: the index's own sync redoes what a setting changes
    if args.cold:
        shutil.rmtree(cache, ignore_errors=True)
    cache.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    results: list[dict[str, Any]] = []
    with ProcessPoolExecutor(
        args.jobs,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=_worker_init,
        initargs=(sets, args.depth),
    ) as pool:
        futures = [pool.submit(run_question, r, str(cache)) for r in rows]
        for i, fut in enumerate(futures, 1):
            res = fut.result()
            results.append(res)
            print(
                f"[{i}/{len(rows)}] {res['id']} {res['type']}: index {res['index_cpu']:.1f} s CPU "
                f"({'built' if res['fresh'] else 'cached'}), embedder alone {res['embed_cpu']:.1f} s",
                file=sys.stderr,
                flush=True,
            )
    wall = time.perf_counter() - t0
    summary = summarise(results)
    print(
        f"LongMemEval_S dev: {len(rows)} questions ({sum(1 for r in results if r.get('skipped'))} "
        f"abstention or no evidence, skipped), sets {sets or 'defaults'}, {args.jobs} jobs"
    )
    print("\n".join(render(summary)))
    built = [r for r in results if r["fresh"] and r["embed_cpu"] > 0]
    if built:
        idx = sum(r["index_cpu"] for r in built)
        emb = sum(r["embed_cpu"] for r in built)
        chars = sum(r["chars"] for r in built)
        print(
            f"\nindex: {len(built)} haystacks built, {chars / idx:,.0f} chars per CPU second; "
            f"index CPU / embedder alone CPU = {idx / emb:.2f} (goal <= 1.2)"
        )
    searches = [r["search_cpu"] for r in results if "search_cpu" in r]
    if searches:
        print(f"search: {1000 * sum(searches) / len(searches) / 2:.0f} ms CPU per search")
    print(f"wall {wall:.0f} s (goal for the full cold run: < 1800 s)")
    for line in goals(summary):
        print(line)
    if args.out:
        args.out.write_text(
            json.dumps({"summary": summary, "results": results, "wall": wall}, indent=1)
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
