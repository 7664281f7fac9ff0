"""Row writes of the index: every INSERT, UPDATE and DELETE the sync makes, in one place.

Each function runs inside the caller's transaction (the sync writes one file's chunks,
FTS rows, vectors, both side tables and its registry row together or not at all,
SPEC 2.3 step 7).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import sqlean as sqlite3

from ...storage.chunking import Chunk
from ...storage.index.rows import SourceRow
from ...tokens import keyword_body
from .db import get_meta, set_meta, transaction

if TYPE_CHECKING:
    import numpy as np
else:
    from ...storage.lazy import numpy as np  # loaded on first use


def delete_rows(conn: sqlite3.Connection, path: str, *, has_vec_table: bool) -> None:
    """Every chunk of ``path`` with its FTS row and vector (side tables cascade)."""
    # delete by rowid one at a time: neither FTS5 nor vec0 pushes "rowid IN
    # (subquery)" down, so that form scans the whole table once per file
    ids = [(r[0],) for r in conn.execute("SELECT id FROM chunks WHERE path = ?", (path,))]
    if not ids:
        return
    conn.executemany("DELETE FROM chunks_fts WHERE rowid = ?", ids)
    if has_vec_table:
        conn.executemany("DELETE FROM vec_chunks WHERE rowid = ?", ids)
    conn.execute("DELETE FROM chunks WHERE path = ?", (path,))


def delete_file(conn: sqlite3.Connection, path: str, *, has_vec_table: bool) -> None:
    """A file that is gone: its rows and its registry entry."""
    delete_rows(conn, path, has_vec_table=has_vec_table)
    conn.execute("DELETE FROM sources WHERE path = ?", (path,))


def write_file(
    conn: sqlite3.Connection,
    chunks: Sequence[Chunk],
    vectors: Iterable[np.ndarray | None],
    source: SourceRow,
    *,
    has_vec_table: bool,
) -> None:
    """Replace the rows of file ``source.path`` with ``chunks`` (and their vectors)."""
    rel, kind, day = source.path, source.kind, source.day
    delete_rows(conn, rel, has_vec_table=has_vec_table)
    for chunk, vec in zip(chunks, vectors, strict=True):
        cur = conn.execute(
            "INSERT INTO chunks(path, start_line, end_line, part, text, text_hash, kind, day, has_vector) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                rel,
                chunk.start_line,
                chunk.end_line,
                chunk.part,
                chunk.text,
                hashlib.sha256(chunk.text.encode()).hexdigest(),
                kind,
                day,
                int(vec is not None and has_vec_table),
            ),
        )
        cid = cur.lastrowid
        conn.execute(
            "INSERT INTO chunks_fts(rowid, body) VALUES (?, ?)", (cid, keyword_body(chunk.text))
        )
        if vec is not None and has_vec_table:
            conn.execute(
                "INSERT INTO vec_chunks(rowid, embedding) VALUES (?, ?)",
                (cid, np.asarray(vec, np.float32).tobytes()),
            )
        t = chunk.trailers
        conn.execute(
            "INSERT INTO notes(chunk_id, importance, triggers, projects) VALUES (?, ?, ?, ?)",
            (
                cid,
                t.importance,
                json.dumps(list(t.triggers), ensure_ascii=False),
                json.dumps(list(t.projects), ensure_ascii=False),
            ),
        )
        conn.executemany(
            "INSERT INTO links(chunk_id, line, target) VALUES (?, ?, ?)",
            [(cid, line, target) for line, target in chunk.links],
        )
        conn.execute(
            "INSERT INTO provenance(chunk_id, origin, session_kind, source) VALUES (?, ?, ?, ?)",
            (
                cid,
                chunk.origin.value,
                chunk.session.value if chunk.session else None,
                f"{rel}#L{chunk.start_line}-L{chunk.end_line}",
            ),
        )
    conn.execute(
        "INSERT INTO sources(path, hash, size, mtime_ns, kind, day, generation, chunks, indexed_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(path) DO UPDATE SET hash = excluded.hash, "
        "size = excluded.size, mtime_ns = excluded.mtime_ns, kind = excluded.kind, day = excluded.day, "
        "generation = excluded.generation, chunks = excluded.chunks, indexed_at = excluded.indexed_at",
        (
            rel,
            source.digest,
            source.size,
            source.mtime_ns,
            kind,
            day,
            source.generation,
            len(chunks),
            source.indexed_at,
        ),
    )


def missing_vectors(conn: sqlite3.Connection) -> int:
    return int(conn.execute("SELECT count(*) FROM chunks WHERE has_vector = 0").fetchone()[0])


def vectorless_chunks(conn: sqlite3.Connection, *, after: int, limit: int) -> list[tuple[int, str]]:
    """(id, text) of chunks without a vector, by id, after ``after``."""
    rows = conn.execute(
        "SELECT id, text FROM chunks WHERE has_vector = 0 AND id > ? ORDER BY id LIMIT ?",
        (after, limit),
    ).fetchall()
    return [(int(r[0]), str(r[1])) for r in rows]


def set_vectors(conn: sqlite3.Connection, pairs: Sequence[tuple[int, np.ndarray]]) -> None:
    """Store the vectors of chunks that had none (a backfill)."""
    for cid, vec in pairs:
        conn.execute("DELETE FROM vec_chunks WHERE rowid = ?", (cid,))
        conn.execute(
            "INSERT INTO vec_chunks(rowid, embedding) VALUES (?, ?)",
            (cid, np.asarray(vec, np.float32).tobytes()),
        )
        conn.execute("UPDATE chunks SET has_vector = 1 WHERE id = ?", (cid,))


def chunk_texts(conn: sqlite3.Connection, paths: Sequence[str]) -> list[str]:
    """The chunk texts of ``paths`` (a forget finds the cached vectors of its lines)."""
    out: list[str] = []
    for path in paths:
        out += [str(r[0]) for r in conn.execute("SELECT text FROM chunks WHERE path = ?", (path,))]
    return out


def drop_cached_hashes(conn: sqlite3.Connection, hashes: Sequence[str]) -> int:
    """Delete cached embeddings (a vector is a copy of its text too) of the texts
    with these SHA-256 hashes (``chunks.text_hash``; a forget journal keeps them, never
    the text) that no chunk holds any more. Returns how many rows went."""
    dropped = 0
    with transaction(conn):
        for digest in hashes:
            if conn.execute(
                "SELECT 1 FROM chunks WHERE text_hash = ? LIMIT 1", (digest,)
            ).fetchone():
                continue
            dropped += conn.execute("DELETE FROM embed_cache WHERE hash = ?", (digest,)).rowcount
    return dropped


def unregister_under(conn: sqlite3.Connection, folder: str) -> None:
    """Forget the registry rows under ``folder``: the next sync re-reads those files
    (their class changed: the owner trusted or untrusted the folder)."""
    with transaction(conn):
        conn.execute(
            "DELETE FROM sources WHERE substr(path, 1, ?) = ?", (len(folder) + 1, folder + "/")
        )
        mark_dirty(conn)


def mark_dirty(conn: sqlite3.Connection) -> None:
    """Files changed: dirty, and a new write sequence number (a sync running now
    leaves the flag set, since it may have walked past the change)."""
    set_meta(conn, "dirty", 1)
    set_meta(conn, "dirty_seq", dirty_seq(conn) + 1)


def dirty_seq(conn: sqlite3.Connection) -> int:
    return int(get_meta(conn, "dirty_seq", "0") or 0)


__all__ = [
    "chunk_texts",
    "delete_file",
    "delete_rows",
    "dirty_seq",
    "drop_cached_hashes",
    "mark_dirty",
    "missing_vectors",
    "set_vectors",
    "unregister_under",
    "vectorless_chunks",
    "write_file",
]
