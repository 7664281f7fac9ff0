"""Where the small stores of one agent live besides the index: the recall log, the
intents table and the pending requests in its state dir (SQLite, JSON), or with
``index_backend = "postgres"`` the tenant's rows of shared tables in the index's
database (issue 23), so a hosted server's state dir holds no ``recall.sqlite``,
``intents.sqlite`` or ``curation/pending.json``."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING

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


def intent_table(settings: Settings, ws: Workspace) -> IntentTable:
    from ..intents.port import IntentTable

    if on_postgres(settings):
        from ..intents.pg_store import PgIntents
        from ..storage.index.pg_schema import shared

        dsn, who = settings.index_dsn, tenant(settings)
        return IntentTable(lambda: PgIntents(shared(dsn), who), lambda: True)
    from ..intents.store import Store

    path = ws.intents_db_path
    return IntentTable(lambda: Store(path), path.exists)


def request_store(settings: Settings, ws: Workspace, now: Callable[[], datetime]) -> RequestStore:
    if on_postgres(settings):
        from ..curation.pg_requests import PgRequests
        from ..storage.index.pg_schema import shared

        dsn, who = settings.index_dsn, tenant(settings)
        return PgRequests(lambda: shared(dsn), who, now=now, max_pending=settings.pending_max)
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
