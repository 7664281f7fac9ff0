"""The intents table in SQLite: ``intents.sqlite`` in the agent's state dir, never in
the derived index, so ``reverie index --force`` on a deleted index loses nothing (the
SQLite adapter of :class:`reverie.intents.port.IntentStore`).

Every change is one transaction; firings are recorded in the transaction that checks
them (R-INTENT-2). Times are stored as UTC ISO strings, which sort as they compare.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

import sqlean as sqlite3

from ...intents.model import Intent
from ...intents.port import Blocked, conditions, to_forget
from ...intents.rows import COLUMNS, from_row, to_row, utc
from .opener import open_sqlite

SCHEMA = """
CREATE TABLE IF NOT EXISTS intents (
    id TEXT PRIMARY KEY,
    kind TEXT NOT NULL CHECK (kind IN ('time', 'event', 'wish')),
    status TEXT NOT NULL CHECK (status IN ('pending', 'armed', 'done', 'expired', 'cancelled')),
    text TEXT NOT NULL,
    origin TEXT NOT NULL CHECK (origin IN ('owner', 'agent')),
    proposed_by TEXT NOT NULL,
    created TEXT NOT NULL,
    confirmed TEXT,
    ended TEXT,
    at TEXT,
    cron TEXT,
    tz TEXT NOT NULL DEFAULT '',
    triggers TEXT NOT NULL DEFAULT '[]',
    review_by TEXT,
    expires TEXT,
    cooldown_s REAL NOT NULL,
    budget INTEGER NOT NULL,
    fired INTEGER NOT NULL DEFAULT 0,
    last_fired TEXT,
    next_turn TEXT,
    next_notify TEXT
);
CREATE INDEX IF NOT EXISTS intents_status ON intents(status, kind);
CREATE TABLE IF NOT EXISTS firings (
    id INTEGER PRIMARY KEY,
    intent_id TEXT NOT NULL REFERENCES intents(id),
    at TEXT NOT NULL,
    channel TEXT NOT NULL CHECK (channel IN ('turn', 'notify')),
    detail TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS firings_intent ON firings(intent_id);
"""


class _Tx:
    """The writes of one SQLite transaction (:class:`~reverie.intents.port.IntentTx`)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def insert(self, intent: Intent) -> None:
        row = to_row(intent)
        marks = ", ".join("?" for _ in COLUMNS)
        self.conn.execute(
            f"INSERT INTO intents ({', '.join(COLUMNS)}) VALUES ({marks})", tuple(row.values())
        )

    def update(self, intent: Intent) -> None:
        row = to_row(intent)
        sets = ", ".join(f"{c} = ?" for c in COLUMNS[1:])
        self.conn.execute(
            f"UPDATE intents SET {sets} WHERE id = ?", (*list(row.values())[1:], intent.id)
        )

    def fired(self, intent_id: str, at: datetime, channel: str, detail: str) -> None:
        self.conn.execute(
            "INSERT INTO firings (intent_id, at, channel, detail) VALUES (?, ?, ?, ?)",
            (intent_id, utc(at), channel, detail),
        )

    def count(self, statuses: Sequence[str], kind: str | None = None) -> int:
        terms, args = conditions("?", statuses=statuses, kind=kind)
        sql = f"SELECT COUNT(*) FROM intents WHERE {' AND '.join(terms)}"
        return int(self.conn.execute(sql, args).fetchone()[0])

    def expire(self, now: str, stale: str) -> int:
        return int(
            self.conn.execute(
                "UPDATE intents SET status = 'expired', ended = ? WHERE (status = 'armed' "
                "AND expires IS NOT NULL AND expires <= ?) OR (status = 'pending' AND created <= ?)",
                (now, now, stale),
            ).rowcount
        )


class Store:
    """One connection, shared by a process's threads behind a lock
    (:class:`~reverie.intents.port.IntentStore` in the state dir)."""

    backend = "sqlite"

    def __init__(self, path: Path) -> None:
        self.path = path
        self.lock = threading.RLock()
        self.conn = open_sqlite(path, schema=SCHEMA)  # (its folder made as it is created)

    def close(self) -> None:
        with self.lock:
            self.conn.close()

    @contextmanager
    def transaction(self) -> Iterator[_Tx]:
        """One ``BEGIN IMMEDIATE`` transaction: all of it commits, or none."""
        with self.lock:
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                yield _Tx(self.conn)
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
            self.conn.execute("COMMIT")

    def version(self) -> int:
        """Changes when another connection committed (``PRAGMA data_version``)."""
        with self.lock:
            return int(self.conn.execute("PRAGMA data_version").fetchone()[0])

    def select(self, **where: Any) -> list[Intent]:
        terms, args = conditions("?", **where)
        cond = " AND ".join(terms) or "1"
        sql = f"SELECT {', '.join(COLUMNS)} FROM intents WHERE {cond} ORDER BY created, id"
        with self.lock:
            return [from_row(r) for r in self.conn.execute(sql, args).fetchall()]

    def firings(self, intent_id: str) -> list[tuple[str, str, str]]:
        with self.lock:
            rows = self.conn.execute(
                "SELECT at, channel, detail FROM firings WHERE intent_id = ? ORDER BY id",
                (intent_id,),
            ).fetchall()
        return [tuple(r) for r in rows]

    def forget(self, blocked: Blocked, *, dry_run: bool) -> int:
        with self.lock:
            rows = self.conn.execute("SELECT id, text, triggers FROM intents").fetchall()
            details = self.conn.execute("SELECT id, detail FROM firings").fetchall()
            gone, fired = to_forget(rows, details, blocked)
            if (gone or fired) and not dry_run:
                with self.transaction():
                    for i in gone:
                        self.conn.execute("DELETE FROM firings WHERE intent_id = ?", (i,))
                        self.conn.execute("DELETE FROM intents WHERE id = ?", (i,))
                    for f in fired:
                        self.conn.execute("UPDATE firings SET detail = '' WHERE id = ?", (f,))
        return len(gone)


__all__ = ["SCHEMA", "Store"]
