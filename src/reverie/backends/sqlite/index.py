"""The SQLite adapter of the index port (``index.sqlite`` in the state folder): one
connection and the warm lanes over it, each call a function of :mod:`.query`,
:mod:`.store` or :mod:`.db`."""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from ...storage.chunking import Chunk
from ...storage.index.keyword import KeywordIndex
from ...storage.index.path_lane import PathLane
from ...storage.index.port import counts_report
from ...storage.index.rows import Candidate, LaneScores, SourceRow, Vectors
from ...storage.index.trigger_rows import TriggerRow
from . import query, store
from .cache import SqliteEmbeddingCache
from .db import (
    SCHEMA_VERSION,
    Connection,
    create_vec_table,
    ensure_schema,
    get_meta,
    index_version,
    set_meta,
    transaction,
    user_version,
)
from .keyword import SqliteRows
from .trigger_rows import trigger_rows
from .vector_lane import VectorLane

if TYPE_CHECKING:
    import numpy as np


class Lanes:
    """The warm lanes of one index, kept by the backend across the ports it opens (one
    warm state). The vector lane is made on first use: numpy loads with it, and a
    one-shot process that only reads the triggers never needs it."""

    def __init__(self) -> None:
        self._vectors: VectorLane | None = None
        self.keywords = KeywordIndex()
        self.paths = PathLane()

    @property
    def vectors(self) -> VectorLane:
        if self._vectors is None:
            self._vectors = VectorLane()
        return self._vectors


