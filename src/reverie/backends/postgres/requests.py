"""The requests waiting for the owner on PostgreSQL (issue 23): one tenant's rows of
the shared ``requests`` table, every key and query holding ``tenant_id``.

The same rules as the file (:class:`reverie.backends.sqlite.requests.Requests`): a
request is added by :meth:`reverie.curation.requests.RequestStore.add`, at most
``pending_max`` wait per tenant (counted in the transaction that adds, which locks the
tenant's row of ``tenant_locks``), a decision is one transaction, and
:meth:`PgRequests.lock` (held by a confirm while it carries the request out) is a
session advisory lock of the tenant's requests.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from datetime import datetime
from typing import Any

from ...curation.requests import MAX_PENDING, Request, RequestStore, forgotten
from ...errors import ReverieError
from . import tenant as pg_tenant
from .schema import Database

STORE = "requests"
FIELDS = ("id", "kind", "text", "new_text", "at", "by", "status", "decided", "key", "reason")
_COLUMNS = ", ".join("requested_by" if f == "by" else f for f in FIELDS)


class PgRequests(RequestStore):
    """:class:`reverie.curation.requests.RequestStore` of tenant ``tenant`` in the
    database ``db`` returns (opened on first use: building the curation service
    connects to nothing)."""

    def __init__(
        self,
        db: Callable[[], Database],
        tenant: str,
        *,
        now: Callable[[], datetime],
        max_pending: int = MAX_PENDING,
    ) -> None:
        self._db, self.tenant, self.now, self.max_pending = db, tenant, now, max_pending

    @property
    def db(self) -> Database:
        return self._db()

    def _rows(self, conn: Any, where: str = "", *args: Any) -> list[Request]:
        rows = conn.execute(
            f"SELECT {_COLUMNS} FROM requests WHERE tenant_id = %s {where} ORDER BY seq",
            (self.tenant, *args),
        ).fetchall()
        return [Request(**dict(zip(FIELDS, r, strict=True))) for r in rows]

    def load(self) -> list[Request]:
        with self.db.connection() as conn:
            return self._rows(conn)

    def lock(self) -> AbstractContextManager[object]:
        return pg_tenant.held(self.db, self.tenant, STORE)

    @contextmanager
    def _locked(self) -> Iterator[Any]:
        """One transaction holding the tenant's lock row of the requests."""
        with self.db.transaction() as conn:
            pg_tenant.lock_row(conn, self.tenant, STORE)
            yield conn

    def _append(self, req: Request) -> None:
        with self._locked() as conn:
            (waiting,) = conn.execute(
                "SELECT count(*) FROM requests WHERE tenant_id = %s AND status = 'pending'",
                (self.tenant,),
            ).fetchone()
            self.room(waiting)
            self._insert(conn, req)

    def _insert(self, conn: Any, req: Request) -> None:
        conn.execute(
            f"INSERT INTO requests (tenant_id, {_COLUMNS}) "
            f"VALUES (%s, {', '.join('%s' for _ in FIELDS)})",
            (self.tenant, *[getattr(req, f) for f in FIELDS]),
        )

    def adopt(self, items: list[Request]) -> int:
        """Requests kept before this workspace moved to PostgreSQL (its
        ``pending.json``), as they were: ids, states and dates kept; one already here
        is not added twice. How many were added."""
        added = 0
        with self._locked() as conn:
            have = {r.id for r in self._rows(conn)}
            for req in items:
                if req.id not in have:
                    self._insert(conn, req)
                    added += 1
        return added

    def take(self, rid: str) -> Request | None:
        """The request ``rid`` if it is still pending (None: no such request)."""
        with self.db.connection() as conn:
            found = self._rows(conn, "AND id = %s", rid)
        if found and found[0].status != "pending":
            raise ReverieError(f"request {rid} is already {found[0].status}")
        return found[0] if found else None

    def decide(self, rid: str, status: str) -> None:
        with self._locked() as conn:
            conn.execute(
                "UPDATE requests SET status = %s, decided = %s WHERE tenant_id = %s AND id = %s",
                (status, self.now().isoformat(timespec="seconds"), self.tenant, rid),
            )

    def forget(self, blocked: Callable[[str], bool], at: str, *, dry_run: bool) -> int:
        """This tenant's rows only, read and changed under its lock (a dry run only
        reads); then the table is vacuumed (no old row version keeps the text)."""
        if dry_run:
            return sum(forgotten(r, blocked, at) for r in self.load())
        with self._locked() as conn:
            hit = [r for r in self._rows(conn) if forgotten(r, blocked, at)]
            if hit:
                with conn.cursor() as cur:
                    cur.executemany(
                        "UPDATE requests SET text = %s, status = %s, decided = %s "
                        "WHERE tenant_id = %s AND id = %s",
                        [(r.text, r.status, r.decided, self.tenant, r.id) for r in hit],
                    )
        if hit:
            pg_tenant.vacuum(self.db, "requests")
        return len(hit)


__all__ = ["PgRequests"]
