"""The recall log (R-RECALL-5): the short-term recall store that dreaming's signals
are made of, whichever backend holds it (its port: :mod:`.log_port`; SQLite:
:mod:`reverie.backends.sqlite.recall_log`, PostgreSQL:
:mod:`reverie.backends.postgres.recall_log`). Here is what both record alike: a
search's evidence rows (:func:`evidence`), the hits they keep (:func:`episodic`), the
stamps of one search and the rows as dreaming reads them (:func:`as_stats`).

Only hits on episodic chunks (journals, transcripts) are recorded: curated entries are
already long-term memory. Bounded as in SPEC section 8: per key at most 32 query
hashes, 16 recall days, 8 concept tags and an 800-char snippet.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from ..provenance.origin import Origin, SessionKind
from ..provenance.paths import SourceKind
from ..tokens import stem_set
from .evidence import MAX_CONCEPT_TAGS, MAX_SNIPPET_CHARS, RecallStats, concept_tags
from .search import Hit, SearchResponse

MAX_EVENTS = 200_000
EPISODIC = frozenset({SourceKind.JOURNAL, SourceKind.TRANSCRIPT})

# every column of a line's row, in the order a move carries it (the lists decoded)
STORE_COLUMNS = (
    "key, path, start_line, end_line, recall_count, total_score, max_score, first_recalled, "
    "last_recalled, query_hashes, recall_days, concept_tags, snippet, origin, session_kind, "
    "observed"
)

# the columns dreaming reads, in the order :func:`as_stats` takes them
COLUMNS = (
    "key, path, start_line, end_line, snippet, recall_count, total_score, max_score, "
    "query_hashes, recall_days, concept_tags, first_recalled, last_recalled, origin, "
    "session_kind, observed"
)


def focus_line(text: str, start_line: int, query: str) -> tuple[int, str]:
    """The line of a chunk that best matches the query (most shared tokens, first on a
    tie): the unit dreaming can promote. Chunk text lines map 1:1 to source lines."""
    q = stem_set(query)
    best, best_i, lines = -1.0, 0, text.split("\n")
    for i, line in enumerate(lines):
        toks = stem_set(line)
        if not toks:
            continue
        overlap = len(q & toks) / (len(toks) ** 0.5)
        if overlap > best:
            best, best_i = overlap, i
    return start_line + best_i, lines[best_i].strip()


def evidence(query: str, hits: Iterable[Hit], *, min_score: float) -> list[RecallHit]:
    """The evidence rows of one search: the best-matching line of each hit, scored by
    the retrieval's relevance before decay (recency is a signal of its own in
    dreaming). Below-min fallbacks and bare path matches are no evidence."""
    rows = []
    for h in hits:
        quality = h.relevance
        if h.explain.get("below_min_score") or quality < min_score:
            continue
        line, text = focus_line(h.text or h.snippet, h.chunk_start or h.start_line, query)
        rows.append(
            RecallHit(h.path, line, line, quality, text, h.origin, h.kind, h.session_kind, h.day)
        )
    return rows


def query_hash(query: str) -> str:
    norm = " ".join(query.lower().split())
    return hashlib.sha256(norm.encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class RecallHit:
    """One line a search retrieved, as the recall log records it."""

    path: str
    start_line: int
    end_line: int
    score: float
    snippet: str
    origin: Origin
    kind: SourceKind
    session_kind: SessionKind | None = None
    observed: date | None = None

    @property
    def key(self) -> str:
        return f"{self.path}:{self.start_line}:{self.end_line}"


def episodic(hits: Iterable[RecallHit]) -> list[RecallHit]:
    """The hits a recall log records: those on journals and transcripts."""
    return [h for h in hits if h.kind in EPISODIC]


def stamps(query: str, now: datetime) -> tuple[str, str, str]:
    """The query hash, day and timestamp one search's rows are recorded with."""
    return query_hash(query), now.date().isoformat(), now.isoformat(timespec="seconds")


def first_row(h: RecallHit, qh: str, day: str, ts: str) -> tuple[Any, ...]:
    """The ``recall_store`` row of a line's first recall, in :data:`STORE_COLUMNS` order
    (its three bounded lists as lists), on every backend."""
    snippet = h.snippet[:MAX_SNIPPET_CHARS]
    tags = list(concept_tags(snippet)[:MAX_CONCEPT_TAGS])
    kind = h.session_kind.value if h.session_kind else None
    observed = h.observed.isoformat() if h.observed else None
    first = (h.key, h.path, h.start_line, h.end_line, 1, h.score, h.score, ts, ts)
    return (*first, [qh], [day], tags, snippet, h.origin.value, kind, observed)


class Recording:
    """What both recall logs do alike: a search's evidence rows, recorded by the
    backend's :meth:`record`."""

    def record(self, query: str, hits: Iterable[RecallHit], *, now: datetime) -> int:
        raise NotImplementedError

    def record_search(self, response: SearchResponse, *, min_score: float, now: datetime) -> int:
        """Record what one search retrieved (its evidence rows, :func:`evidence`)."""
        rows = evidence(response.query, response.hits, min_score=min_score)
        return self.record(response.query, rows, now=now)


def as_stats(r: Sequence[Any]) -> RecallStats:
    """One ``recall_store`` row (its three lists decoded, the columns in :data:`COLUMNS`
    order) as dreaming reads it."""
    return RecallStats(
        key=r[0],
        path=r[1],
        start_line=r[2],
        end_line=r[3],
        snippet=r[4],
        recall_count=r[5],
        daily_count=0,
        grounded_count=0,
        total_score=r[6],
        max_score=r[7],
        query_hashes=frozenset(r[8]),
        recall_days=frozenset(date.fromisoformat(d) for d in r[9]),
        concept_tags=tuple(r[10]),
        first_recalled=datetime.fromisoformat(r[11]),
        last_recalled=datetime.fromisoformat(r[12]),
        origin=Origin.parse(r[13]),
        session_kind=SessionKind.parse(r[14]),
        observed=date.fromisoformat(r[15]) if r[15] else None,
    )


__all__ = [
    "COLUMNS",
    "EPISODIC",
    "MAX_EVENTS",
    "RecallHit",
    "as_stats",
    "episodic",
    "evidence",
    "first_row",
    "focus_line",
    "query_hash",
    "stamps",
]
