"""SQLite adapter: connection, schema and migrations (R-STORE-1..6).

Driver: ``sqlean.py``, a drop-in DB-API module whose SQLite has FTS5 and can load
extensions on Linux, macOS and Windows (the stdlib ``sqlite3`` here cannot), so
``sqlite-vec`` loads everywhere. Schema changes bump ``PRAGMA user_version``; an index
from another version is simply rebuilt from the files (the index is disposable).
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import Any

import sqlean as sqlite3

from ...errors import IndexUnusable
from .opener import open_sqlite, transaction

SCHEMA_VERSION = 4
Connection = sqlite3.Connection  # the type callers hold, without importing the driver
DatabaseError = sqlite3.DatabaseError  # what the driver raises (corrupt, full, locked)

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
-- R-STORE-1 source registry
CREATE TABLE IF NOT EXISTS sources (
    path TEXT PRIMARY KEY,
    hash TEXT NOT NULL,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    kind TEXT NOT NULL,
    day TEXT,
    generation INTEGER NOT NULL,
    chunks INTEGER NOT NULL,
    indexed_at TEXT NOT NULL
);
-- R-STORE-2 chunks: the unit of retrieval, pointing back to exact lines
CREATE TABLE IF NOT EXISTS chunks (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL,
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    part INTEGER NOT NULL DEFAULT 0,
    text TEXT NOT NULL,
    text_hash TEXT NOT NULL,
    kind TEXT NOT NULL,
    day TEXT,
    has_vector INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS chunks_path ON chunks(path);
CREATE INDEX IF NOT EXISTS chunks_novec ON chunks(has_vector) WHERE has_vector = 0;
-- R-STORE-3 keyword entry: stemmed words, CJK split into single characters
-- (reverie.tokens.keyword_body, since schema 4)
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(
    body, tokenize = 'unicode61 remove_diacritics 2'
);
-- R-STORE-5 ranking notes and provenance, keyed by chunk id
CREATE TABLE IF NOT EXISTS notes (
    chunk_id INTEGER PRIMARY KEY REFERENCES chunks(id) ON DELETE CASCADE,
    importance INTEGER,
    triggers TEXT NOT NULL DEFAULT '[]',
    projects TEXT NOT NULL DEFAULT '[]'
);
CREATE TABLE IF NOT EXISTS provenance (
    chunk_id INTEGER PRIMARY KEY REFERENCES chunks(id) ON DELETE CASCADE,
    origin TEXT NOT NULL CHECK (origin IN ('owner', 'agent', 'untrusted', 'system')),
    session_kind TEXT,
    source TEXT NOT NULL
);
-- version links (issue 38): the earlier line (path@hash) a chunk's line replaces,
-- from its signed origin marker
CREATE TABLE IF NOT EXISTS links (
    chunk_id INTEGER NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,
    line INTEGER NOT NULL,
    target TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS links_target ON links(target);
-- R-STORE-6 embedding cache
CREATE TABLE IF NOT EXISTS embed_cache (
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    pkey TEXT NOT NULL,
    hash TEXT NOT NULL,
    vec BLOB NOT NULL,
    used INTEGER NOT NULL,
    PRIMARY KEY (provider, model, pkey, hash)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS embed_cache_used ON embed_cache(used);
"""
# what SCHEMA creates (each statement is CREATE ... IF NOT EXISTS name)
_OBJECTS = [
    part.split("IF NOT EXISTS", 1)[1].split()[0]
    for part in SCHEMA.split(";")
    if "IF NOT EXISTS" in part
]


def _vec_extension() -> str:
    """The sqlite-vec loadable extension, found without importing the ``sqlite_vec``
    package (whose import pulls in numpy: a one-shot hook should not pay for that)."""
    spec = importlib.util.find_spec("sqlite_vec")
    if spec is None or spec.origin is None:
        raise IndexUnusable("the sqlite-vec package is not installed")
    return os.path.normpath(os.path.join(os.path.dirname(spec.origin), "vec0"))