class SqliteIndex:
    """:class:`reverie.storage.index.port.IndexPort` over one SQLite connection and
    the warm ``lanes`` (fresh ones when not given)."""

    backend = "sqlite"
    remains: tuple[str, ...] = ()  # a forget rewrites the file and its WAL: nothing stays

    def __init__(
        self, conn: Connection, *, lanes: Lanes | None = None, cache_rows: int = 50_000
    ) -> None:
        self.conn = conn
        self.lanes = lanes or Lanes()
        self.keyword_lane, self.path_lane = self.lanes.keywords, self.lanes.paths
        self.rows = SqliteRows(conn)  # what the warm keyword lane reads
        self.cache = SqliteEmbeddingCache(conn, cap_rows=cache_rows)

    @property
    def vector_lane(self) -> VectorLane:
        return self.lanes.vectors  # (made on first use)

    # -- reads -------------------------------------------------------------------
    def reading(self) -> AbstractContextManager[None]:
        return contextlib.nullcontext()  # one local connection: nothing to save

    def meta(self, key: str, default: str | None = None) -> str | None:
        return get_meta(self.conn, key, default)

    def version(self) -> str:
        return index_version(self.conn)

    def keyword_top(self, text: str, k: int, drop: frozenset[str]) -> dict[int, float]:
        lane = self.keyword_lane  # a one-shot process adopts a current kept lane, or asks FTS5
        if not lane.warm and not lane.adopt(self.rows):
            return query.keyword_lane(self.conn, text, k, drop)
        return self.keyword_lane.top(self.rows, text, k, drop)

    def vector_top(self, qvec: np.ndarray, k: int) -> dict[int, float]:
        return self.vector_lane.top(self.conn, qvec, k)

    def vectors(self, ids: Iterable[int]) -> dict[int, np.ndarray]:
        return self.vector_lane.vectors(self.conn, ids)

    def path_chunks(self, text: str, k: int) -> dict[int, int]:
        return query.path_chunks(self.conn, query.path_matches(self.path_lane, self.conn, text), k)

    def candidates(self, ids: Iterable[int], scores: LaneScores) -> list[Candidate]:
        return query.fetch_candidates(
            self.conn, ids, cosines=scores.cosines, bm25=scores.bm25, tiers=scores.tiers
        )

    def replacing(self, targets: Iterable[str]) -> dict[str, list[int]]:
        want = list(dict.fromkeys(targets))
        out: dict[str, list[int]] = {}
        for i in range(0, len(want), 500):
            part = want[i : i + 500]
            marks = ",".join("?" * len(part))
            sql = f"SELECT target, chunk_id FROM links WHERE target IN ({marks}) ORDER BY chunk_id"
            for target, cid in self.conn.execute(sql, part):
                out.setdefault(target, []).append(int(cid))
        return out

    def has_links(self) -> bool:
        return self.conn.execute("SELECT 1 FROM links LIMIT 1").fetchone() is not None

    def entry_order(self, paths: Iterable[str]) -> dict[str, list[tuple[int, bool]]]:
        return query.entry_order(self.conn, paths)

    def trigger_rows(self) -> list[TriggerRow]:
        return trigger_rows(self.conn)

    def is_dirty(self) -> bool:
        return query.is_dirty(self.conn)

    def sources(self) -> dict[str, tuple[str, int, int, int]]:
        rows = self.conn.execute("SELECT path, hash, size, mtime_ns, generation FROM sources")
        return {str(r[0]): (str(r[1]), int(r[2]), int(r[3]), int(r[4])) for r in rows}

    def counts(self, *, embedder: str | None) -> dict[str, Any]:
        return {"backend": self.backend, **index_counts(self.conn, embedder=embedder)}

    def warm(self) -> None:
        self.vector_lane.load(self.conn)
        self.keyword_lane.load(self.rows)  # BM25 in memory, equal to FTS5's

    # -- writes (the sync) ----------------------------------------------------------
    def ensure_schema(self) -> bool:
        return ensure_schema(self.conn)

    def transaction(self) -> AbstractContextManager[Any]:
        return transaction(self.conn)

    def set_meta(self, key: str, value: Any) -> None:
        set_meta(self.conn, key, value)

    def has_vectors(self) -> bool:
        return get_meta(self.conn, "vec_dims") is not None

    def create_vectors(self, dims: int) -> None:
        create_vec_table(self.conn, dims)

    def write_file(self, source: SourceRow, chunks: Sequence[Chunk], vectors: Vectors) -> None:
        store.write_file(
            self.conn,
            chunks,
            vectors,
            source,
            has_vec_table=self.has_vectors(),
        )

    def touch_source(self, rel: str, *, size: int, mtime_ns: int) -> None:
        self.conn.execute(
            "UPDATE sources SET size = ?, mtime_ns = ? WHERE path = ?", (size, mtime_ns, rel)
        )

    def delete_file(self, rel: str) -> None:
        store.delete_file(self.conn, rel, has_vec_table=self.has_vectors())

    def missing_vectors(self) -> int:
        return store.missing_vectors(self.conn)

    def vectorless_chunks(self, *, after: int, limit: int) -> list[tuple[int, str]]:
        return store.vectorless_chunks(self.conn, after=after, limit=limit)

    def set_vectors(self, pairs: Sequence[tuple[int, np.ndarray]]) -> None:
        store.set_vectors(self.conn, pairs)

    def dirty_seq(self) -> int:
        return store.dirty_seq(self.conn)

    def mark_dirty(self) -> None:
        with transaction(self.conn):
            store.mark_dirty(self.conn)

    def chunk_texts(self, paths: Sequence[str]) -> list[str]:
        return store.chunk_texts(self.conn, paths)

    def drop_cached_hashes(self, hashes: Sequence[str]) -> int:
        return store.drop_cached_hashes(self.conn, hashes)

    def unregister_under(self, folder: str) -> None:
        store.unregister_under(self.conn, folder)

    def scrub(self) -> bool:
        """No deleted byte left in the index file or its WAL, and no snapshot of the
        warm lanes (they may hold what was forgotten; the next warm process writes
        them anew)."""
        from ...storage.scrub import scrub
        from .warm_files import drop, warm_dir

        drop(warm_dir(self.conn))
        return scrub(self.conn)

    def close(self) -> None:
        """Nothing: the connection is the backend's
        (:meth:`reverie.backends.sqlite.SqliteBackend.close`)."""


def index_counts(conn: Connection, *, embedder: str | None) -> dict[str, Any]:
    """What the index holds (:func:`reverie.storage.index.port.counts_report`)."""
    one = lambda sql: conn.execute(sql).fetchone()[0]  # noqa: E731
    version = user_version(conn)
    return counts_report(
        lambda key: get_meta(conn, key),
        schema=(version, version == SCHEMA_VERSION),
        files=one("SELECT count(*) FROM sources"),
        chunks=one("SELECT count(*) FROM chunks"),
        vectors=one("SELECT count(*) FROM chunks WHERE has_vector = 1"),
        embedder=embedder,
        dirty=query.is_dirty(conn),
        origins=dict(
            conn.execute("SELECT origin, count(*) FROM provenance GROUP BY origin").fetchall()
        ),
    )


__all__ = ["Lanes", "SqliteIndex", "index_counts"]
