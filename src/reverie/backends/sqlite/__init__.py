"""The default backend: every store a file in the agent's state folder (SQLite, WAL;
the pending requests a JSON file)."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...settings import Settings
from ...storage.workspace import Workspace, warm_snapshot_dir

if TYPE_CHECKING:
    from ...curation.requests import RequestStore
    from ...intents.port import IntentStore, IntentTable
    from ...recall.context import TriggerSource
    from ...recall.log_port import RecallLogPort
    from ...storage.index.db import Connection
    from ...storage.index.port import IndexPort


def _may_exist(path: Path) -> bool:
    """False only when ``path`` is surely absent (a failing look-up is left to the step)."""
    try:
        return path.exists()
    except OSError:
        return True


class SqliteBackend:
    """:class:`reverie.backends.Backend` in the state folder."""

    name = "sqlite"

    def __init__(self, settings: Settings, workspace: Workspace) -> None:
        self.settings, self.ws = settings, workspace

    def describe(self) -> str:
        return "sqlite"

    def index(self, conn: Callable[[], Connection], lanes: Any) -> IndexPort:
        from ...storage.index.sqlite_port import SqliteIndex

        return SqliteIndex(
            conn(),
            vectors=lanes.vectors if lanes else None,
            keywords=lanes.keywords if lanes else None,
            paths=lanes.paths if lanes else None,
            cache_rows=self.settings.embed_cache_rows,
        )

    def triggers(
        self, port: Callable[[], IndexPort], conn: Callable[[], Connection]
    ) -> TriggerSource:
        from ...storage.index.query import TriggerRows

        return TriggerRows(conn())

    def recall_log(self) -> RecallLogPort:
        from .recall_log import RecallLog

        return RecallLog(self.ws.recall_log_path)

    def has_recall_log(self) -> bool:
        return self.ws.recall_log_path.exists()

    def intent_table(self) -> IntentTable:
        from ...intents.port import IntentTable

        path = self.ws.intents_db_path
        return IntentTable(self.intent_store, path.exists)

    def intent_store(self) -> IntentStore:
        from .intents import Store

        return Store(self.ws.intents_db_path)

    def intents_may_exist(self) -> bool:
        return _may_exist(self.ws.intents_db_path)

    def requests(
        self, now: Callable[[], datetime], max_pending: int, *, carry: bool = True
    ) -> RequestStore:
        from .requests import Requests

        return Requests(self.ws, now=now, max_pending=max_pending)

    def held(self) -> list[str]:
        keep = (self.ws.recall_log_path, self.ws.intents_db_path, self.ws.pending_path)
        return [str(p) for p in keep if p.exists()]

    def _files(self) -> list[Path]:
        ws = self.ws
        paths = [ws.index_path, ws.recall_log_path, ws.intents_db_path]
        files = [Path(f"{p}{x}") for p in paths for x in ("", "-wal", "-shm")]
        return [*files, ws.pending_path, warm_snapshot_dir(ws.index_path)]

    def drop(self) -> list[str]:
        gone = []
        for p in self._files():
            if p.is_dir():
                shutil.rmtree(p, ignore_errors=True)
            elif p.exists():
                p.unlink()
            else:
                continue
            gone.append(str(p))
        return gone


__all__ = ["SqliteBackend"]
