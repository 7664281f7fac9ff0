"""The default backend: every store a file in the agent's state folder, opened the one
way (:mod:`.opener`: SQLite, WAL; the pending requests a JSON file).

The index (``index.sqlite``: :mod:`.db` its schema, :mod:`.query` its reads,
:mod:`.store` its writes, :mod:`.cache` the embedding cache in it, :mod:`.index` the
port over them, :mod:`.vector_lane` and :mod:`.keyword` the warm lanes' SQLite side,
:mod:`.warm_files` their snapshots beside it), the recall log (:mod:`.recall_log`), the
standing intents (:mod:`.intents`) and the pending requests (:mod:`.requests`).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from ...settings import Settings
from ...storage.workspace import Workspace, warm_snapshot_dir

if TYPE_CHECKING:
    from ...curation.requests import RequestStore
    from ...intents.port import IntentStore, IntentTable
    from ...recall.context import TriggerSource
    from ...recall.log_port import RecallLogPort
    from ...storage.index.look import IndexLook
    from ...storage.index.port import IndexPort
    from .db import Connection
    from .index import Lanes


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
        self._conn: Connection | None = None  # the index's, shared by its port and triggers
        self._lanes: Lanes | None = None  # one warm state, whichever port is open

    def describe(self) -> str:
        return "sqlite"

    def look(self) -> IndexLook:
        from ...storage.index.look import IndexLook, NoIndex
        from .db import connect

        path = self.ws.index_path
        if not path.is_file():
            raise NoIndex(f"no index at {path}")
        conn = connect(path, readonly=True)
        try:
            rows = conn.execute("SELECT path, size, mtime_ns FROM sources").fetchall()
            q = "SELECT key, value FROM meta WHERE key IN ('dirty', 'embedder')"
            meta = dict(conn.execute(q).fetchall())
        finally:
            conn.close()
        return IndexLook.of(str(path), rows, meta)

    def rebuild_hint(self) -> str:
        import shlex

        path = shlex.quote(str(self.ws.index_path))
        return f"rm {path} && reverie index  (the index is derived: rebuilt)"

    def _index_conn(self) -> Connection:
        """The index file, opened (and its schema made) on first use."""
        if self._conn is None:
            from .db import connect, ensure_schema

            self.ws.agent_dir.mkdir(parents=True, exist_ok=True)
            conn = connect(self.ws.index_path)
            try:
                ensure_schema(conn)
            except BaseException:
                conn.close()
                raise
            self._conn = conn
        return self._conn

    def index(self) -> IndexPort:
        from .index import Lanes, SqliteIndex

        if self._lanes is None:
            self._lanes = Lanes()
        conn = self._index_conn()
        return SqliteIndex(conn, lanes=self._lanes, cache_rows=self.settings.embed_cache_rows)

    def triggers(self, port: Callable[[], IndexPort]) -> TriggerSource:
        from .trigger_rows import TriggerRows

        return TriggerRows(self._index_conn())  # (the port is not needed: no lane loads)

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

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
        import shutil  # (not on the per-prompt path)

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
