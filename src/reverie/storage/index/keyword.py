"""The keyword lane of a warm process: an in-memory BM25 index kept equal to the
index's FTS5 table (:mod:`reverie.storage.index.bm25` scores as FTS5's ``bm25()``
does), several times faster than an FTS5 query at 100,000 chunks.

Never stale: every search first compares the index version (bumped by every sync
that changes a row) with the one loaded; on a change only the rows that changed are
read (chunk ids with their text hash: an id SQLite reuses for other text counts as
changed) and applied. A one-shot process never loads it and keeps querying FTS5.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Protocol

import sqlean as sqlite3

from .query import index_version, keyword_lane
from .warm_files import load_keyword, save_keyword, tag, warm_dir

if TYPE_CHECKING:  # numpy loads with the warm lane, never on a one-shot call's path
    from .bm25 import Bm25Index, Doc

_MARKS = 900
COMPACT_AT = 0.3  # rebuild once this share of the loaded rows was deleted


class KeywordRows(Protocol):
    """Where a warm keyword lane reads its rows (one SQLite index, one PostgreSQL tenant)."""

    def version(self) -> str: ...

    def fingerprints(self) -> dict[int, str]:
        """chunk id -> text hash, every chunk."""
        ...

    def docs(self, ids: list[int]) -> list[Doc]: ...


class SqliteRows:
    """:class:`KeywordRows` of one SQLite index."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def version(self) -> str:
        return index_version(self.conn)

    def fingerprints(self) -> dict[int, str]:
        return {int(r[0]): str(r[1]) for r in self.conn.execute("SELECT id, text_hash FROM chunks")}

    def docs(self, ids: list[int]) -> list[Doc]:
        from .bm25 import Doc

        out: list[Doc] = []
        for i in range(0, len(ids), _MARKS):
            part = ids[i : i + _MARKS]
            rows = self.conn.execute(
                "SELECT id, text_hash, text, path, start_line, part FROM chunks "
                f"WHERE id IN ({','.join('?' * len(part))})",
                part,
            ).fetchall()
            out += [
                Doc(int(r[0]), str(r[1]), str(r[2]), (str(r[3]), int(r[4]), int(r[5])))
                for r in rows
            ]
        return out


class KeywordIndex:
    """``load`` once (warm processes), then ``top`` answers as ``keyword_lane`` would."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._version: str | None = None
        self._bm25: Bm25Index | None = None

    @property
    def warm(self) -> bool:
        return self._bm25 is not None

    def load(self, conn: sqlite3.Connection | KeywordRows) -> None:
        """Load every row, or bring a loaded index up to the index's version."""
        with self._lock:
            self._refresh(_rows(conn))

    def _refresh(self, source: KeywordRows) -> None:
        from .bm25 import Bm25Index

        version = source.version()
        if self._bm25 is not None and version == self._version:
            return
        conn = source.conn if isinstance(source, SqliteRows) else None
        folder = warm_dir(conn) if conn is not None else None
        bm25 = self._bm25
        if bm25 is None and conn is not None and folder is not None:  # beside the index
            loaded = load_keyword(folder, tag(conn))
            try:
                bm25 = Bm25Index.from_parts(loaded[0], loaded[1]) if loaded else None
            except (KeyError, TypeError, AssertionError):  # another layout: built anew
                bm25 = None
            if bm25 is not None and loaded is not None and loaded[2] == version:
                self._bm25, self._version = bm25, version  # made at this version
                return
        if bm25 is None or bm25.dead_share > COMPACT_AT:
            bm25 = Bm25Index()
        now = source.fingerprints()
        fresh = not bm25.known
        bm25.remove([cid for cid, (_, h) in bm25.known.items() if now.get(cid) != h])
        new = [cid for cid in now if cid not in bm25.known]
        bm25.add(source.docs(new))
        # built anew or far behind: the next start reads it
        far_behind = fresh or len(new) > max(2000, len(now) // 4)
        if conn is not None and folder is not None and now and far_behind:
            save_keyword(folder, tag(conn), version, *bm25.to_parts())
        self._bm25, self._version = bm25, version

    def top(
        self,
        conn: sqlite3.Connection | KeywordRows,
        query: str,
        k: int,
        drop: frozenset[str] = frozenset(),
    ) -> dict[int, float]:
        """chunk id -> FTS5 rank (negative), best first, equal ranks in content order:
        from memory once loaded, else the FTS5 query itself (a one-shot call)."""
        if self._bm25 is None:
            if isinstance(conn, sqlite3.Connection):
                return keyword_lane(conn, query, k, drop)
            self.load(conn)  # no FTS5 to ask: this lane is the keyword index
        source = _rows(conn)
        with self._lock:
            if source.version() != self._version:
                self._refresh(source)
            assert self._bm25 is not None
            return self._bm25.top(query, k, drop)


def _rows(conn: sqlite3.Connection | KeywordRows) -> KeywordRows:
    return SqliteRows(conn) if isinstance(conn, sqlite3.Connection) else conn


__all__ = ["KeywordIndex", "KeywordRows", "SqliteRows"]
