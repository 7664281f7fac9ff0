"""PostgreSQL adapter: the shared database, its pool and its migrations (issue 23).

One database holds the derived index of many tenants: every row carries
``tenant_id``, every key starts with it, every query filters by it. The Markdown
stays the truth (one workspace per tenant), so all of it can be rebuilt.

Migrations are versioned and forward-only: ``reverie_migrations`` records each
applied version; :func:`migrate` applies the missing ones in order, each in its own
transaction, under an advisory lock (two servers starting together migrate once).

Driver: psycopg 3 (binary wheel, libpq inside) with ``psycopg_pool``; pgvector's
adapter sends and reads numpy arrays as ``vector`` in binary.
"""

from __future__ import annotations

import contextlib
import threading
import time
import weakref
from collections.abc import Iterator
from contextlib import AbstractContextManager
from typing import Any

from ...errors import IndexUnusable

LOCK_KEY = 0x52455645  # pg_advisory_xact_lock key of the migrations ("REVE")
# after a failure, checkouts wait this long at most (not the pool's full timeout) until
# one succeeds: calls queued behind each other during an outage fail fast, not in turn
FAIL_FAST = 1.0
# a connection idle this long is checked before use (one round trip): it may have
# outlived a server restart. One in steady use is not (a failed statement recovers)
CHECK_IDLE = 1.0
# after a failure, calls within this long fail at once, naming it, while one call at a
# time (after it) probes the server: an outage costs its callers milliseconds, not a
# FAIL_FAST wait each, and a restarted server is used again within this long
RETRY_AFTER = 0.5
_now = time.monotonic  # (the tests' clock)