def connect(path: Path | str, *, readonly: bool = False) -> sqlite3.Connection:
    """Open the index (:func:`reverie.backends.sqlite.opener.open_sqlite`) with foreign
    keys and sqlite-vec loaded."""
    try:
        return open_sqlite(path, readonly=readonly, extension=_vec_extension(), foreign_keys=True)
    except sqlite3.Error as exc:
        raise IndexUnusable(f"{path}: cannot open the index: {exc}") from None


def user_version(conn: sqlite3.Connection) -> int:
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def ensure_schema(conn: sqlite3.Connection) -> bool:
    """Create or migrate the schema. Returns True when the index had to be reset
    (another schema version): the caller then rebuilds it from the files."""
    version = user_version(conn)
    if version == SCHEMA_VERSION:
        have = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
        if all(name in have for name in _OBJECTS):
            return False  # nothing to create: no write (a one-shot hook only reads)
    reset = False
    if version == 3:  # 3 -> 4: the keyword entry holds stems; the rest is unchanged
        _restem(conn)
    elif version not in (0, SCHEMA_VERSION):
        reset = True
        with transaction(conn):
            tables = [
                r[0]
                for r in conn.execute(
                    "SELECT name FROM sqlite_master WHERE type IN ('table') "
                    "AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '%fts_%' "
                    "AND name NOT LIKE 'vec_chunks_%'"
                )
            ]
            for table in tables:
                conn.execute(f'DROP TABLE IF EXISTS "{table}"')
    with transaction(conn):
        for statement in SCHEMA.split(";"):
            if statement.strip():
                conn.execute(statement)
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    return reset


def _restem(conn: sqlite3.Connection) -> None:
    """Schema 3 -> 4 in one transaction: the FTS rows rewritten from the chunks' own
    text (stemmed), vectors and everything else kept; the index version moves on so a
    warm keyword lane reloads."""
    from ...tokens import keyword_body

    with transaction(conn):
        rows = conn.execute("SELECT id, text FROM chunks").fetchall()
        conn.execute("DELETE FROM chunks_fts")
        conn.executemany(
            "INSERT INTO chunks_fts(rowid, body) VALUES (?, ?)",
            ((int(cid), keyword_body(str(text))) for cid, text in rows),
        )
        bump = int(get_meta(conn, "index_version", "0") or 0) + 1
        set_meta(conn, "index_version", str(bump))
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")


def get_meta(conn: sqlite3.Connection, key: str, default: str | None = None) -> str | None:
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return row[0] if row else default


def index_version(conn: sqlite3.Connection) -> str:
    """The index's version counter (moves on with every change to its rows)."""
    return get_meta(conn, "index_version", "0") or "0"


def set_meta(conn: sqlite3.Connection, key: str, value: Any) -> None:
    conn.execute(
        "INSERT INTO meta(key, value) VALUES (?, ?) "
        "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        (key, str(value)),
    )


def vec_table_dims(conn: sqlite3.Connection) -> int | None:
    value = get_meta(conn, "vec_dims")
    return int(value) if value else None


def create_vec_table(conn: sqlite3.Connection, dims: int) -> None:
    """(Re)create the vector table for ``dims``; called inside a transaction."""
    conn.execute("DROP TABLE IF EXISTS vec_chunks")
    conn.execute(
        f"CREATE VIRTUAL TABLE vec_chunks USING vec0(embedding float[{int(dims)}] distance_metric=cosine)"
    )
    conn.execute("UPDATE chunks SET has_vector = 0")
    set_meta(conn, "vec_dims", dims)


__all__ = [
    "SCHEMA_VERSION",
    "Connection",
    "DatabaseError",
    "connect",
    "create_vec_table",
    "ensure_schema",
    "get_meta",
    "index_version",
    "set_meta",
    "transaction",
    "user_version",
]
