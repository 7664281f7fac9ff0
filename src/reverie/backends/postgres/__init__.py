"""The hosted backend: the agent's rows of shared tables in PostgreSQL (issue 23), each
keyed by its tenant, so its state folder holds no ``index.sqlite``, ``recall.sqlite``,
``intents.sqlite`` or ``curation/pending.json``.

A workspace switched to PostgreSQL by the setting alone keeps its intents and pending
requests: the local files' rows (states and dates kept) are added to the tenant's on
first use, then the files are renamed ``*.moved-to-postgres`` (kept, never read again).
``reverie backend move`` carries everything instead (:mod:`reverie.wiring.backend_move`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ...settings import Settings
from ...storage.workspace import Workspace

if TYPE_CHECKING:
    from ...curation.requests import RequestStore
    from ...intents.port import IntentStore, IntentTable
    from ...recall.context import TriggerSource
    from ...recall.log_port import RecallLogPort
    from ...storage.index.look import IndexLook
    from ...storage.index.port import IndexPort
    from .. import Backend
    from .schema import Database

MOVED = ".moved-to-postgres"  # the local store, once its rows are in the tenant


def tenant_of(settings: Settings) -> str:
    """The tenant id of every row this agent owns."""
    return settings.index_tenant or settings.agent


class PostgresBackend:
    """:class:`reverie.backends.Backend` in a PostgreSQL database, one tenant's rows."""

    name = "postgres"

    def __init__(self, settings: Settings, workspace: Workspace) -> None:
        self.settings, self.ws = settings, workspace
        self.tenant = tenant_of(settings)

    def _db(self) -> Database:
        from .schema import shared

        return shared(self.settings.index_dsn)

    def describe(self) -> str:
        return f"postgres (tenant {self.tenant!r})"

    def look(self) -> IndexLook:
        """One connection of its own, plain SELECTs of this tenant's rows."""
        import psycopg

        from ...errors import ReverieError
        from ...storage.index.look import IndexLook, NoIndex

        tenant, dsn = self.tenant, self.settings.index_dsn
        if not dsn:
            raise ReverieError("index_backend = postgres needs index_dsn (a PostgreSQL DSN)")
        with psycopg.connect(dsn, autocommit=True, connect_timeout=5) as conn:
            has = conn.execute("SELECT to_regclass('sources') IS NOT NULL").fetchone()
            if not has or not has[0]:
                raise NoIndex(f"no index tables in the database (tenant {tenant})")
            q = "SELECT path, size, mtime_ns FROM sources WHERE tenant_id = %s"
            rows = conn.execute(q, (tenant,)).fetchall()
            q = "SELECT key, value FROM meta WHERE tenant_id = %s AND key IN ('dirty', 'embedder')"
            meta = {str(k): str(v) for k, v in conn.execute(q, (tenant,)).fetchall()}
        if not rows and not meta:
            raise NoIndex(f"no index rows for tenant {tenant} in the database")
        return IndexLook.of(f"PostgreSQL, tenant {tenant}", rows, meta)

    def rebuild_hint(self) -> str:
        return "check index_dsn and that the server runs (`reverie settings`), then reverie index"

    def index(self) -> IndexPort:
        from .index import PgIndex

        return PgIndex(self._db(), self.tenant, cache_rows=self.settings.embed_cache_rows)

    def triggers(self, port: Callable[[], IndexPort]) -> TriggerSource:
        from ...storage.index.port import PortTriggers

        return PortTriggers(port())

    def close(self) -> None:
        """The database is shared by the tenants: closed by its owner."""

    def recall_log(self) -> RecallLogPort:
        from .recall_log import PgRecallLog

        return PgRecallLog(self._db(), self.tenant)

    def has_recall_log(self) -> bool:
        return True  # the tables exist once the database is migrated

    def intent_store(self) -> IntentStore:
        from .intents import PgIntents

        return PgIntents(self._db(), self.tenant)

    def intent_table(self) -> IntentTable:
        from ...intents.port import IntentTable

        def open_carried() -> IntentStore:
            store = self.intent_store()
            self._carry_intents(store)
            return store

        return IntentTable(open_carried, lambda: True)

    def intents_may_exist(self) -> bool:
        return True

    def requests(
        self, now: Callable[[], datetime], max_pending: int, *, carry: bool = True
    ) -> RequestStore:
        from .requests import PgRequests

        store = PgRequests(self._db, self.tenant, now=now, max_pending=max_pending)
        if carry:
            self._carry_requests(store, now)
        return store

    def held(self) -> list[str]:
        from .tenant import tenant_rows

        n = tenant_rows(self._db(), self.tenant)
        return [f"{n} row(s) of tenant {self.tenant!r}"] if n else []

    def drop(self) -> list[str]:
        from .tenant import drop_tenant

        return [f"{drop_tenant(self._db(), self.tenant)} row(s) of tenant {self.tenant!r}"]

    # -- what a switch by the setting alone carries over ----------------------------------
    def _local(self) -> Backend:
        """The default backend's stores in the state folder, which a switch leaves."""
        from ..sqlite import SqliteBackend

        return SqliteBackend(self.settings, self.ws)

    def _carry_intents(self, store: Any) -> None:
        path = self.ws.intents_db_path
        if not path.is_file():
            return
        local = self._local().intent_store()
        try:
            rows = local.select()
        finally:
            local.close()
        with store.transaction() as tx:
            have = {i.id for i in store.select()}
            for intent in rows:
                if intent.id not in have:
                    tx.insert(intent)
        with contextlib.suppress(FileNotFoundError):  # another process moved it first
            path.rename(path.with_name(path.name + MOVED))

    def _carry_requests(self, store: Any, now: Callable[[], datetime]) -> None:
        path = self.ws.pending_path
        if not path.is_file():
            return
        store.adopt(self._local().requests(now, 10**9).load())
        with contextlib.suppress(FileNotFoundError):
            path.rename(path.with_name(path.name + MOVED))


__all__ = ["MOVED", "PostgresBackend", "tenant_of"]
