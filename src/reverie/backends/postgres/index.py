"""The PostgreSQL adapter of the index port: one tenant's rows in a shared database
(:mod:`.schema`). Every statement filters by ``tenant_id``.

The lanes answer what the SQLite adapter answers, so the ranking above them is the
same: the keyword lane is the in-memory BM25 of :mod:`reverie.storage.index.bm25` (FTS5's ``bm25()``, to
the score) fed from this tenant's rows; the vector lane is an exact cosine scan for a
small tenant and, past :data:`EXACT_MAX` vectors, the HNSW index on ``halfvec`` with
iterative scans (so the tenant filter still yields k rows), re-scored in full
precision; equal scores in content order on both. The HNSW index is built by the sync
that first takes a tenant past :data:`EXACT_MAX` (no insert pays its upkeep before).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from ...storage.chunking import Chunk
from ...storage.index.bm25 import Doc
from ...storage.index.keyword import KeywordIndex
from ...storage.index.path_lane import PathLane
from ...storage.index.port import counts_report
from ...storage.index.rows import Candidate, LaneScores, SourceRow, Vectors
from ...storage.index.trigger_rows import TriggerRow
from .cache import PgEmbeddingCache
from .migrations import hnsw_index
from .schema import Database
from .sql import CANDIDATE_SQL, EXACT_SQL, LINKS_SQL, TRIGGER_SQL, hnsw_query, hnsw_settings
from .write import write_chunks

if TYPE_CHECKING:
    import numpy as np
else:
    from ...storage.lazy import numpy as np

EXACT_MAX = 20_000  # below this many vectors an exact scan beats the HNSW index


def _plain(v: Any) -> Any:
    """A pgvector ``Vector`` / ``HalfVector`` as numbers (a list stays a list)."""
    return v.to_numpy() if hasattr(v, "to_numpy") else v


class PgIndex:
    """:class:`reverie.storage.index.port.IndexPort` of tenant ``tenant`` in ``db``."""

    backend = "postgres"
    # what a forget cannot take out of a shared server (issue 40, point 5): said in its report
    remains: tuple[str, ...] = (
        "PostgreSQL keeps the deleted rows' bytes in the shared tables' files (chunks, "
        "chunk_vectors, notes, provenance, embed_cache and the recall tables) until their "
        "pages are reused or the operator runs VACUUM FULL on them, in the write-ahead log "
        "(pg_wal) until its segments are recycled and overwritten, and in the server's "
        "backups and replicas",
    )

    def __init__(self, db: Database, tenant: str, *, cache_rows: int = 50_000) -> None:
        if not tenant:
            raise ValueError("a PostgreSQL index needs a tenant id")
        self.db, self.tenant = db, tenant
        self.keyword_lane = KeywordIndex()
        self.path_lane = PathLane()
        self.cache = PgEmbeddingCache(db, tenant, cap_rows=cache_rows)
        self._read = threading.local()  # .meta: this thread's snapshot (in reading())
        self._vector_count: tuple[str, int, int] | None = None  # (index_version, dims, n)
        self._hnsw_ready: set[int] = set()  # dims whose HNSW index is known to exist
        self._counted: dict[int, int] = {}  # this tenant's vectors of a width, at least

    def _all(self, sql: str, *params: Any) -> list[tuple[Any, ...]]:
        with self.db.connection() as conn:
            return list(conn.execute(sql, (self.tenant, *params)).fetchall())

    def _run(self, sql: str, *params: Any) -> int:
        with self.db.connection() as conn:
            return int(conn.execute(sql, (self.tenant, *params)).rowcount)

    # -- reads ---------------------------------------------------------------------
    @contextlib.contextmanager
    def reading(self) -> Iterator[None]:
        """One search: the tenant's meta rows are read once, on the first ``meta``, not
        once per lane (another process's sync shows from the next search on)."""
        if hasattr(self._read, "meta"):
            yield  # nested: the outer one's snapshot
            return
        self._read.meta = None
        try:
            yield
        finally:
            del self._read.meta

    def meta(self, key: str, default: str | None = None) -> str | None:
        if not hasattr(self._read, "meta"):
            rows = self._all("SELECT value FROM meta WHERE tenant_id = %s AND key = %s", key)
            return str(rows[0][0]) if rows else default
        if self._read.meta is None:
            rows = self._all("SELECT key, value FROM meta WHERE tenant_id = %s")
            self._read.meta = {str(k): str(v) for k, v in rows}
        return self._read.meta.get(key, default)

    def version(self) -> str:
        return self.meta("index_version", "0") or "0"

    # (the keyword lane's rows: KeywordRows)
    def fingerprints(self) -> dict[int, str]:
        rows = self._all("SELECT id, text_hash FROM chunks WHERE tenant_id = %s")
        return {int(r[0]): str(r[1]) for r in rows}

    def docs(self, ids: list[int]) -> list[Doc]:
        rows = self._all(
            "SELECT id, text_hash, text, path, start_line, part FROM chunks "
            "WHERE tenant_id = %s AND id = ANY(%s)",
            ids,
        )
        return [
            Doc(int(r[0]), str(r[1]), str(r[2]), (str(r[3]), int(r[4]), int(r[5]))) for r in rows
        ]

    def keyword_top(self, query: str, k: int, drop: frozenset[str]) -> dict[int, float]:
        return self.keyword_lane.top(self, query, k, drop)

    def vector_top(self, qvec: np.ndarray, k: int) -> dict[int, float]:
        dims = self.meta("vec_dims")
        if dims is None or k < 1:
            return {}
        d, q = int(dims), np.asarray(qvec, np.float32)
        version = self.version()
        with self.db.connection() as conn:
            known = self._vector_count
            if known is not None and known[:2] == (version, d):
                count = known[2]  # every sync that changes a vector moves the version on
            else:  # a scan of the tenant's vector rows (as many pages as the exact lane)
                count = conn.execute(
                    "SELECT count(*) FROM chunk_vectors WHERE tenant_id = %s AND dims = %s",
                    (self.tenant, d),
                ).fetchone()[0]
                self._vector_count = (version, d, int(count))
            if count <= EXACT_MAX:
                # one tenant's few thousand rows: parallel workers cost more than they save
                # (60 -> 38 ms for 5,000 vectors on 2 loaded cores)
                settings = ["SET LOCAL max_parallel_workers_per_gather = 0"]
                sql, params = EXACT_SQL, [q, self.tenant, d, k, k]
            else:
                fetch = max(40, 2 * k)
                settings = hnsw_settings(fetch)
                sql, params = hnsw_query(d), [q, self.tenant, d, q, fetch, k]
            # BEGIN, the settings, the query and COMMIT in one round trip (psycopg's own
            # transaction() syncs on entering and leaving: three more); after an error
            # the connection's exit rolls back
            with conn.pipeline():
                for statement in ("BEGIN", *settings):
                    conn.execute(statement)
                cur = conn.execute(sql, params)
                conn.execute("COMMIT")
            rows = cur.fetchall()
        return {int(r[0]): float(r[1]) for r in rows}

    def vectors(self, ids: Iterable[int]) -> dict[int, np.ndarray]:
        want = list(dict.fromkeys(int(i) for i in ids))
        if not want:
            return {}
        rows = self._all(
            "SELECT chunk_id, embedding FROM chunk_vectors WHERE tenant_id = %s "
            "AND chunk_id = ANY(%s)",
            want,
        )
        # pgvector hands back its own Vector / HalfVector objects
        return {int(r[0]): np.asarray(_plain(r[1]), np.float32) for r in rows}

    def path_chunks(self, query: str, k: int) -> dict[int, int]:
        def paths() -> list[str]:
            return [str(r[0]) for r in self._all("SELECT path FROM sources WHERE tenant_id = %s")]

        tiers = self.path_lane.match_in(self.version(), paths, query)
        if not tiers:
            return {}
        rows = self._all(  # each named file's first k chunks, all files in one statement
            "SELECT id, path FROM (SELECT id, path, row_number() OVER (PARTITION BY path "
            "ORDER BY start_line, part) AS n FROM chunks WHERE tenant_id = %s "
            "AND path = ANY(%s)) c WHERE n <= %s",
            list(tiers),
            k,
        )
        by_path: dict[str, list[int]] = {}
        for cid, path in rows:
            by_path.setdefault(str(path), []).append(int(cid))
        return {cid: tier for path, tier in tiers.items() for cid in by_path.get(path, ())}

    def candidates(self, ids: Iterable[int], scores: LaneScores) -> list[Candidate]:
        rows = self._all(CANDIDATE_SQL, list(dict.fromkeys(ids)))
        c, b, t = scores.cosines, scores.bm25, scores.tiers
        return [Candidate.of(r, cosines=c, bm25=b, tiers=t) for r in rows]

    def replacing(self, targets: Iterable[str]) -> dict[str, list[int]]:
        out: dict[str, list[int]] = {}
        for target, cid in self._all(LINKS_SQL, list(dict.fromkeys(targets))):
            out.setdefault(str(target), []).append(int(cid))
        return out

    def has_links(self) -> bool:
        return bool(self._all("SELECT 1 FROM links WHERE tenant_id = %s LIMIT 1"))

    def entry_order(self, paths: Iterable[str]) -> dict[str, list[tuple[int, bool]]]:
        out: dict[str, list[tuple[int, bool]]] = {}
        for path in dict.fromkeys(paths):
            rows = self._all(
                "SELECT id, left(ltrim(text), 1) = '#' FROM chunks WHERE tenant_id = %s "
                "AND path = %s AND kind IN ('journal', 'transcript') ORDER BY start_line, part",
                path,
            )
            if rows:
                out[path] = [(int(r[0]), bool(r[1])) for r in rows]
        return out

    def trigger_rows(self) -> list[TriggerRow]:
        return [TriggerRow.of(r) for r in self._all(TRIGGER_SQL)]

    def is_dirty(self) -> bool:
        return self.meta("dirty", "1") == "1" or self.meta("last_sync") is None

    def sources(self) -> dict[str, tuple[str, int, int, int]]:
        rows = self._all(
            "SELECT path, hash, size, mtime_ns, generation FROM sources WHERE tenant_id = %s"
        )
        return {str(r[0]): (str(r[1]), int(r[2]), int(r[3]), int(r[4])) for r in rows}

    def counts(self, *, embedder: str | None) -> dict[str, Any]:
        one = lambda sql: int(self._all(sql)[0][0])  # noqa: E731
        origins = self._all(
            "SELECT origin, count(*) FROM provenance WHERE tenant_id = %s GROUP BY origin"
        )
        report = counts_report(
            self.meta,
            schema=self.db.schema(),
            files=one("SELECT count(*) FROM sources WHERE tenant_id = %s"),
            chunks=one("SELECT count(*) FROM chunks WHERE tenant_id = %s"),
            vectors=one("SELECT count(*) FROM chunks WHERE tenant_id = %s AND has_vector"),
            embedder=embedder,
            dirty=self.is_dirty(),
            origins={str(o): int(n) for o, n in origins},
        )
        return {"backend": self.backend, **self.db.versions(), "tenant": self.tenant, **report}

    def warm(self) -> None:
        self.keyword_lane.load(self)

    # -- writes (the sync) -----------------------------------------------------------
    def ensure_schema(self) -> bool:
        return False  # the database was migrated when it opened (schema.Database)

    def transaction(self) -> AbstractContextManager[Any]:
        return self.db.transaction()

    def set_meta(self, key: str, value: Any) -> None:
        self._run(
            "INSERT INTO meta(tenant_id, key, value) VALUES (%s, %s, %s) "
            "ON CONFLICT (tenant_id, key) DO UPDATE SET value = excluded.value",
            key,
            str(value),
        )
        if getattr(self._read, "meta", None) is not None:  # a write inside a search
            self._read.meta[key] = str(value)

    def has_vectors(self) -> bool:
        return self.meta("vec_dims") is not None

    def create_vectors(self, dims: int) -> None:
        with self.db.transaction() as conn:  # (the HNSW index comes when it is needed)
            conn.execute("DELETE FROM chunk_vectors WHERE tenant_id = %s", (self.tenant,))
            conn.execute(
                "UPDATE chunks SET has_vector = false WHERE tenant_id = %s", (self.tenant,)
            )
            self.set_meta("vec_dims", int(dims))

    def write_file(self, source: SourceRow, chunks: Sequence[Chunk], vectors: Vectors) -> None:
        rel, t, dims = source.path, self.tenant, self.meta("vec_dims")
        with self.db.transaction() as conn:
            conn.execute("DELETE FROM chunks WHERE tenant_id = %s AND path = %s", (t, rel))
            write_chunks(conn, t, source, chunks, vectors, dims)
            conn.execute(
                "INSERT INTO sources(tenant_id, path, hash, size, mtime_ns, kind, day, generation,"
                " chunks, indexed_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s) "
                "ON CONFLICT (tenant_id, path) DO UPDATE SET hash = excluded.hash, "
                "size = excluded.size, mtime_ns = excluded.mtime_ns, kind = excluded.kind, "
                "day = excluded.day, generation = excluded.generation, "
                "chunks = excluded.chunks, indexed_at = excluded.indexed_at",
                (t, rel, source.digest, source.size, source.mtime_ns, source.kind, source.day,
                 source.generation, len(chunks), source.indexed_at),
            )  # fmt: skip
        if dims is not None:
            self._index_when_big(int(dims), sum(v is not None for v in vectors))

    def _index_when_big(self, d: int, added: int) -> None:
        """Build the shared HNSW index of ``d``-wide vectors once this tenant has more
        than :data:`EXACT_MAX` of them: below that its searches scan exactly, and until
        some tenant needs the index no insert pays for its upkeep (issue 41, point 4)."""
        if d in self._hnsw_ready:
            return
        if d in self._counted:  # counted once, then what this process wrote is added:
            self._counted[d] += added  # others' writes only make it low (the index
            if self._counted[d] <= EXACT_MAX:  # comes a little later; searches scan
                return  # exactly meanwhile)
        with self.db.transaction() as conn:
            name = f"chunk_vectors_hnsw_{d}"
            if not conn.execute("SELECT to_regclass(%s)", (name,)).fetchone()[0]:
                n = conn.execute("SELECT count(*) FROM chunk_vectors WHERE tenant_id = %s AND "
                                 "dims = %s", (self.tenant, d)).fetchone()[0]  # fmt: skip
                self._counted[d] = int(n)
                if n <= EXACT_MAX:
                    return
                hnsw_index(conn, d)
        self._hnsw_ready.add(d)

    def touch_source(self, rel: str, *, size: int, mtime_ns: int) -> None:
        with self.db.connection() as conn:
            conn.execute(
                "UPDATE sources SET size = %s, mtime_ns = %s WHERE tenant_id = %s AND path = %s",
                (size, mtime_ns, self.tenant, rel),
            )

    def delete_file(self, rel: str) -> None:
        with self.db.transaction():
            self._run("DELETE FROM chunks WHERE tenant_id = %s AND path = %s", rel)
            self._run("DELETE FROM sources WHERE tenant_id = %s AND path = %s", rel)

    def missing_vectors(self) -> int:
        rows = self._all("SELECT count(*) FROM chunks WHERE tenant_id = %s AND NOT has_vector")
        return int(rows[0][0])

    def vectorless_chunks(self, *, after: int, limit: int) -> list[tuple[int, str]]:
        rows = self._all(
            "SELECT id, text FROM chunks WHERE tenant_id = %s AND NOT has_vector AND id > %s "
            "ORDER BY id LIMIT %s",
            after,
            limit,
        )
        return [(int(r[0]), str(r[1])) for r in rows]

    def set_vectors(self, pairs: Sequence[tuple[int, np.ndarray]]) -> None:
        dims = int(self.meta("vec_dims") or 0)
        with self.db.transaction() as conn:
            for cid, vec in pairs:
                conn.execute(
                    "INSERT INTO chunk_vectors(tenant_id, chunk_id, dims, embedding) "
                    "VALUES (%s, %s, %s, %s) ON CONFLICT (tenant_id, chunk_id) DO UPDATE "
                    "SET dims = excluded.dims, embedding = excluded.embedding",
                    (self.tenant, cid, dims, np.asarray(vec, np.float32)),
                )
                conn.execute(
                    "UPDATE chunks SET has_vector = true WHERE tenant_id = %s AND id = %s",
                    (self.tenant, cid),
                )
        if dims:
            self._index_when_big(dims, len(pairs))

    def dirty_seq(self) -> int:
        return int(self.meta("dirty_seq", "0") or 0)

    def mark_dirty(self) -> None:
        with self.db.transaction():
            self.set_meta("dirty", 1)
            self.set_meta("dirty_seq", self.dirty_seq() + 1)

    def chunk_texts(self, paths: Sequence[str]) -> list[str]:
        rows = self._all("SELECT text FROM chunks WHERE tenant_id = %s AND path = ANY(%s)", paths)
        return [str(r[0]) for r in rows]

    def drop_cached_hashes(self, hashes: Sequence[str]) -> int:
        with self.db.transaction():
            return self._run(
                "DELETE FROM embed_cache e WHERE e.tenant_id = %s AND e.hash = ANY(%s) AND NOT "
                "EXISTS (SELECT 1 FROM chunks c WHERE c.tenant_id = e.tenant_id "
                "AND c.text_hash = e.hash)",
                list(hashes),
            )

    def unregister_under(self, folder: str) -> None:
        with self.db.transaction():
            self._run(
                "DELETE FROM sources WHERE tenant_id = %s AND left(path, %s) = %s",
                len(folder) + 1,
                folder + "/",
            )
            self.mark_dirty()

    def scrub(self) -> bool:
        """VACUUM the tables a forget deletes from: dead rows' space is reclaimed and
        they leave the indexes (a shared table is never rewritten by one tenant's
        forget; the server's WAL and backups age out on their own schedule)."""
        with self.db.pool.connection() as conn:
            conn.execute("VACUUM chunks, chunk_vectors, notes, provenance, embed_cache")
        return True

    def close(self) -> None:
        """The database (shared by the tenants) is closed by its owner."""


__all__ = ["EXACT_MAX", "PgIndex", "hnsw_query", "hnsw_settings"]
