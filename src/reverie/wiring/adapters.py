"""The adapters under the facade (settings, clock, workspace, the backend and its index
port, embedder, searcher, recall log, LLMs), built lazily and closed together, plus the
index's own upkeep (init, sync, refresh, dirty marks) and the wait policy of every lock
a door waits on (Waits).

:class:`reverie.engine.Reverie` *holds* one :class:`Adapters` (composition, not
inheritance); nothing but the facade imports this module, so the index port, the
searcher and the recall log never reach a door.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..backends import Backend, backend_for
from ..clock import Clock
from ..errors import ProviderError, WorkspaceError
from ..records import Record
from ..settings import Settings
from ..storage.workspace import Workspace

if TYPE_CHECKING:  # imported where first used: a one-shot hook never needs them
    from ..curation.service import Curation
    from ..intents import Intents
    from ..llm.base import LLM
    from ..llm.factory import Purpose
    from ..recall.bootstrap import Bootstrapper
    from ..recall.context import TriggerIndex, TriggerSource, TurnContext
    from ..recall.log_port import RecallLogPort
    from ..recall.search import Searcher, SearchResponse
    from ..storage.embedders.base import Embedder
    from ..storage.index.port import IndexPort
    from ..storage.index.sync import Progress, SyncStats


class Unset:
    """Marks an argument not given (None is a value: "no embedder", "no model")."""


UNSET = Unset()
Projects = frozenset[str] | set[str] | tuple[str, ...]


def sealed(header: Mapping[str, Any], key: bytes) -> bool:
    """:func:`reverie.write.transcript.is_sealed`, imported when lane 2 first reads a
    transcript (the write flow is not on the per-prompt path)."""
    from ..write.transcript import is_sealed

    return is_sealed(header, key)


class Waits:
    """How long a verb waits for a lock another process holds, the same from every door
    (CLI, MCP server, review page, hooks, daemon). Past it the verb says the store is
    busy (or, for a refresh, searches the index as it is and says so)."""

    refresh = 10.0  # a search's sync-if-behind waiting for another sync
    owner_dream = 30.0  # promote, reject, restore waiting for a running dream
    dream = 600.0  # a dream waiting for another dream (nightly or by hand)


WAITS = Waits()


class Refresh(Record):
    """What a refresh did: ``synced`` the files changed (None: the index was current),
    or ``note`` says why the index may be behind (the sync failed or was busy)."""

    __slots__ = ("note", "synced")

    def __init__(self, synced: SyncStats | None = None, note: str | None = None) -> None:
        self.synced, self.note = synced, note


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
        self.backend: Backend = backend_for(settings, self.workspace)  # asked once
        self._embedder = embedder
        self._llm_override = llm
        self._port: IndexPort | None = None
        self.lock = threading.RLock()  # one index port shared by a server's threads
        self._searcher: Searcher | None = None
        self._recall_log: RecallLogPort | None = None
        self._llms: dict[str, LLM | None] = {}
        self._bootstrapper: Bootstrapper | None = None

    # -- adapters --------------------------------------------------------------------
    def loaded_embedder(self) -> Embedder | None:
        """The embedder if one is built already (never loads a model)."""
        return None if isinstance(self._embedder, Unset) else self._embedder

    @property
    def embedder(self) -> Embedder | None:
        if isinstance(self._embedder, Unset):
            from ..storage.embedders.factory import make_embedder

            self._embedder = make_embedder(self.settings, models_dir=self.workspace.models_dir)
        return self._embedder

    @property
    def port(self) -> IndexPort:
        """The derived index behind its backend's port, opened on first use."""
        with self.lock:
            if self._port is None:
                self._port = self.backend.index()
            return self._port

    def triggers_source(self) -> TriggerSource:
        """Where the trigger index reads its rows (the SQLite one can also snapshot)."""
        return self.backend.triggers(lambda: self.port)

    @property
    def searcher(self) -> Searcher:
        if self._searcher is None:
            from ..recall.search import Searcher

            self._searcher = Searcher(self.settings, self.embedder)
        return self._searcher

    @property
    def recall_log(self) -> RecallLogPort:
        with self.lock:
            if self._recall_log is None:
                self._recall_log = self.backend.recall_log()
            return self._recall_log

    def existing_recall_log(self) -> RecallLogPort | None:
        """The recall log if there is one (a dry run never creates ``recall.sqlite``)."""
        return self.recall_log if self.backend.has_recall_log() else None

    def open_recall_log(self) -> None:
        self.recall_log  # noqa: B018  (opens and caches it)

    def llm(self, purpose: Purpose = "main") -> LLM | None:
        """The configured LLM provider for ``purpose`` (None when ``llm = none``)."""
        if not isinstance(self._llm_override, Unset):
            return self._llm_override
        if purpose not in self._llms:
            from ..llm.factory import make_llm

            self._llms[purpose] = make_llm(self.settings, purpose=purpose)
        return self._llms[purpose]

    @property
    def bootstrapper(self) -> Bootstrapper:
        """The bootstrap files' reader (built on first use: not on the per-prompt path)."""
        if self._bootstrapper is None:
            from ..recall.bootstrap import Bootstrapper

            self._bootstrapper = Bootstrapper(self.workspace.root)
        return self._bootstrapper

    def search(self, query: str, projects: frozenset[str], **kw: Any) -> SearchResponse:
        """Lane 1 under the lock (a sync in flight is never half-seen)."""
        with self.lock:
            today = self.clock.today()
            return self.searcher.search(
                self.port, query, today=today, active_projects=projects, **kw
            )

    def add_triggers(
        self, ctx: TurnContext, triggers: TriggerIndex, projects: frozenset[str]
    ) -> None:
        """The trigger block of ``ctx`` (never raises, P5: a failure is a degraded note)."""
        from ..recall.context import add_triggers

        try:
            with self.lock:
                add_triggers(ctx, self.triggers_source(), triggers, self.settings, projects)
        except Exception as exc:  # memory failure never blocks a reply
            ctx.degraded.append(f"trigger injection skipped: {type(exc).__name__}: {exc}")

    def warm(self, triggers: TriggerIndex, *, lanes: bool = True) -> None:
        with self.lock:
            if lanes:
                self.port.warm()  # vectors and BM25 in memory, equal to the index's
            triggers.refresh(self.triggers_source(), precompile=True)

    def status(self) -> dict[str, Any]:
        try:
            embedder = self.embedder
            current = embedder.identity.label() if embedder else None
        except ProviderError as exc:  # status must work while a provider is down
            current = f"unreachable ({exc})"
        with self.lock:
            counts = self.port.counts(embedder=current)
        ws = self.workspace
        lite = counts["backend"] == "sqlite"  # (the state folder's files; else its name)
        where = {"index": ws.index_path, "recall_log": ws.recall_log_path}
        paths = {
            "workspace": str(ws.root),
            **{k: str(v) if lite else counts["backend"] for k, v in where.items()},
        }
        from ..sync.run import open_conflicts  # a sync conflict shows until the owner picks

        conflicts = open_conflicts(ws.root)
        return {**paths, **counts, "key_warning": ws.key_warning(), "sync_conflicts": conflicts}

    def finish_forget(self, curation: Callable[[], Curation]) -> None:
        """A forget killed halfway (its journal left in the state dir) is rolled forward
        before anything reads memory; never raises (P5: the next call tries again)."""
        with contextlib.suppress(Exception):  # an unreadable state dir included
            if self.workspace.forget_journal_path.exists():
                curation().resume()

    def limit_lane(self, seconds: float) -> None:
        s = self.settings
        if s.escalation and seconds < s.escalation_timeout:
            self.settings = s.replace(escalation_timeout=seconds)

    def curation(self, intents: Callable[[], Intents | None]) -> Curation:
        """The curation service over these adapters (``intents``: the intents service,
        whose pending proposals it lists)."""
        from ..curation.service import Curation

        ws = self.workspace
        return Curation(
            workspace=ws,
            preimages_kept=self.settings.preimages_kept,
            now=lambda: self.clock.now(),
            recall_log=self.existing_recall_log,
            index=lambda: self.port,
            reindex=self.reindex,
            requests=self.backend.requests(lambda: self.clock.now(), self.settings.pending_max),
            intents=intents,
        )

    def intents(self, settings: Settings, clock: Callable[[], Clock]) -> Intents:
        """The intents service on this backend's table (``settings``: the facade's
        first ones, which a lane's time limit never changes)."""
        from ..intents.service import Intents

        return Intents(self.workspace, settings, clock, self.backend.intent_table())

    def intents_may_exist(self) -> bool:
        """False only when there surely is no intent (no SQLite table): one stat."""
        return self.backend.intents_may_exist()

    def close(self) -> None:
        with self.lock:
            self._port = None
            self.backend.close()
            if self._recall_log is not None:
                self._recall_log.close()
                self._recall_log = None

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
        from ..storage.index.sync import Syncer
        from ..storage.locks import held

        self.workspace.require()
        busy = "another sync of this index is running; try again later"
        with held(self.workspace.sync_lock, wait=wait, busy=busy), self.lock:
            syncer = Syncer(
                self.port, self.workspace, self.settings, self.embedder, now=self.clock.now
            )
            stats = syncer.run(force=force, progress=progress)
            self._sweep()
            return stats

    def _sweep(self) -> None:
        """Temp files a killed write left behind (``.<name>.<random>.tmp``, older than
        five minutes) in the folders we write to: the workspace root, every folder
        holding an indexed file, the agent's state folders. Never fails a sync, and never
        sweeps the only copy of a MEMORY.md/USER.md version: that becomes a pre-image."""
        from ..storage.files import sweep_temp

        ws = self.workspace

        def keep(tmp: Path) -> bool:  # (dreaming imported only when an old temp is found)
            from ..dreaming.safe_write import keep_only_copies

            return keep_only_copies(ws, self.settings.preimages_kept)(tmp)

        with contextlib.suppress(Exception):
            folders = {ws.root, *((ws.root / path).parent for path in self.port.sources())}
            agent = ws.agent_dir
            folders |= {agent, *(p for p in agent.iterdir() if p.is_dir())}
            for folder in folders:
                sweep_temp(folder, keep=keep)

    def refresh(self, *, wait: float = WAITS.refresh) -> Refresh:
        """Sync when the files changed since the last sync (hand edits included); never
        raises (P5): a failed or busy sync becomes the note a search shows."""
        from ..storage.index.freshness import behind

        try:
            with self.lock:
                if not behind(self.port, self.workspace):
                    return Refresh()
            return Refresh(synced=self.index(wait=wait))
        except Exception as exc:
            return Refresh(note=f"the index may be behind the files (sync failed: {exc})")

    def unregister_under(self, folder: str) -> None:
        """Forget the registry rows of ``folder`` (its files' origin changed: the next
        sync re-reads them)."""
        with self.lock:
            self.port.unregister_under(folder)

    def mark_dirty(self) -> None:
        """Files changed: the next sync (daemon, MCP start-up, ``reverie index``) runs."""
        with self.lock:  # the one shared connection: never inside another thread's write
            self.port.mark_dirty()

    def reindex(self) -> None:
        """Sync after our own write: dirty first, so a sync that fails leaves the index
        marked for the next one (the daemon's, MCP start-up's)."""
        with contextlib.suppress(Exception):
            self.mark_dirty()
        self.index()

    def is_dirty(self) -> bool:
        """Files changed since the last complete sync (or never synced)."""
        with self.lock:
            return self.port.is_dirty()


__all__ = [
    "UNSET",
    "WAITS",
    "Adapters",
    "Projects",
    "Refresh",
    "Unset",
    "Waits",
    "sealed",
]