MIGRATIONS: tuple[str, ...] = (
    # 1: the registry, chunks with their keyword text, side tables, meta
    """
    CREATE TABLE meta (
        tenant_id TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL,
        PRIMARY KEY (tenant_id, key)
    );
    CREATE TABLE sources (
        tenant_id TEXT NOT NULL, path TEXT NOT NULL, hash TEXT NOT NULL,
        size BIGINT NOT NULL, mtime_ns BIGINT NOT NULL, kind TEXT NOT NULL, day TEXT,
        generation INTEGER NOT NULL, chunks INTEGER NOT NULL, indexed_at TEXT NOT NULL,
        PRIMARY KEY (tenant_id, path)
    );
    CREATE TABLE chunks (
        tenant_id TEXT NOT NULL,
        id BIGINT GENERATED ALWAYS AS IDENTITY,
        path TEXT NOT NULL, start_line INTEGER NOT NULL, end_line INTEGER NOT NULL,
        part INTEGER NOT NULL DEFAULT 0, text TEXT NOT NULL, text_hash TEXT NOT NULL,
        kind TEXT NOT NULL, day TEXT, has_vector BOOLEAN NOT NULL DEFAULT false,
        -- the stemmed keyword text (reverie.tokens.keyword_body: the same stems as
        -- SQLite's FTS5 row, CJK as single characters), parsed by the 'simple' config
        body TSVECTOR NOT NULL,
        PRIMARY KEY (tenant_id, id)
    );
    CREATE INDEX chunks_path ON chunks (tenant_id, path, start_line, part);
    CREATE INDEX chunks_body ON chunks USING gin (body);
    CREATE INDEX chunks_novec ON chunks (tenant_id, id) WHERE NOT has_vector;
    CREATE TABLE notes (
        tenant_id TEXT NOT NULL, chunk_id BIGINT NOT NULL, importance INTEGER,
        triggers TEXT NOT NULL DEFAULT '[]', projects TEXT NOT NULL DEFAULT '[]',
        PRIMARY KEY (tenant_id, chunk_id),
        FOREIGN KEY (tenant_id, chunk_id) REFERENCES chunks (tenant_id, id) ON DELETE CASCADE
    );
    CREATE TABLE provenance (
        tenant_id TEXT NOT NULL, chunk_id BIGINT NOT NULL,
        origin TEXT NOT NULL CHECK (origin IN ('owner', 'agent', 'untrusted', 'system')),
        session_kind TEXT, source TEXT NOT NULL,
        PRIMARY KEY (tenant_id, chunk_id),
        FOREIGN KEY (tenant_id, chunk_id) REFERENCES chunks (tenant_id, id) ON DELETE CASCADE
    );
    """,
    # 2: vectors (pgvector; one HNSW index per dimension count, made on first use)
    # and the embedding cache
    """
    CREATE EXTENSION IF NOT EXISTS vector;
    CREATE TABLE chunk_vectors (
        tenant_id TEXT NOT NULL, chunk_id BIGINT NOT NULL, dims INTEGER NOT NULL,
        embedding VECTOR NOT NULL,
        PRIMARY KEY (tenant_id, chunk_id),
        FOREIGN KEY (tenant_id, chunk_id) REFERENCES chunks (tenant_id, id) ON DELETE CASCADE
    );
    CREATE TABLE embed_cache (
        tenant_id TEXT NOT NULL, provider TEXT NOT NULL, model TEXT NOT NULL,
        pkey TEXT NOT NULL, hash TEXT NOT NULL, vec BYTEA NOT NULL, used BIGINT NOT NULL,
        PRIMARY KEY (tenant_id, provider, model, pkey, hash)
    );
    CREATE INDEX embed_cache_used ON embed_cache (tenant_id, used);
    """,
    # the standing intents with their firings, and the requests waiting for the owner
    # (reverie.intents.pg_store, reverie.curation.pg_requests); tenant_locks: one row per
    # tenant and store, locked (FOR UPDATE) by each change as SQLite's BEGIN IMMEDIATE
    # locks its file, its version bumped by each change that wrote
    """
    CREATE TABLE tenant_locks (
        tenant_id TEXT NOT NULL, store TEXT NOT NULL, version BIGINT NOT NULL DEFAULT 0,
        PRIMARY KEY (tenant_id, store)
    );
    CREATE TABLE intents (
        tenant_id TEXT NOT NULL, id TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('time', 'event', 'wish')),
        status TEXT NOT NULL
            CHECK (status IN ('pending', 'armed', 'done', 'expired', 'cancelled')),
        text TEXT NOT NULL,
        origin TEXT NOT NULL CHECK (origin IN ('owner', 'agent')),
        proposed_by TEXT NOT NULL, created TEXT NOT NULL, confirmed TEXT, ended TEXT,
        at TEXT, cron TEXT, tz TEXT NOT NULL DEFAULT '', triggers TEXT NOT NULL DEFAULT '[]',
        review_by TEXT, expires TEXT, cooldown_s DOUBLE PRECISION NOT NULL,
        budget INTEGER NOT NULL, fired INTEGER NOT NULL DEFAULT 0, last_fired TEXT,
        next_turn TEXT, next_notify TEXT,
        PRIMARY KEY (tenant_id, id)
    );
    CREATE INDEX intents_status ON intents (tenant_id, status, kind);
    CREATE TABLE firings (
        tenant_id TEXT NOT NULL, id BIGINT GENERATED ALWAYS AS IDENTITY,
        intent_id TEXT NOT NULL, at TEXT NOT NULL,
        channel TEXT NOT NULL CHECK (channel IN ('turn', 'notify')),
        detail TEXT NOT NULL DEFAULT '',
        PRIMARY KEY (tenant_id, id),
        FOREIGN KEY (tenant_id, intent_id) REFERENCES intents (tenant_id, id)
    );
    CREATE INDEX firings_intent ON firings (tenant_id, intent_id);
    CREATE TABLE requests (
        tenant_id TEXT NOT NULL, id TEXT NOT NULL, seq BIGINT GENERATED ALWAYS AS IDENTITY,
        kind TEXT NOT NULL CHECK (kind IN ('forget', 'correct', 'directive')),
        text TEXT NOT NULL, new_text TEXT, at TEXT NOT NULL, requested_by TEXT NOT NULL,
        status TEXT NOT NULL DEFAULT 'pending'
            CHECK (status IN ('pending', 'confirmed', 'rejected')),
        decided TEXT, key TEXT, reason TEXT,
        PRIMARY KEY (tenant_id, id)
    );
    CREATE INDEX requests_order ON requests (tenant_id, seq);
    """,
    # 4: the recall log (reverie.recall.log_pg): SQLite's two tables per tenant, the
    # store's lists as arrays, its rows in first-recalled order (seq: the id of the
    # event that made it), and each tenant's event count (the MAX_EVENTS bound without
    # counting the events on every search)
    """
    CREATE TABLE recall_events (
        tenant_id TEXT NOT NULL, id BIGINT GENERATED ALWAYS AS IDENTITY,
        key TEXT NOT NULL, query_hash TEXT NOT NULL, score DOUBLE PRECISION NOT NULL,
        day TEXT NOT NULL, ts TEXT NOT NULL,
        PRIMARY KEY (tenant_id, id)
    );
    CREATE INDEX recall_events_key ON recall_events (tenant_id, key);
    CREATE TABLE recall_store (
        tenant_id TEXT NOT NULL, key TEXT NOT NULL, seq BIGINT NOT NULL,
        path TEXT NOT NULL, start_line INTEGER NOT NULL, end_line INTEGER NOT NULL,
        recall_count INTEGER NOT NULL, total_score DOUBLE PRECISION NOT NULL,
        max_score DOUBLE PRECISION NOT NULL,
        first_recalled TEXT NOT NULL, last_recalled TEXT NOT NULL,
        query_hashes TEXT[] NOT NULL, recall_days TEXT[] NOT NULL,
        concept_tags TEXT[] NOT NULL, snippet TEXT NOT NULL, origin TEXT NOT NULL,
        session_kind TEXT, observed TEXT,
        PRIMARY KEY (tenant_id, key)
    );
    CREATE INDEX recall_store_seq ON recall_store (tenant_id, seq);
    CREATE TABLE recall_counts (
        tenant_id TEXT PRIMARY KEY, events BIGINT NOT NULL
    );
    """,
    # 5: version links (issue 38): the earlier line a chunk's line replaces (path@hash)
    """CREATE TABLE links (tenant_id TEXT NOT NULL, chunk_id BIGINT NOT NULL, line INTEGER
    NOT NULL, target TEXT NOT NULL, FOREIGN KEY (tenant_id, chunk_id) REFERENCES chunks
    (tenant_id, id) ON DELETE CASCADE); CREATE INDEX links_target ON links (tenant_id, target);""",
)
SCHEMA_VERSION = len(MIGRATIONS)


