"""The per-tenant locks of the small PostgreSQL stores (intents, pending requests).

A change of one tenant's store locks that tenant's row of ``tenant_locks`` first
(``SELECT ... FOR UPDATE``): its changes run one after the other, as SQLite's ``BEGIN
IMMEDIATE`` runs one file's, so a count checked (a budget, a bound) still holds when
the transaction commits; another tenant's changes never wait for it. The row's
``version`` is bumped by each change that wrote, so a reader caching the rows (the
armed intents) sees another process's commit.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from typing import Any

from ...errors import ReverieError
from .schema import Database

SESSION_LOCK = 0x52455146  # pg_try_advisory_lock(class, hashtext(tenant:store)) ("REQF")


def lock_row(conn: Any, tenant: str, store: str) -> int:
    """Lock the tenant's row of ``store`` until the transaction ends; its version."""
    sql = "SELECT version FROM tenant_locks WHERE tenant_id = %s AND store = %s FOR UPDATE"
    row = conn.execute(sql, (tenant, store)).fetchone()
    if row is None:  # the tenant's first change: two at once insert one row
        conn.execute(
            "INSERT INTO tenant_locks (tenant_id, store) VALUES (%s, %s) ON CONFLICT DO NOTHING",
            (tenant, store),
        )
        row = conn.execute(sql, (tenant, store)).fetchone()
    return int(row[0])


def bump(conn: Any, tenant: str, store: str) -> None:
    """A change was written (inside the transaction that locked the row)."""
    conn.execute(
        "UPDATE tenant_locks SET version = version + 1 WHERE tenant_id = %s AND store = %s",
        (tenant, store),
    )


def version(db: Database, tenant: str, store: str) -> int:
    with db.connection() as conn:
        row = conn.execute(
            "SELECT version FROM tenant_locks WHERE tenant_id = %s AND store = %s",
            (tenant, store),
        ).fetchone()
    return int(row[0]) if row else 0


@contextlib.contextmanager
def held(db: Database, tenant: str, store: str, *, wait: float = 60.0) -> Iterator[None]:
    """A lock of the tenant's ``store`` held across several transactions (a request
    confirmed: taken, carried out, decided), on a connection of its own: a session
    advisory lock, which the server releases if this process dies."""
    key = f"{tenant}:{store}"
    with db.connection() as conn:  # (a failing server: IndexUnusable, as for any call)
        deadline = time.monotonic() + wait
        while not conn.execute(
            "SELECT pg_try_advisory_lock(%s::int, hashtext(%s))", (SESSION_LOCK, key)
        ).fetchone()[0]:
            if time.monotonic() >= deadline:
                raise ReverieError(f"the {store} of tenant {tenant!r} stayed busy for {wait:.0f} s")
            time.sleep(0.05)
        try:
            yield
        finally:
            conn.execute("SELECT pg_advisory_unlock(%s::int, hashtext(%s))", (SESSION_LOCK, key))


def vacuum(db: Database, *tables: str) -> None:
    """Dead row versions of ``tables`` reclaimed (a forget leaves no old copy in them)."""
    with db.pool.connection() as conn:
        conn.execute(f"VACUUM {', '.join(tables)}")


def _tenant_tables(conn: Any) -> list[str]:
    """Every table of the schema with a ``tenant_id`` column (read from the catalog, so
    a table a later migration adds is never missed)."""
    rows = conn.execute(
        "SELECT DISTINCT table_name FROM information_schema.columns WHERE column_name = "
        "'tenant_id' AND table_schema = current_schema() ORDER BY table_name"
    ).fetchall()
    return [str(r[0]) for r in rows]


def tenant_rows(db: Database, tenant: str) -> int:
    """How many rows of every table belong to ``tenant``."""
    with db.connection() as conn:
        return sum(
            int(
                conn.execute(
                    f'SELECT count(*) FROM "{t}" WHERE tenant_id = %s', (tenant,)
                ).fetchone()[0]
            )
            for t in _tenant_tables(conn)
        )


def drop_tenant(db: Database, tenant: str) -> int:
    """Delete every row of ``tenant`` in one transaction, then vacuum those tables (no
    old row version keeps its text); how many rows."""
    with db.transaction() as conn:
        tables = _tenant_tables(conn)
        gone = sum(
            conn.execute(f'DELETE FROM "{t}" WHERE tenant_id = %s', (tenant,)).rowcount
            for t in tables
        )
    if tables:
        vacuum(db, *tables)
    return int(gone)


__all__ = [
    "SESSION_LOCK",
    "bump",
    "drop_tenant",
    "held",
    "lock_row",
    "tenant_rows",
    "vacuum",
    "version",
]
