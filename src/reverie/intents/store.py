"""The intents table: SQLite in the agent's state dir (``intents.sqlite``), never in
the derived index, so ``reverie index --force`` on a deleted index loses nothing.

Every change is one transaction; firings are recorded in the transaction that checks
them (R-INTENT-2). Times are stored as UTC ISO strings, which sort as they compare.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime, tzinfo
from pathlib import Path
from typing import Any

import sqlean as sqlite3

from ..storage.sqlite_open import open_sqlite
from .model import Intent, Kind, Status
from .port import Blocked, conditions, to_forget

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

COLUMNS = [
    "id",
    "kind",
    "status",
    "text",
    "origin",
    "proposed_by",
    "created",
    "confirmed",
    "ended",
    "at",
    "cron",
    "tz",
    "triggers",
    "review_by",
    "expires",
    "cooldown_s",
    "budget",
    "fired",
    "last_fired",
    "next_turn",
    "next_notify",
]
_TIMES = {"created", "confirmed", "ended", "at", "review_by", "expires", "last_fired"}
_TIMES |= {"next_turn", "next_notify"}


def utc(moment: datetime | None) -> str | None:
    return None if moment is None else moment.astimezone(UTC).isoformat(timespec="seconds")


def stamp(moment: datetime) -> str:
    """``moment`` as stored (UTC, seconds)."""
    return utc(moment) or ""


def local(moment: datetime | None, zone: tzinfo) -> str:
    """``moment`` in ``zone``, to the minute, for people ("" for none)."""
    return moment.astimezone(zone).isoformat(timespec="minutes") if moment else ""


def _time(value: str | None) -> datetime | None:
    return None if value is None else datetime.fromisoformat(value)


def to_row(intent: Intent) -> dict[str, Any]:
    row: dict[str, Any] = {}
    for c in COLUMNS:
        v = getattr(intent, c)
        if c in _TIMES:
            v = utc(v)
        elif c == "triggers":
            v = json.dumps([list(t) for t in v], ensure_ascii=False)
        elif c in ("kind", "status"):
            v = v.value
        row[c] = v
    return row


def from_row(row: sqlite3.Row | tuple[Any, ...]) -> Intent:
    d = dict(zip(COLUMNS, row, strict=True))
    for c in _TIMES:
        d[c] = _time(d[c])
    d["triggers"] = tuple(tuple(t) for t in json.loads(d["triggers"]))
    d["kind"], d["status"] = Kind(d["kind"]), Status(d["status"])
    return Intent(**d)


class _Tx:
    """The writes of one SQLite transaction (:class:`~.port.IntentTx`)."""

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
        terms, args = conditions("?", statuses=statuses)
        if kind is not None:
            terms.append("kind = ?")
            args.append(kind)
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
    (:class:`~.port.IntentStore` in the state dir)."""

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


__all__ = ["COLUMNS", "Store", "from_row", "local", "stamp", "to_row", "utc"]