def applied(conn: Any) -> int:
    """The highest migration applied (0: an empty database)."""
    conn.execute(
        "CREATE TABLE IF NOT EXISTS reverie_migrations "
        "(version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())"
    )
    row = conn.execute("SELECT coalesce(max(version), 0) FROM reverie_migrations").fetchone()
    return int(row[0])


def migrate(conn: Any, *, to: int = SCHEMA_VERSION) -> list[int]:
    """Apply the missing migrations up to ``to``, in order, one transaction each.
    Returns the versions applied now. ``conn``: a psycopg connection (autocommit)."""
    done: list[int] = []
    for version in range(1, to + 1):
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK_KEY,))
            if applied(conn) >= version:
                continue
            conn.execute(MIGRATIONS[version - 1])
            conn.execute("INSERT INTO reverie_migrations(version) VALUES (%s)", (version,))
            done.append(version)
    return done


def hnsw_index(conn: Any, dims: int) -> None:
    """The HNSW index of ``dims``-wide vectors, on their half-precision form (half the
    memory; scores are recomputed in full precision from the column)."""
    d = int(dims)
    if conn.execute("SELECT to_regclass(%s)", (f"chunk_vectors_hnsw_{d}",)).fetchone()[0]:
        return
    # one creator at a time: two tenants' first syncs creating the same index at once
    # deadlock otherwise (each waits for the other's catalog row, then for its table lock)
    conn.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK_KEY,))
    conn.execute(
        f"CREATE INDEX IF NOT EXISTS chunk_vectors_hnsw_{d} ON chunk_vectors USING hnsw "
        f"((embedding::halfvec({d})) halfvec_cosine_ops) WHERE dims = {d}"
    )


