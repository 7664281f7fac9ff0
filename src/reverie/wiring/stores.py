"""Where the derived per-agent stores live besides the index: the recall log in the
state dir (``recall.sqlite``), or with ``index_backend = "postgres"`` the tenant's rows
of the shared database (issue 23; the tenant is ``index_tenant``, else the agent)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..settings import Settings
from ..storage.workspace import Workspace

if TYPE_CHECKING:
    from ..recall.log_port import RecallLogPort


def on_postgres(settings: Settings) -> bool:
    return settings.index_backend == "postgres"


def tenant(settings: Settings) -> str:
    """This agent's ``tenant_id`` in the shared PostgreSQL database."""
    return settings.index_tenant or settings.agent


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


__all__ = ["has_recall_log", "on_postgres", "open_recall_log", "tenant"]
