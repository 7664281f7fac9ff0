"""The recall log in the state dir (``recall.sqlite``, WAL): the SQLite adapter of
:class:`reverie.recall.log_port.RecallLogPort`. It lives beside the index, not in it,
so rebuilding the index never loses it; every update is one transaction, so concurrent
searches from several processes never lose an event. The rows and bounds are those of
:mod:`reverie.recall.log`; the three bounded lists are stored as JSON.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from ...recall import log
from ...recall.evidence import MAX_QUERY_HASHES, MAX_RECALL_DAYS, MAX_SNIPPET_CHARS, RecallStats
from ...recall.log import COLUMNS, STORE_COLUMNS, RecallHit, Recording
from ...recall.log_port import RecallRows
from .opener import open_sqlite, transaction

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
LISTS = slice(9, 12)  # query_hashes, recall_days, concept_tags in STORE_COLUMNS


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
        rows = log.episodic(hits)
        if not rows:
            return 0
        qh, day, ts = log.stamps(query, now)
        with self._lock, transaction(self.conn):
            for h in rows:
                self.conn.execute(
                    "INSERT INTO recall_events(key, query_hash, score, day, ts) VALUES (?, ?, ?, ?, ?)",
                    (h.key, qh, h.score, day, ts),
                )
                self._aggregate(h, qh, day, ts)
            (count,) = self.conn.execute("SELECT count(*) FROM recall_events").fetchone()
            if count > log.MAX_EVENTS:
                self.conn.execute(
                    "DELETE FROM recall_events WHERE id IN (SELECT id FROM recall_events ORDER BY id LIMIT ?)",
                    (count - log.MAX_EVENTS,),
                )
        return len(rows)

    def _aggregate(self, h: RecallHit, qh: str, day: str, ts: str) -> None:
        row = self.conn.execute(
            "SELECT recall_count, total_score, max_score, query_hashes, recall_days, concept_tags "
            "FROM recall_store WHERE key = ?",
            (h.key,),
        ).fetchone()
        if row is None:
            self.conn.execute(
                f"INSERT INTO recall_store ({STORE_COLUMNS}) VALUES ({', '.join('?' * 16)})",
                _encoded(log.first_row(h, qh, day, ts)),
            )
            return
        snippet = h.snippet[:MAX_SNIPPET_CHARS]
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
            log.as_stats((*r[:8], *(json.loads(v) for v in r[8:11]), *r[11:]))
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
        with self._lock, transaction(self.conn):
            self.conn.executemany(
                f"INSERT INTO recall_store ({STORE_COLUMNS}) VALUES ({', '.join('?' * 16)})",
                [_encoded(r) for r in rows.store],
            )
            self.conn.executemany(
                "INSERT INTO recall_events(key, query_hash, score, day, ts) VALUES (?, ?, ?, ?, ?)",
                rows.events,
            )

    def scrub(self) -> bool:
        """Nothing of its own: a forget rewrites every SQLite file of the state dir, this
        one included (:func:`reverie.curation.forget_stores.scrub_files`)."""
        return True


def _encoded(r: Sequence[Any]) -> tuple[Any, ...]:
    """A ``recall_store`` row in :data:`STORE_COLUMNS` order, its lists as JSON."""
    return (*r[:9], *(json.dumps(list(v), ensure_ascii=False) for v in r[LISTS]), *r[12:])


def _bounded(items: list[str], new: str, cap: int) -> list[str]:
    if new in items:
        return items
    items = [*items, new]
    return items[-cap:]


__all__ = ["SCHEMA", "RecallLog"]
