"""The adapters under the facade: settings, clock, workspace, index connection,
embedder, searcher, recall log and LLM providers, built lazily and closed together,
plus the index's own upkeep (init, sync, dirty marks).

:class:`reverie.engine.Reverie` builds on this; the capabilities it wires live in
their own packages.
"""

from __future__ import annotations

import contextlib
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Self

from .clock import Clock
from .errors import WorkspaceError
from .llm.base import LLM  # the facade's annotations name real classes
from .llm.factory import Purpose, make_llm
from .settings import Settings
from .storage.index.db import Connection, connect, ensure_schema
from .storage.index.query import is_dirty
from .storage.workspace import Workspace

if TYPE_CHECKING:  # imported where first used: a one-shot hook never needs them
    from .recall.log import RecallLog
    from .recall.search import Searcher
    from .storage.embedders.base import Embedder
    from .storage.index.sync import Progress, SyncStats


class Unset:
    """Marks an argument not given (None is a value: "no embedder", "no model")."""


UNSET = Unset()
Projects = frozenset[str] | set[str] | tuple[str, ...]


class Adapters:
    """The lazily built adapters of one agent's memory, and the index's upkeep."""

    def __init__(
        self,
        settings: Settings,
        *,
        clock: Clock | None = None,
        embedder: Embedder | Unset | None = UNSET,
        llm: LLM | Unset | None = UNSET,
    ) -> None:
        self.settings = settings
        self.clock = clock or Clock.from_env()
        self.workspace = Workspace(
            Path(settings.workspace), Path(settings.state_dir), settings.agent
        )
        self._embedder = embedder
        self._llm_override = llm
        self._conn: Connection | None = None
        self._lock = threading.RLock()
        self._searcher: Searcher | None = None
        self._recall_log: RecallLog | None = None
        self._llms: dict[str, LLM | None] = {}

    # -- adapters --------------------------------------------------------------------
    @property
    def embedder(self) -> Embedder | None:
        if isinstance(self._embedder, Unset):
            from .storage.embedders.factory import make_embedder

            self._embedder = make_embedder(self.settings, models_dir=self.workspace.models_dir)
        return self._embedder

    @property
    def conn(self) -> Connection:
        with self._lock:
            if self._conn is None:
                self.workspace.agent_dir.mkdir(parents=True, exist_ok=True)
                self._conn = connect(self.workspace.index_path)
                ensure_schema(self._conn)
            return self._conn

    @property
    def searcher(self) -> Searcher:
        if self._searcher is None:
            from .recall.search import Searcher

            self._searcher = Searcher(self.settings, self.embedder)
        return self._searcher

    @property
    def recall_log(self) -> RecallLog:
        with self._lock:
            if self._recall_log is None:
                from .recall.log import RecallLog

                self._recall_log = RecallLog(self.workspace.recall_log_path)
            return self._recall_log

    def llm(self, purpose: Purpose = "main") -> LLM | None:
        """The configured LLM provider for ``purpose`` (None when ``llm = none``)."""
        if not isinstance(self._llm_override, Unset):
            return self._llm_override
        if purpose not in self._llms:
            self._llms[purpose] = make_llm(self.settings, purpose=purpose)
        return self._llms[purpose]

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
            if self._recall_log is not None:
                self._recall_log.close()
                self._recall_log = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- storage ---------------------------------------------------------------------
    def init(self) -> list[str]:
        """Create the workspace layout; never overwrites an existing file."""
        try:
            return self.workspace.init()
        except OSError as exc:
            where = exc.filename or self.workspace.root
            raise WorkspaceError(
                f"cannot create the workspace at {where}: {exc.strerror}"
            ) from None

    def index(
        self,
        *,
        force: bool = False,
        progress: Progress | None = None,
        wait: float | None = None,
    ) -> SyncStats:
        """Bring the index up to date with the files (``force``: rebuild them all).
        ``wait``: seconds to wait for another process's sync (default: as long as it
        takes); past it, :class:`ReverieError` says a sync is already running."""
        from .storage.index.sync import Syncer
        from .storage.locks import held

        self.workspace.require()
        busy = "another sync of this index is running; try again later"
        with held(self.workspace.sync_lock, wait=wait, busy=busy), self._lock:
            syncer = Syncer(
                self.conn, self.workspace, self.settings, self.embedder, now=self.clock.now
            )
            stats = syncer.run(force=force, progress=progress)
            self._sweep()
            return stats

    def _sweep(self) -> None:
        """Temp files a killed write left behind (``.<name>.<random>.tmp``, older than
        five minutes) in the folders we write to: the workspace root, every folder
        holding an indexed file, the agent's state folders. Never fails a sync, and never
        sweeps the only copy of a MEMORY.md/USER.md version: that becomes a pre-image."""
        from .storage.files import sweep_temp

        ws = self.workspace

        def keep(tmp: Path) -> bool:  # (dreaming imported only when an old temp is found)
            from .dreaming.safe_write import keep_only_copies

            return keep_only_copies(ws, self.settings.preimages_kept)(tmp)

        with contextlib.suppress(Exception):
            rows = self.conn.execute("SELECT path FROM sources").fetchall()
            folders = {ws.root, *((ws.root / str(r[0])).parent for r in rows)}
            agent = ws.agent_dir
            folders |= {agent, *(p for p in agent.iterdir() if p.is_dir())}
            for folder in folders:
                sweep_temp(folder, keep=keep)

    def mark_dirty(self) -> None:
        """Files changed: the next sync (daemon, MCP start-up, ``reverie index``) runs."""
        from .storage.index.sync import mark_dirty

        mark_dirty(self.conn)

    def _reindex(self) -> None:
        """Sync after our own write: dirty first, so a sync that fails leaves the index
        marked for the next one (the daemon's, MCP start-up's)."""
        with contextlib.suppress(Exception):
            self.mark_dirty()
        self.index()

    def is_dirty(self) -> bool:
        """Files changed since the last complete sync (or never synced)."""
        with self._lock:
            return is_dirty(self.conn)


__all__ = ["Adapters", "Projects"]
