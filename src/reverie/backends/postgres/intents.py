"""The intents table on PostgreSQL (issue 23): one tenant's rows of the shared
``intents`` and ``firings`` tables, every key and query holding ``tenant_id``.

Each change is one transaction that first locks the tenant's row of ``tenant_locks``
(``SELECT ... FOR UPDATE``, :mod:`reverie.backends.postgres.tenant`): two processes
firing the same intent run one after the other, and the second re-reads the first's
count, so an intent never fires past its budget or inside its cooldown (R-INTENT-2).
The rows are stored as the SQLite table stores them (UTC ISO strings, triggers as
JSON), through the same :func:`~reverie.intents.rows.to_row` /
:func:`~reverie.intents.rows.from_row`.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any

from ...intents.model import Intent
from ...intents.port import Blocked, conditions, to_forget
from ...intents.rows import COLUMNS, from_row, to_row, utc
from . import tenant as pg_tenant
from .schema import Database

STORE = "intents"


class _Tx:
    """The writes of one transaction (:class:`~reverie.intents.port.IntentTx`)."""

    def __init__(self, conn: Any, tenant: str) -> None:
        self.conn, self.tenant, self.wrote = conn, tenant, False

    def _run(self, sql: str, args: Sequence[Any]) -> Any:
        self.wrote = True
        return self.conn.execute(sql, args)

    def insert(self, intent: Intent) -> None:
        row = to_row(intent)
        marks = ", ".join("%s" for _ in range(len(COLUMNS) + 1))
        self._run(
            f"INSERT INTO intents (tenant_id, {', '.join(COLUMNS)}) VALUES ({marks})",
            (self.tenant, *row.values()),
        )

    def update(self, intent: Intent) -> None:
        row = to_row(intent)
        sets = ", ".join(f"{c} = %s" for c in COLUMNS[1:])
        self._run(
            f"UPDATE intents SET {sets} WHERE tenant_id = %s AND id = %s",
            (*list(row.values())[1:], self.tenant, intent.id),
        )

    def fired(self, intent_id: str, at: datetime, channel: str, detail: str) -> None:
        self._run(
            "INSERT INTO firings (tenant_id, intent_id, at, channel, detail) "
            "VALUES (%s, %s, %s, %s, %s)",
            (self.tenant, intent_id, utc(at), channel, detail),
        )

    def count(self, statuses: Sequence[str], kind: str | None = None) -> int:
        terms, args = conditions("%s", statuses=statuses, kind=kind)
        sql = f"SELECT count(*) FROM intents WHERE tenant_id = %s AND {' AND '.join(terms)}"
        return int(self.conn.execute(sql, (self.tenant, *args)).fetchone()[0])

    def expire(self, now: str, stale: str) -> int:
        n = self.conn.execute(
            "UPDATE intents SET status = 'expired', ended = %s WHERE tenant_id = %s AND "
            "((status = 'armed' AND expires IS NOT NULL AND expires <= %s) "
            "OR (status = 'pending' AND created <= %s))",
            (now, self.tenant, now, stale),
        ).rowcount
        self.wrote = self.wrote or n > 0
        return int(n)


class PgIntents:
    """:class:`~reverie.intents.port.IntentStore` of tenant ``tenant`` in database ``db``."""

    backend = "postgres"

    def __init__(self, db: Database, tenant: str) -> None:
        self.db, self.tenant = db, tenant
        self._mine = 0  # the version bumps this store committed itself
        self._lock = threading.Lock()

    @contextmanager
    def transaction(self) -> Iterator[_Tx]:
        """One transaction holding the tenant's lock row; reads in it join it."""
        with self.db.transaction() as conn:
            pg_tenant.lock_row(conn, self.tenant, STORE)
            tx = _Tx(conn, self.tenant)
            yield tx
            if tx.wrote:
                pg_tenant.bump(conn, self.tenant, STORE)
        if tx.wrote:  # committed
            with self._lock:
                self._mine += 1

    def version(self) -> int:
        """The tenant's version less this store's own bumps: as SQLite's
        ``data_version``, it changes only when another writer committed (the service
        updates its armed index in place after its own firings)."""
        with self._lock:
            mine = self._mine
        return pg_tenant.version(self.db, self.tenant, STORE) - mine

    def select(self, **where: Any) -> list[Intent]:
        terms, args = conditions("%s", **where)
        cond = " AND ".join(["tenant_id = %s", *terms])
        sql = f"SELECT {', '.join(COLUMNS)} FROM intents WHERE {cond} ORDER BY created, id"
        with self.db.connection() as conn:
            return [from_row(r) for r in conn.execute(sql, (self.tenant, *args)).fetchall()]

    def firings(self, intent_id: str) -> list[tuple[str, str, str]]:
        with self.db.connection() as conn:
            rows = conn.execute(
                "SELECT at, channel, detail FROM firings WHERE tenant_id = %s AND intent_id = %s "
                "ORDER BY id",
                (self.tenant, intent_id),
            ).fetchall()
        return [(str(a), str(c), str(d)) for a, c, d in rows]

    def forget(self, blocked: Blocked, *, dry_run: bool) -> int:
        """This tenant's rows only, read and changed under its lock (a dry run only
        reads); then the tables are vacuumed (no old row version keeps the text)."""
        if dry_run:
            with self.db.connection() as conn:
                return len(self._to_forget(conn, blocked)[0])
        with self.transaction() as tx:
            gone, fired = self._to_forget(tx.conn, blocked)
            t = (self.tenant,)
            if gone:
                tx._run(
                    "DELETE FROM firings WHERE tenant_id = %s AND intent_id = ANY(%s)", (*t, gone)
                )
                tx._run("DELETE FROM intents WHERE tenant_id = %s AND id = ANY(%s)", (*t, gone))
            if fired:
                sql = "UPDATE firings SET detail = '' WHERE tenant_id = %s AND id = ANY(%s)"
                tx._run(sql, (*t, fired))
        if gone or fired:
            pg_tenant.vacuum(self.db, "intents", "firings")
        return len(gone)

    def _to_forget(self, conn: Any, blocked: Blocked) -> tuple[list[str], list[Any]]:
        t = (self.tenant,)
        rows = conn.execute("SELECT id, text, triggers FROM intents WHERE tenant_id = %s", t)
        details = conn.execute("SELECT id, detail FROM firings WHERE tenant_id = %s", t)
        return to_forget(rows.fetchall(), details.fetchall(), blocked)

    def close(self) -> None:
        """The database (shared by the tenants) is closed by its owner."""


__all__ = ["PgIntents"]
