"""The one way Reverie opens a SQLite file of its own (the index, the recall log, the
intents store): autocommit (transactions are explicit, :func:`transaction`), a 30 s
busy timeout, WAL and ``synchronous = NORMAL`` (no fsync per write; WAL stays
consistent, and a power cut may lose the last few writes, never corrupt the file).

A store that creates its tables on open (``schema``) does so under a file lock beside
the file: switching a new file to WAL needs an exclusive lock that ``busy_timeout``
does not wait for, so two processes opening a new file at once would otherwise fail.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import sqlean as sqlite3

from ...storage.workspace import lock_beside

BUSY_TIMEOUT_MS = 30_000


@contextlib.contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """One explicit transaction: everything inside commits together or not at all."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    else:
        conn.execute("COMMIT")


def open_sqlite(
    path: Path | str,
    *,
    readonly: bool = False,
    extension: str | None = None,
    foreign_keys: bool = False,
    schema: str | None = None,
) -> sqlite3.Connection:
    """``path`` opened as the module doc says (``readonly``: never written, never
    switched to WAL; ``extension``: a loadable extension to load; ``schema``: the
    ``;``-separated statements that create the tables, run in one transaction)."""
    if schema is not None:
        from filelock import FileLock  # (only here: a one-shot hook opens the index alone)

        Path(path).parent.mkdir(parents=True, exist_ok=True)
        with FileLock(str(lock_beside(Path(path))), timeout=60):
            conn = open_sqlite(path, extension=extension, foreign_keys=foreign_keys)
            with transaction(conn):
                for statement in schema.split(";"):
                    if statement.strip():
                        conn.execute(statement)
            return conn
    target = f"file:{path}?mode=ro" if readonly else str(path)
    conn = sqlite3.connect(target, uri=readonly, timeout=30, check_same_thread=False)
    conn.isolation_level = None  # transactions are explicit
    if extension is not None:
        conn.enable_load_extension(True)
        conn.load_extension(extension)
        conn.enable_load_extension(False)
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    if not readonly:
        conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    if foreign_keys:
        conn.execute("PRAGMA foreign_keys = ON")
    return conn


__all__ = ["BUSY_TIMEOUT_MS", "open_sqlite", "transaction"]
