"""A small FTS5 table in memory, for a few thousand rows that must be searched often
(trigger entries: only they can ever fire, so searching the whole index for every
inbound message would be wasted work)."""

from __future__ import annotations

import threading
from collections.abc import Iterable

import sqlean as sqlite3


class MemoryFts:
    """``replace`` the rows (id, text), then ``search`` with an FTS5 match expression."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(":memory:", check_same_thread=False)
        self._conn.execute(
            "CREATE VIRTUAL TABLE t USING fts5(body, tokenize = 'unicode61 remove_diacritics 2')"
        )

    def replace(self, rows: Iterable[tuple[int, str]]) -> None:
        with self._lock:
            self._conn.execute("DELETE FROM t")
            self._conn.executemany("INSERT INTO t(rowid, body) VALUES (?, ?)", rows)

    def search(self, match: str, k: int) -> list[tuple[int, float]]:
        """(id, bm25 rank) best first; a match expression FTS5 rejects finds nothing."""
        with self._lock:
            try:
                rows = self._conn.execute(
                    "SELECT rowid, bm25(t) AS r FROM t WHERE t MATCH ? ORDER BY r LIMIT ?",
                    (match, k),
                ).fetchall()
            except sqlite3.OperationalError:
                return []
        return [(int(cid), float(r)) for cid, r in rows]

    def save(self, path: str) -> None:
        """Copy the table into a new database file at ``path`` (``VACUUM INTO``: the
        same rows, so the same ranks; a one-shot process reads it with :meth:`attach`)."""
        with self._lock:
            self._conn.commit()  # VACUUM runs outside a transaction
            self._conn.execute("PRAGMA synchronous = OFF")  # the caller syncs the copy once
            self._conn.execute("VACUUM INTO ?", (path,))

    @classmethod
    def attach(cls, conn: sqlite3.Connection) -> MemoryFts:
        """Search the table :meth:`save` wrote, through ``conn`` (opened on that file)."""
        fts = cls.__new__(cls)
        fts._lock, fts._conn = threading.Lock(), conn
        return fts


__all__ = ["MemoryFts"]
