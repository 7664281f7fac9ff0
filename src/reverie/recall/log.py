"""The recall log (R-RECALL-5): the short-term recall store that dreaming's signals
are made of. It lives in the state dir (SQLite, WAL), not in the index, so rebuilding
the index never loses it; every update is one transaction, so concurrent searches from
several processes never lose an event.

Only hits on episodic chunks (journals, transcripts) are recorded: curated entries are
already long-term memory. Bounded as in SPEC section 8: per key at most 32 query
hashes, 16 recall days, 8 concept tags and an 800-char snippet.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Any

from ..provenance.origin import Origin, SessionKind
from ..provenance.paths import SourceKind
from ..storage.sqlite_open import open_sqlite, transaction
from ..tokens import stem_set
from .evidence import (
    MAX_CONCEPT_TAGS,
    MAX_QUERY_HASHES,
    MAX_RECALL_DAYS,
    MAX_SNIPPET_CHARS,
    RecallStats,
    concept_tags,
)
from .log_port import RecallRows
from .search import Hit, SearchResponse

MAX_EVENTS = 200_000
EPISODIC = frozenset({SourceKind.JOURNAL, SourceKind.TRANSCRIPT})

SCHEMA = """
CREATE TABLE IF NOT EXISTS recall_events (
    id INTEGER PRIMARY KEY,
    key TEXT NOT NULL,
    query_hash TEXT NOT NULL,
    score REAL NOT NULL,
    day TEXT NOT NULL,
    ts TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS recall_store (
    key TEXT PRIMARY KEY,
    path TEXT NOT NULL,
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    recall_count INTEGER NOT NULL,
    total_score REAL NOT NULL,
    max_score REAL NOT NULL,
    first_recalled TEXT NOT NULL,
    last_recalled TEXT NOT NULL,
    query_hashes TEXT NOT NULL,
    recall_days TEXT NOT NULL,
    concept_tags TEXT NOT NULL,
    snippet TEXT NOT NULL,
    origin TEXT NOT NULL,
    session_kind TEXT,
    observed TEXT
);
"""


# every column of a line's row, in the order a move carries it (the lists decoded)
STORE_COLUMNS = (
    "key, path, start_line, end_line, recall_count, total_score, max_score, first_recalled, "
    "last_recalled, query_hashes, recall_days, concept_tags, snippet, origin, session_kind, "
    "observed"
)
LISTS = slice(9, 12)  # query_hashes, recall_days, concept_tags in STORE_COLUMNS

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


class Recording:
    """What both recall logs do alike: a search's evidence rows, recorded by the
    backend's :meth:`record`."""

    def record(self, query: str, hits: Iterable[RecallHit], *, now: datetime) -> int:
        raise NotImplementedError

    def record_search(self, response: SearchResponse, *, min_score: float, now: datetime) -> int:
        """Record what one search retrieved (its evidence rows, :func:`evidence`)."""
        rows = evidence(response.query, response.hits, min_score=min_score)
        return self.record(response.query, rows, now=now)


class RecallLog(Recording):
    """:class:`~reverie.recall.log_port.RecallLogPort` in the state dir (SQLite, WAL, one
    transaction per search)."""

    backend = "sqlite"

    def __init__(self, path: Path) -> None:
        self._lock = threading.Lock()  # one connection, shared by a process's threads
        self.conn = open_sqlite(path, schema=SCHEMA)  # WAL, no fsync per search

    def close(self) -> None:
        self.conn.close()

    def record(self, query: str, hits: Iterable[RecallHit], *, now: datetime) -> int:
        """Record the episodic hits of one search. Returns how many were recorded."""
        rows = episodic(hits)
        if not rows:
            return 0
        qh, day, ts = stamps(query, now)
        with self._lock, transaction(self.conn):
            for h in rows:
                self.conn.execute(
                    "INSERT INTO recall_events(key, query_hash, score, day, ts) VALUES (?, ?, ?, ?, ?)",
                    (h.key, qh, h.score, day, ts),
                )
                self._aggregate(h, qh, day, ts)
            (count,) = self.conn.execute("SELECT count(*) FROM recall_events").fetchone()
            if count > MAX_EVENTS:
                self.conn.execute(
                    "DELETE FROM recall_events WHERE id IN (SELECT id FROM recall_events ORDER BY id LIMIT ?)",
                    (count - MAX_EVENTS,),
                )
        return len(rows)

    def _aggregate(self, h: RecallHit, qh: str, day: str, ts: str) -> None:
        row = self.conn.execute(
            "SELECT recall_count, total_score, max_score, query_hashes, recall_days, concept_tags "
            "FROM recall_store WHERE key = ?",
            (h.key,),
        ).fetchone()
        snippet = h.snippet[:MAX_SNIPPET_CHARS]
        if row is None:
            self.conn.execute(
                "INSERT INTO recall_store VALUES (?, ?, ?, ?, 1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    h.key,
                    h.path,
                    h.start_line,
                    h.end_line,
                    h.score,
                    h.score,
                    ts,
                    ts,
                    json.dumps([qh]),
                    json.dumps([day]),
                    json.dumps(list(concept_tags(snippet)[:MAX_CONCEPT_TAGS]), ensure_ascii=False),
                    snippet,
                    h.origin.value,
                    h.session_kind.value if h.session_kind else None,
                    h.observed.isoformat() if h.observed else None,
                ),
            )
            return
        count, total, best, qhs, days, _tags = row
        queries = _bounded(json.loads(qhs), qh, MAX_QUERY_HASHES)
        recall_days = _bounded(json.loads(days), day, MAX_RECALL_DAYS)
        self.conn.execute(
            "UPDATE recall_store SET recall_count = ?, total_score = ?, max_score = ?, last_recalled = ?, "
            "query_hashes = ?, recall_days = ?, snippet = ?, origin = ? WHERE key = ?",
            (
                count + 1,
                total + h.score,
                max(best, h.score),
                ts,
                json.dumps(queries),
                json.dumps(recall_days),
                snippet,
                h.origin.value,
                h.key,
            ),
        )

    def stats(self, keys: Sequence[str] | None = None) -> list[RecallStats]:
        """The aggregated store as dreaming reads it."""
        with self._lock:
            rows = self.conn.execute(
                f"SELECT {COLUMNS} FROM recall_store ORDER BY rowid"
            ).fetchall()
        wanted = set(keys) if keys is not None else None
        return [
            as_stats((*r[:8], *(json.loads(v) for v in r[8:11]), *r[11:]))
            for r in rows
            if wanted is None or r[0] in wanted
        ]

    def drop(self, match: Callable[[str, str], bool], *, dry_run: bool = False) -> list[str]:
        """Forget the signals of every row ``match(key, snippet)`` selects: its aggregate
        and every event of its key, in one transaction. Returns the keys."""
        with self._lock:
            rows = self.conn.execute("SELECT key, snippet FROM recall_store").fetchall()
            keys = [str(k) for k, snip in rows if match(str(k), str(snip))]
            if keys and not dry_run:
                with transaction(self.conn):
                    for k in keys:
                        self.conn.execute("DELETE FROM recall_store WHERE key = ?", (k,))
                        self.conn.execute("DELETE FROM recall_events WHERE key = ?", (k,))
        return keys

    def count_events(self) -> int:
        with self._lock:
            return int(self.conn.execute("SELECT count(*) FROM recall_events").fetchone()[0])

    def export(self) -> RecallRows:
        with self._lock:
            store = self.conn.execute(f"SELECT {STORE_COLUMNS} FROM recall_store ORDER BY rowid")
            rows = [(*r[:9], *(json.loads(v) for v in r[LISTS]), *r[12:]) for r in store]
            events = self.conn.execute(
                "SELECT key, query_hash, score, day, ts FROM recall_events ORDER BY id"
            ).fetchall()
        return RecallRows(rows, [tuple(e) for e in events])

    def adopt(self, rows: RecallRows) -> None:
        encoded = [
            (*r[:9], *(json.dumps(list(v), ensure_ascii=False) for v in r[LISTS]), *r[12:])
            for r in rows.store
        ]
        with self._lock, transaction(self.conn):
            self.conn.executemany(
                f"INSERT INTO recall_store ({STORE_COLUMNS}) VALUES ({', '.join('?' * 16)})",
                encoded,
            )
            self.conn.executemany(
                "INSERT INTO recall_events(key, query_hash, score, day, ts) VALUES (?, ?, ?, ?, ?)",
                rows.events,
            )

    def scrub(self) -> bool:
        """Nothing of its own: a forget rewrites every SQLite file of the state dir, this
        one included (:func:`reverie.curation.forget_stores.scrub_files`)."""
        return True


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


def _bounded(items: list[str], new: str, cap: int) -> list[str]:
    if new in items:
        return items
    items = [*items, new]
    return items[-cap:]


__all__ = [
    "COLUMNS",
    "EPISODIC",
    "MAX_EVENTS",
    "RecallHit",
    "RecallLog",
    "as_stats",
    "episodic",
    "evidence",
    "focus_line",
    "query_hash",
    "stamps",
]
