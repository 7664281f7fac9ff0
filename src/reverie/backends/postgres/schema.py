"""PostgreSQL adapter: the shared database and its pool (issue 23), migrated on open
(:mod:`.migrations`).

One database holds the derived index of many tenants: every row carries
``tenant_id``, every key starts with it, every query filters by it. The Markdown
stays the truth (one workspace per tenant), so all of it can be rebuilt.

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
from .migrations import SCHEMA_VERSION, applied, migrate

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

    def schema(self) -> tuple[int, bool]:
        """The migration applied, and whether it is this version's (``reverie status``)."""
        with self.connection() as conn:
            version = applied(conn)
        return version, version == SCHEMA_VERSION

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


__all__ = ["Database", "close_shared", "shared"]
