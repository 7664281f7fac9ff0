"""The facade: the one object the CLI, the MCP server and the daemon all go through.

It wires the flows together and hands each lower layer only the small ports it needs
(the session gets a :class:`reverie.session.SessionHost`, the dreamer explicit
collaborators); nothing below this module imports it.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from .clock import Clock
from .dreaming.report import DreamReport
from .dreaming.runner import Dreamer
from .errors import ProviderError, ReverieError, WorkspaceError
from .llm.base import LLM
from .llm.factory import Purpose, make_llm
from .provenance.origin import Author, Channel, Origin, SessionKind, Source
from .recall.bootstrap import Bootstrap, Bootstrapper
from .recall.context import TriggerIndex, TurnContext, add_triggers
from .recall.log import RecallLog
from .recall.search import GetResult, Lanes, Searcher, SearchResponse, memory_get
from .session import Session
from .settings import Settings, load_settings
from .storage.embedders.base import Embedder
from .storage.embedders.factory import make_embedder
from .storage.index.db import Connection, connect, ensure_schema
from .storage.index.query import TriggerRows, index_counts, is_dirty
from .storage.index.sync import Progress, Syncer, SyncStats, mark_dirty
from .storage.locks import held
from .storage.workspace import Workspace
from .write.ingest import IngestResult, ingest
from .write.journal import Appended
from .write.journal import append as journal_append


class _Unset:
    """Marks an argument not given (None is a value: "no embedder", "no model")."""


_UNSET = _Unset()


class Reverie:
    """Memory for one agent: a workspace of Markdown files plus its derived index.

    ``embedder`` and ``llm`` override what the settings name (``None``: keyword-only
    search, no model); tests and demos pass fakes here.
    """

    def __init__(
        self,
        settings: Settings,
        *,
        clock: Clock | None = None,
        embedder: Embedder | _Unset | None = _UNSET,
        llm: LLM | _Unset | None = _UNSET,
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
        self._bootstrapper: Bootstrapper | None = None
        self._triggers = TriggerIndex()
        self._recall_log: RecallLog | None = None
        self._llms: dict[str, LLM | None] = {}

    @classmethod
    def open(
        cls,
        workspace: str | Path | None = None,
        state_dir: str | Path | None = None,
        *,
        environ: Mapping[str, str] | None = None,
        clock: Clock | None = None,
        use_embedder: Embedder | _Unset | None = _UNSET,
        llm: LLM | _Unset | None = _UNSET,
        **flags: Any,
    ) -> Reverie:
        """Resolve settings (defaults < config file < environment < arguments)."""
        where = {"workspace": workspace, "state_dir": state_dir}
        flags = {**flags, **{k: str(v) for k, v in where.items() if v is not None}}
        settings = load_settings(flags, environ=environ)
        return cls(settings, clock=clock or Clock.from_env(environ), embedder=use_embedder, llm=llm)

    # -- adapters --------------------------------------------------------------------
    @property
    def embedder(self) -> Embedder | None:
        if isinstance(self._embedder, _Unset):
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
            self._searcher = Searcher(self.settings, self.embedder)
        return self._searcher

    @property
    def recall_log(self) -> RecallLog:
        with self._lock:
            if self._recall_log is None:
                self._recall_log = RecallLog(self.workspace.recall_log_path)
            return self._recall_log

    def llm(self, purpose: Purpose = "main") -> LLM | None:
        """The configured LLM provider for ``purpose`` (None when ``llm = none``)."""
        if not isinstance(self._llm_override, _Unset):
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

    def __enter__(self) -> Reverie:
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
        self.workspace.require()
        busy = "another sync of this index is running; try again later"
        with held(self.workspace.sync_lock, wait=wait, busy=busy), self._lock:
            syncer = Syncer(
                self.conn, self.workspace, self.settings, self.embedder, now=self.clock.now
            )
            return syncer.run(force=force, progress=progress)

    def mark_dirty(self) -> None:
        """Files changed: the next sync (daemon, MCP start-up, ``reverie index``) runs."""
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

    # -- recall, lane 1 ---------------------------------------------------------------
    def warm(self) -> None:
        """Load both search lanes into memory (long-running processes: MCP server, daemon)."""
        self.searcher.vectors.load(self.conn)
        self.searcher.keywords.load(self.conn)  # BM25 in memory, equal to FTS5's
        self._triggers.refresh(TriggerRows(self.conn), precompile=True)

    def search(
        self,
        query: str,
        *,
        max_results: int | None = None,
        active_projects: frozenset[str] | set[str] | tuple[str, ...] = (),
        lanes: Lanes = "hybrid",
        decay: bool = True,
        record: bool = True,
        budget_tokens: int | None = None,
    ) -> SearchResponse:
        """memory_search: hybrid search (``budget_tokens``: as many hits as fit in that
        many tokens); agent-facing calls are recorded in the recall log (dreaming's
        evidence) unless ``record`` is False."""
        self.workspace.require()
        with self._lock:
            response = self.searcher.search(
                self.conn,
                query,
                today=self.clock.today(),
                max_results=max_results,
                active_projects=frozenset(active_projects),
                lanes=lanes,
                decay=decay,
                budget_tokens=budget_tokens,
            )
        if record and self.dreaming_enabled:
            try:  # dreaming's evidence; P5: a broken recall log never fails a search
                self.recall_log.record_search(
                    response, min_score=self.settings.recall_evidence_min, now=self.clock.now()
                )
            except Exception as exc:
                response.notes.append(f"recall not recorded: {exc}")
        return response

    @property
    def dreaming_enabled(self) -> bool:
        """Dreaming on (setting) and not switched off with ``reverie dream off``."""
        return bool(self.settings.dreaming) and not self.workspace.dreaming_switched_off

    def get(self, path: str, *, from_line: int = 1, lines: int | None = None) -> GetResult:
        """memory_get: lines of a workspace file (never outside the workspace)."""
        self.workspace.require()
        return memory_get(
            self.workspace,
            path,
            from_line=from_line,
            lines=lines,
            max_lines=self.settings.get_max_lines,
            max_chars=self.settings.get_max_chars,
        )

    def bootstrap(self) -> Bootstrap:
        """AGENTS.md, MEMORY.md and USER.md as injected (R-RECALL-1)."""
        if self._bootstrapper is None:
            self._bootstrapper = Bootstrapper(self.workspace.root)
        return self._bootstrapper.load_with(self.settings)

    def context(
        self, message: str, *, active_projects: frozenset[str] | set[str] | tuple[str, ...] = ()
    ) -> TurnContext:
        """What to inject for one message: bootstrap plus the trigger block. Never
        raises for a memory failure: a broken index only drops the triggers (P5)."""
        self.workspace.require()
        ctx = TurnContext(message, self.bootstrap())
        try:
            with self._lock:
                source = TriggerRows(self.conn)
                add_triggers(ctx, source, self._triggers, self.settings, frozenset(active_projects))
        except Exception as exc:  # P5: memory failure never blocks a reply
            ctx.degraded.append(f"trigger injection skipped: {type(exc).__name__}: {exc}")
        return ctx

    # -- write flow ---------------------------------------------------------------------
    def write(
        self,
        text: str,
        *,
        source: Source,
        author: Author,
        lower_to: Origin | None = None,
        info: dict[str, str] | None = None,
        sync: bool = False,
    ) -> Appended:
        """Append to today's journal (R-WRITE-1). The one place write provenance is
        decided: the origin is what ``author`` (the runtime's session context) gives
        ``source``, lowered to ``lower_to``; nothing in the text can raise it. Blank
        text is refused. A line that landed is never reported as failed: a sync that
        fails afterwards leaves the index dirty and adds a warning."""
        self.workspace.require()
        origin, now = author.origin(source, lower_to=lower_to), self.clock.now()
        appended = journal_append(
            self.workspace, text, origin=origin, session=author.session_kind, now=now, info=info
        )
        if appended is None:
            raise ReverieError("nothing to write: the text is blank")
        warnings = self._after_write(sync=sync, path=appended.path)
        return replace(appended, warnings=tuple(warnings)) if warnings else appended

    def _after_write(self, *, sync: bool, path: str = "") -> list[str]:
        """One policy for every write to the workspace (journal lines, ingestion): mark
        the index dirty, then sync now if asked. Failures only warn (P5): the sync's
        own warnings about ``path`` or the embedder are passed on."""
        warnings: list[str] = []
        try:
            self.mark_dirty()
        except Exception as exc:  # a broken index never loses the line
            warnings.append(f"index not marked dirty: {exc}")
        if sync:
            try:
                stats = self.index()
            except (ReverieError, ProviderError, OSError) as exc:
                warnings.append(f"written, but the index was not updated: {exc}")
            else:
                warnings += [
                    w for w in stats.warnings if w.startswith("embedder") or (path and path in w)
                ]
        return warnings

    @property
    def sessions_dir(self) -> Path:
        return self.workspace.sessions_dir

    def open_session(
        self,
        *,
        kind: SessionKind | str | None = None,
        channel: Channel | str | None = None,
        sender: str | None = None,
        owner: str | None = None,
        session_id: str | None = None,
    ) -> Session:
        """Open (or reopen) a session; its transcript is persisted as JSONL. None: the
        default (interactive, direct) for a new session, the recorded value on reopen."""
        self.workspace.require()
        return Session.create(
            self,
            kind=kind,
            channel=channel,
            sender=sender,
            owner=owner,
            session_id=session_id,
            key=self.workspace.origin_key(),  # seals the header: the proof ingestion asks for
        )

    def ingest(
        self, transcript: Path, *, session_kind: SessionKind | None = None, trust: bool = False
    ) -> IngestResult:
        """A finished transcript becomes evidence (R-WRITE-3); ``trust``: the owner vouches."""
        self.workspace.require()
        now, kind = self.clock.now(), session_kind
        result = ingest(self.workspace, transcript, now=now, session_kind=kind, trust=trust)
        if result.lines_written:
            result.warnings += self._after_write(sync=False)
        return result

    # -- dreaming -------------------------------------------------------------------------
    @property
    def dreamer(self) -> Dreamer:
        """The dreamer, wired with explicit collaborators (never this facade)."""
        return Dreamer(
            workspace=self.workspace,
            settings=self.settings,
            clock=self.clock,
            evidence=lambda: self.recall_log.stats(),
            llm=lambda: self.llm("main"),
            reindex=self._reindex,
            enabled=lambda: self.dreaming_enabled,
        )

    def dream(self, *, dry_run: bool = False) -> DreamReport:
        """Run light, REM and deep sleep now (``dry_run``: preview, write nothing)."""
        self.workspace.require()
        if dry_run:
            return self.dreamer.run(dry_run=True)
        with held(self.workspace.dream_lock, wait=600, busy="another dream is still running"):
            return self.dreamer.run()

    def set_dreaming(self, on: bool) -> None:
        """``reverie dream on|off``: off means no dreaming state is written at all."""
        self.workspace.switch_dreaming(on)

    def status(self) -> dict[str, Any]:
        """What the index holds and how fresh it is."""
        self.workspace.require()
        try:
            current = self.embedder.identity.label() if self.embedder else None
        except ProviderError as exc:  # status must work while a provider is down
            current = f"unreachable ({exc})"
        with self._lock:
            counts = index_counts(self.conn, embedder=current)
        ws = self.workspace
        paths = {"workspace": str(ws.root), "index": str(ws.index_path)}
        return {**paths, **counts, "key_warning": ws.key_warning()}


__all__ = ["Reverie"]
