"""LongMemEval_S as dated journals, and LongMemEval's own retrieval metrics (pure code).

A question's haystack becomes one journal a day (``memory/YYYY-MM-DD.md``), its
sessions in time order, a blank line between two sessions of one day, each turn one
line ``- HH:MM user: text`` (the engine's own journal line shape; the turn's
whitespace folded). Where every turn and session landed is kept outside the text:
nothing in a file names a session id (the ids of evidence sessions say "answer").
"""

from __future__ import annotations

import gzip
import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

TYPES = (
    "single-session-user",
    "single-session-assistant",
    "single-session-preference",
    "multi-session",
    "knowledge-update",
    "temporal-reasoning",
)


def parse_date(text: str) -> datetime:
    """``2023/05/20 (Sat) 02:21`` as a naive datetime."""
    day, _, rest = text.partition(" (")
    clock = rest.partition(") ")[2]
    return datetime.strptime(f"{day} {clock}", "%Y/%m/%d %H:%M")


def load(path: Path, *, types: Sequence[str] = (), limit: int = 0) -> list[dict[str, Any]]:
    """The questions, filtered by type; ``limit`` takes them round-robin over the types
    (file order within a type), so a short run still covers every type."""
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh if line.strip()]
    if types:
        rows = [r for r in rows if r["question_type"] in types]
    if not limit or limit >= len(rows):
        return rows
    by_type: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        by_type.setdefault(r["question_type"], []).append(r)
    out: list[dict[str, Any]] = []
    queues = [list(reversed(v)) for v in by_type.values()]
    while len(out) < limit:
        for q in queues:
            if q and len(out) < limit:
                out.append(q.pop())
    return out


@dataclass
class Layout:
    files: dict[str, list[str]] = field(default_factory=dict)  # path -> lines
    turns: dict[str, tuple[str, int]] = field(default_factory=dict)  # turn id -> (path, line)
    sessions: dict[str, tuple[str, int, int]] = field(default_factory=dict)  # id -> span
    evidence_turns: list[str] = field(default_factory=list)  # turn ids with has_answer
    turn_text: dict[str, str] = field(default_factory=dict)  # turn id -> its line

    def text(self, path: str) -> str:
        return "\n".join(self.files[path]) + "\n"

    def where(self, path: str, start: int, end: int) -> tuple[list[str], list[str]]:
        """Sessions and turns (ids) whose lines a hit on ``path`` lines start..end covers."""
        sessions = [
            s for s, (p, a, b) in self.sessions.items() if p == path and a <= end and start <= b
        ]
        turns = [t for t, (p, ln) in self.turns.items() if p == path and start <= ln <= end]
        return sessions, turns


def turn_line(role: str, content: str, when: datetime) -> str:
    return f"- {when:%H:%M} {role}: {' '.join(str(content).split())}"


def build_layout(row: dict[str, Any]) -> Layout:
    layout = Layout()
    dates = [parse_date(d) for d in row["haystack_dates"]]
    order = sorted(range(len(dates)), key=lambda i: dates[i])
    for i in order:
        sid, when = str(row["haystack_session_ids"][i]), dates[i]
        path = f"memory/{when.date().isoformat()}.md"
        lines = layout.files.setdefault(path, [f"# {when.date().isoformat()}"])
        lines.append("")
        first = len(lines) + 1
        for j, turn in enumerate(row["haystack_sessions"][i]):
            tid = f"{sid}#{j}"
            lines.append(turn_line(turn["role"], turn["content"], when))
            layout.turns[tid] = (path, len(lines))
            layout.turn_text[tid] = lines[-1]
            if turn.get("has_answer"):
                layout.evidence_turns.append(tid)
        layout.sessions[sid] = (path, first, len(lines))
    return layout


def dedup(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


def ranked_ids(layout: Layout, hits: Iterable[tuple[str, int, int]]) -> tuple[list[str], list[str]]:
    """Session and turn ids in the order a ranked list of hits first reaches them."""
    sessions: list[str] = []
    turns: list[str] = []
    for path, start, end in hits:
        s, t = layout.where(path, start, end)
        sessions += s
        turns += t
    return dedup(sessions), dedup(turns)


def ndcg_any(ranked: Sequence[str], gold: set[str], k: int) -> float:
    """LongMemEval's ndcg@k: relevance 1 for a gold item, ideal = every gold item first."""
    dcg = sum(1.0 / math.log2(i + 2) for i, x in enumerate(ranked[:k]) if x in gold)
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(k, len(gold))))
    return dcg / ideal if ideal else 0.0


def retrieval_metrics(ranked: Sequence[str], gold: set[str], prefix: str) -> dict[str, float]:
    out: dict[str, float] = {}
    for k in (5, 10):
        top = set(ranked[:k])
        out[f"{prefix}any@{k}"] = float(bool(gold & top))
        out[f"{prefix}all@{k}"] = float(gold <= top)
    out[f"{prefix}ndcg@10"] = ndcg_any(ranked, gold, 10)
    return out


METRICS = (
    "s_any@5",
    "s_all@10",
    "s_ndcg@10",
    "t_any@5",
    "t_all@10",
    "t_ndcg@10",
    "budget",
)
HEADLINE = ("s_any@5", "s_all@10", "budget")
