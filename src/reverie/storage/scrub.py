"""Deleted rows leave no bytes behind: after a forget, every SQLite file of the state
dir is rewritten so that what was deleted is no longer anywhere in the file or its WAL.

A ``DELETE`` only unlinks a row: its bytes stay in the page's free space, on the free
list, in an FTS5 segment (FTS5 records a deletion as a new segment until the segments
are merged) and in old frames of the write-ahead log. :func:`scrub` merges every FTS5
table (``optimize``), rewrites the file (``VACUUM``: no free page, no free space left
in a page), then checkpoints and truncates the WAL. ``secure_delete`` is switched on
first, so the pages written on the way are zeroed where rows went.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import sqlean as sqlite3

CHECKPOINT_WAIT_MS = 5000  # a reader's snapshot past this: the next command checkpoints


def fts_tables(conn: sqlite3.Connection) -> list[str]:
    rows = conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL TABLE%'"
        " AND lower(sql) LIKE '%using fts5%'"
    ).fetchall()
    return [str(r[0]) for r in rows]


def scrub(conn: sqlite3.Connection) -> bool:
    """Rewrite the database of ``conn`` (no transaction open) without a byte of its
    deleted rows. True when the WAL was emptied too; False when another connection was
    reading it (the old bytes go at the next :func:`checkpoint`)."""
    conn.execute("PRAGMA secure_delete = ON")
    for table in fts_tables(conn):
        conn.execute(f'INSERT INTO "{table}"("{table}") VALUES (\'optimize\')')
    conn.execute("VACUUM")
    return checkpoint(conn)


def checkpoint(conn: sqlite3.Connection) -> bool:
    """Copy the WAL into the file and truncate it (True), unless a reader kept it."""
    mode = str(conn.execute("PRAGMA journal_mode").fetchone()[0]).lower()
    if mode != "wal":
        return True
    (wait,) = conn.execute("PRAGMA busy_timeout").fetchone()
    conn.execute(f"PRAGMA busy_timeout = {CHECKPOINT_WAIT_MS}")
    try:
        busy, _log, _done = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    finally:
        conn.execute(f"PRAGMA busy_timeout = {int(wait)}")
    return int(busy) == 0


def scrub_file(path: Path, *, vacuum: bool = True) -> bool:
    """:func:`scrub` of the SQLite file at ``path`` (True when there is none);
    ``vacuum=False``: only :func:`checkpoint` (the rewrite is done, its WAL was busy)."""
    if not path.is_file():
        return True
    conn = sqlite3.connect(str(path), timeout=30, isolation_level=None)
    try:
        conn.execute("PRAGMA busy_timeout = 30000")
        return scrub(conn) if vacuum else checkpoint(conn)
    finally:
        conn.close()


def discard(path: Path) -> None:
    """Remove a derived SQLite file with its WAL and shared-memory files."""
    for p in (path, Path(f"{path}-wal"), Path(f"{path}-shm"), Path(f"{path}-journal")):
        with contextlib.suppress(FileNotFoundError):
            p.unlink()


__all__ = ["checkpoint", "discard", "fts_tables", "scrub", "scrub_file"]
