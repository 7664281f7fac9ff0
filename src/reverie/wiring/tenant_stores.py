"""Where the small stores of one agent live besides the index: the recall log, the
intents table and the pending requests in its state dir (SQLite, JSON), or with
``index_backend = "postgres"`` the tenant's rows of shared tables in the index's
database (issue 23), so a hosted server's state dir holds no ``recall.sqlite``,
``intents.sqlite`` or ``curation/pending.json``."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..settings import Settings
from ..storage.workspace import Workspace

if TYPE_CHECKING:  # the PostgreSQL modules load only on that backend
    from ..curation.requests import RequestStore
    from ..intents.port import IntentTable
    from ..recall.log_port import RecallLogPort


def tenant(settings: Settings) -> str:
    """The tenant id of every row this agent owns on PostgreSQL."""
    return settings.index_tenant or settings.agent


def on_postgres(settings: Settings) -> bool:
    return settings.index_backend == "postgres"


MOVED = ".moved-to-postgres"  # the local store, once its rows are in the tenant


def carry_intents(ws: Workspace, store: Any) -> None:
    """A workspace switched to PostgreSQL keeps its intents: the local table's rows
    (armed, pending, done, with their states and dates) are added to the tenant's once,
    then the SQLite file is renamed ``intents.sqlite.moved-to-postgres`` (kept, never
    read again). A row the tenant holds already is not added twice."""
    path = ws.intents_db_path
    if not path.is_file():
        return
    from ..intents.store import Store

    local = Store(path)
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


def carry_requests(ws: Workspace, store: Any, now: Callable[[], datetime]) -> None:
    """The same for the owner's pending requests (``curation/pending.json``)."""
    path = ws.pending_path
    if not path.is_file():
        return
    from ..curation.requests import Requests

    store.adopt(Requests(ws, now=now, max_pending=10**9).load())
    with contextlib.suppress(FileNotFoundError):
        path.rename(path.with_name(path.name + MOVED))


def intent_table(settings: Settings, ws: Workspace) -> IntentTable:
    from ..intents.port import IntentTable

    if on_postgres(settings):
        from ..intents.pg_store import PgIntents
        from ..storage.index.pg_schema import shared

        dsn, who = settings.index_dsn, tenant(settings)

        def open_pg() -> PgIntents:
            store = PgIntents(shared(dsn), who)
            carry_intents(ws, store)
            return store

        return IntentTable(open_pg, lambda: True)
    from ..intents.store import Store

    path = ws.intents_db_path
    return IntentTable(lambda: Store(path), path.exists)


def request_store(settings: Settings, ws: Workspace, now: Callable[[], datetime]) -> RequestStore:
    if on_postgres(settings):
        from ..curation.pg_requests import PgRequests
        from ..storage.index.pg_schema import shared

        dsn, who = settings.index_dsn, tenant(settings)
        store = PgRequests(lambda: shared(dsn), who, now=now, max_pending=settings.pending_max)
        carry_requests(ws, store, now)
        return store
    from ..curation.requests import Requests

    return Requests(ws, now=now, max_pending=settings.pending_max)


def open_recall_log(settings: Settings, workspace: Workspace) -> RecallLogPort:
    """The recall log: the tenant's rows on PostgreSQL, else ``recall.sqlite``."""
    if on_postgres(settings):
        from ..recall.log_pg import PgRecallLog
        from ..storage.index.pg_schema import shared

        return PgRecallLog(shared(settings.index_dsn), tenant(settings))
    from ..recall.log import RecallLog

    return RecallLog(workspace.recall_log_path)


def has_recall_log(settings: Settings, workspace: Workspace) -> bool:
    """False only while the SQLite file was never created (a dry run does not create
    it); the PostgreSQL tables exist once the database is migrated."""
    return on_postgres(settings) or workspace.recall_log_path.exists()


__all__ = [
    "has_recall_log",
    "intent_table",
    "on_postgres",
    "open_recall_log",
    "request_store",
    "tenant",
]