class Database:
    """A pool of connections to one PostgreSQL database, migrated on open."""

    def __init__(self, dsn: str, *, min_size: int = 1, max_size: int = 8, timeout: float = 5.0):
        try:
            import psycopg
            from pgvector.psycopg import register_vector
            from psycopg_pool import ConnectionPool, PoolTimeout
        except ImportError:
            raise IndexUnusable(
                "the postgres index backend needs psycopg and pgvector: "
                "pip install 'reverie-md-memory[postgres]'"
            ) from None
        self.dsn = dsn
        self.errors: tuple[type[Exception], ...] = (psycopg.Error, PoolTimeout)
        self._unreachable = (psycopg.OperationalError, PoolTimeout)  # the server, not a query
        try:
            with psycopg.connect(dsn, autocommit=True, connect_timeout=int(timeout)) as conn:
                migrate(conn)
        except psycopg.Error as exc:
            raise IndexUnusable(f"cannot open the PostgreSQL index: {exc}") from None
        self._timeout = timeout

        def new_pool() -> Any:
            return ConnectionPool(
                dsn,
                min_size=min_size,
                max_size=max_size,
                timeout=timeout,  # a stopped server fails fast instead of hanging
                configure=register_vector,
                # no check per checkout (a round trip each): see CHECK_IDLE and failing
                kwargs={"autocommit": True, "connect_timeout": max(1, int(timeout))},
                open=True,
            )

        self._new_pool = new_pool
        self._pool_lock = threading.Lock()
        self.pool = new_pool()
        self._local = threading.local()
        self.failing = False  # the last checkout or statement failed: fail fast
        self._failed: tuple[float, str] = (0.0, "")  # when and how it last failed
        self._returned: weakref.WeakKeyDictionary[Any, float] = weakref.WeakKeyDictionary()

    def connection(self) -> AbstractContextManager[Any]:
        """The connection of the transaction this thread is in, else one from the pool."""
        return self._use(transaction=False)

    def transaction(self) -> AbstractContextManager[Any]:
        """One transaction on one pooled connection; nested calls join it."""
        return self._use(transaction=True)

    @contextlib.contextmanager
    def _use(self, *, transaction: bool) -> Iterator[Any]:
        current = getattr(self._local, "conn", None)
        if current is not None:
            yield current
            return
        at, why = self._failed
        if self.failing and (ago := _now() - at) < RETRY_AFTER:
            raise IndexUnusable(f"the PostgreSQL index failed {ago:.1f} s ago: {why}")
        try:
            with self._checked_out(transaction=transaction) as conn:
                yield conn
            self.failing = False
        except self.errors as exc:  # down, restarting, or refusing us: a clear error
            self.failing = True
            if isinstance(exc, self._unreachable):  # not a statement's own error
                self._failed = (_now(), f"{type(exc).__name__}: {exc}")
            self._drop_stale()
            raise IndexUnusable(
                f"the PostgreSQL index failed: {type(exc).__name__}: {exc}"
            ) from exc

    @contextlib.contextmanager
    def _checked_out(self, *, transaction: bool) -> Iterator[Any]:
        pool = self.pool
        wait = min(FAIL_FAST, self._timeout) if self.failing else self._timeout
        try:
            conn = pool.getconn(timeout=wait)
        except self.errors:
            pool = self._renewed(pool)  # the server is back: the old pool may be asleep
            conn = pool.getconn(timeout=wait)
        returned = self._returned.get(conn)
        if self.failing or returned is None or time.monotonic() - returned > CHECK_IDLE:
            conn = self._checked(pool, conn, wait)  # it may have outlived a restart
        try:
            with conn:  # commit, or roll back on an error (as the pool's own helper does)
                if not transaction:
                    yield conn
                    return
                self._local.conn = conn
                try:
                    with conn.transaction():
                        yield conn
                finally:
                    self._local.conn = None
        finally:
            self._returned[conn] = time.monotonic()
            pool.putconn(conn)

    def _drop_stale(self) -> None:
        """After a failed statement: the pool's idle connections may be as dead as the
        one that failed (a restarted server); the pool checks them and drops those."""
        with contextlib.suppress(Exception):
            self.pool.check()

    @staticmethod
    def _checked(pool: Any, conn: Any, wait: float) -> Any:
        """``conn`` if it answers, else (it is dropped) a fresh one from ``pool``."""
        try:
            pool.check_connection(conn)
            return conn
        except Exception:
            pool.putconn(conn)  # broken: the pool discards it
            with contextlib.suppress(Exception):
                pool.check()  # and the idle ones as stale as it
            return pool.getconn(timeout=wait)

    def _renewed(self, stale: Any) -> Any:
        """A fresh pool when the server answers again. A pool whose attempts failed
        while the server was down waits ever longer between them (1 s, 2 s, 4 s ...), so
        a restarted server would stay unused for minutes. Raises if it still does not
        answer."""
        import psycopg

        with self._pool_lock:
            if self.pool is not stale:
                return self.pool  # another thread renewed it
            connect_timeout = max(1, int(self._timeout))
            with psycopg.connect(self.dsn, autocommit=True, connect_timeout=connect_timeout):
                pass
            self.pool = self._new_pool()
        stale.close(timeout=0)
        return self.pool

    def versions(self) -> dict[str, str]:
        """The server's and pgvector's versions (what ``reverie status`` names)."""
        with self.connection() as conn:
            server = conn.execute("SHOW server_version").fetchone()[0]
            row = conn.execute(
                "SELECT extversion FROM pg_extension WHERE extname = 'vector'"
            ).fetchone()
        return {"server_version": str(server), "pgvector_version": str(row[0]) if row else ""}

    def close(self) -> None:
        self.pool.close()


_SHARED: dict[str, Database] = {}
_SHARED_LOCK = threading.Lock()


def shared(dsn: str) -> Database:
    """One pool per DSN in this process, whatever the number of tenants using it."""
    if not dsn:
        raise IndexUnusable("index_backend = postgres needs index_dsn (a PostgreSQL DSN)")
    with _SHARED_LOCK:
        db = _SHARED.get(dsn)
        if db is None:
            db = _SHARED[dsn] = Database(dsn)
        return db


def close_shared(dsn: str) -> None:
    """Close the pool of ``dsn`` if this process opened one (tests, a tenant removed)."""
    with _SHARED_LOCK:
        db = _SHARED.pop(dsn, None)
    if db is not None:
        db.close()


__all__ = [
    "MIGRATIONS",
    "SCHEMA_VERSION",
    "Database",
    "applied",
    "close_shared",
    "hnsw_index",
    "migrate",
    "shared",
]
