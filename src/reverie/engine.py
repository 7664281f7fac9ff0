"""The facade: the one object the CLI, the MCP server and the daemon all go through."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import sqlean as sqlite3

from .clock import Clock
from .errors import ProviderError, ReverieError
from .provenance.origin import Channel, Origin, SessionKind
from .recall.bootstrap import Bootstrap, Bootstrapper
from .recall.context import TriggerIndex, TurnContext, render_block, trigger_hits
from .recall.log import RecallHit, RecallLog, focus_line
from .recall.search import GetResult, Lanes, Searcher, SearchResponse, memory_get
from .session import Session
from .settings import Settings, load_settings
from .storage.embedders.base import Embedder
from .storage.embedders.factory import make_embedder
from .storage.index.db import SCHEMA_VERSION, connect, ensure_schema, get_meta, user_version
from .storage.index.sync import Progress, Syncer, SyncStats, mark_dirty
from .storage.workspace import Workspace
from .write.ingest import IngestResult, ingest
from .write.journal import Appended
from .write.journal import append as journal_append

_UNSET: Any = object()


class Reverie:
    """Memory for one agent: a workspace of Markdown files plus its derived index."""

    def __init__(
        self,
        settings: Settings,
        *,
        clock: Clock | None = None,
        embedder: Embedder | None = _UNSET,
    ) -> None:
        self.settings = settings
        self.clock = clock or Clock.from_env()
        self.workspace = Workspace(
            Path(settings.workspace), Path(settings.state_dir), settings.agent
        )
        self._embedder = embedder
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.RLock()
        self._searcher: Searcher | None = None
        self._bootstrapper: Bootstrapper | None = None
        self._triggers = TriggerIndex()
        self._recall_log: RecallLog | None = None
        self._llms: dict[str, Any] = {}

    @classmethod
    def open(
        cls,
        workspace: str | Path | None = None,
        state_dir: str | Path | None = None,
        *,
        environ: Mapping[str, str] | None = None,
        clock: Clock | None = None,
        use_embedder: Embedder | None = _UNSET,
        **flags: Any,
    ) -> Reverie:
        """Resolve settings (defaults < config file < environment < arguments)."""
        flags = dict(flags)
        if workspace is not None:
            flags["workspace"] = str(workspace)
        if state_dir is not None:
            flags["state_dir"] = str(state_dir)
        settings = load_settings(flags, environ=environ)
        return cls(settings, clock=clock or Clock.from_env(environ), embedder=use_embedder)

    # -- adapters --------------------------------------------------------------------
    @property
    def embedder(self) -> Embedder | None:
        if self._embedder is _UNSET:
            self._embedder = make_embedder(self.settings)
        return self._embedder

    @property
    def conn(self) -> sqlite3.Connection:
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
                self._recall_log = RecallLog(self.workspace.agent_dir / "recall.sqlite")
            return self._recall_log

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
        return self.workspace.init()

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
        from filelock import FileLock, Timeout

        self.workspace.agent_dir.mkdir(parents=True, exist_ok=True)
        lock = FileLock(
            str(self.workspace.agent_dir / "sync.lock"), timeout=-1 if wait is None else wait
        )
        try:
            lock.acquire()
        except Timeout:
            raise ReverieError("another sync of this index is running; try again later") from None
        try:
            with self._lock:
                syncer = Syncer(
                    self.conn, self.workspace, self.settings, self.embedder, now=self.clock.now
                )
                return syncer.run(force=force, progress=progress)
        finally:
            lock.release()

    # -- recall, lane 1 ---------------------------------------------------------------
    def warm(self) -> None:
        """Load the vectors into memory (long-running processes: MCP server, daemon)."""
        self.searcher.vectors.load(self.conn)
        self._triggers.refresh(self.conn)

    def search(
        self,
        query: str,
        *,
        max_results: int | None = None,
        active_projects: frozenset[str] | set[str] | tuple[str, ...] = (),
        lanes: Lanes = "hybrid",
        decay: bool = True,
        record: bool = True,
    ) -> SearchResponse:
        """memory_search: hybrid search; agent-facing calls are recorded in the recall
        log (dreaming's evidence) unless ``record`` is False."""
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
            )
        if record and self.dreaming_enabled:
            hits = []
            for h in response.hits:
                # the quality of the retrieval is its relevance, before decay (recency is
                # a signal of its own in dreaming); below-min fallbacks and bare path
                # matches are no evidence
                quality = h.relevance
                if h.explain.get("below_min_score") or quality < self.settings.search_min_score:
                    continue
                line, text = focus_line(h.text or h.snippet, h.start_line, query)
                hits.append(
                    RecallHit(
                        h.path, line, line, quality, text, h.origin, h.kind, h.session_kind, h.day
                    )
                )
            try:
                self.recall_log.record(query, hits, now=self.clock.now())
            except Exception as exc:  # P5: a broken recall log never fails a search
                response.notes.append(f"recall not recorded: {exc}")
        return response

    @property
    def dreaming_enabled(self) -> bool:
        """Dreaming on (setting) and not switched off with ``reverie dream off``."""
        off = (self.workspace.agent_dir / "dreaming.off").exists()
        return bool(self.settings.dreaming) and not off

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
        if self._bootstrapper is None:
            self._bootstrapper = Bootstrapper(self.workspace.root)
        s = self.settings
        return self._bootstrapper.load(
            file_chars=s.bootstrap_file_chars,
            total_chars=s.bootstrap_total_chars,
            user_chars=s.bootstrap_user_chars,
        )

    def context(
        self, message: str, *, active_projects: frozenset[str] | set[str] | tuple[str, ...] = ()
    ) -> TurnContext:
        """What to inject for one message: bootstrap plus the trigger block. Never
        raises for a memory failure: a broken index only drops the triggers (P5)."""
        self.workspace.require()
        ctx = TurnContext(message, self.bootstrap())
        s = self.settings
        try:
            with self._lock:
                hits = trigger_hits(
                    self.conn,
                    self._triggers,
                    message,
                    active_projects=frozenset(active_projects),
                    max_candidates=s.trigger_candidates,
                    threshold=s.trigger_threshold,
                    top=s.trigger_top,
                )
            ctx.trigger_hits = hits
            ctx.trigger_block = render_block(hits, s.trigger_block_chars)
        except Exception as exc:  # P5: memory failure never blocks a reply
            ctx.degraded.append(f"trigger injection skipped: {type(exc).__name__}: {exc}")
        return ctx

    # -- write flow ---------------------------------------------------------------------
    def llm(self, purpose: str = "main") -> Any:
        """The configured LLM provider (None when ``llm = none``)."""
        from .llm.factory import make_llm

        if purpose not in self._llms:
            self._llms[purpose] = make_llm(self.settings, purpose=purpose)  # type: ignore[arg-type]
        return self._llms[purpose]

    def append_journal(
        self,
        text: str,
        *,
        origin: Origin,
        session: SessionKind | None = None,
        info: dict[str, str] | None = None,
        sync: bool = False,
    ) -> Appended | None:
        """Append to today's journal with a code-computed origin (R-WRITE-1)."""
        self.workspace.require()
        appended = journal_append(
            self.workspace, text, origin=origin, session=session, now=self.clock.now(), info=info
        )
        if appended is not None:
            if sync:
                self.index()
            else:
                with contextlib.suppress(Exception):  # P5: a broken index never loses the line
                    self.mark_dirty()
        return appended

    def open_session(
        self,
        *,
        kind: SessionKind | str = SessionKind.INTERACTIVE,
        channel: Channel | str = Channel.DIRECT,
        sender: str | None = None,
        owner: str | None = None,
        session_id: str | None = None,
    ) -> Session:
        """Open (or reopen) a session; its transcript is persisted as JSONL."""
        self.workspace.require()
        return Session.create(
            self, kind=kind, channel=channel, sender=sender, owner=owner, session_id=session_id
        )

    def ingest(self, transcript: Path, *, session_kind: SessionKind | None = None) -> IngestResult:
        self.workspace.require()
        return ingest(self.workspace, transcript, now=self.clock.now(), session_kind=session_kind)

    # -- dreaming -------------------------------------------------------------------------
    @property
    def dreamer(self) -> Any:
        from .dreaming.runner import Dreamer

        return Dreamer(self)

    def dream(self, *, dry_run: bool = False) -> Any:
        """Run light, REM and deep sleep now (``dry_run``: preview, write nothing)."""
        self.workspace.require()
        from filelock import FileLock

        if dry_run:
            return self.dreamer.run(dry_run=True)
        with FileLock(str(self.workspace.agent_dir / "dream.lock"), timeout=600):
            return self.dreamer.run()

    def set_dreaming(self, on: bool) -> None:
        """``reverie dream on|off``: off means no dreaming state is written at all."""
        flag = self.workspace.agent_dir / "dreaming.off"
        self.workspace.agent_dir.mkdir(parents=True, exist_ok=True)
        if on:
            flag.unlink(missing_ok=True)
        else:
            flag.write_text("dreaming switched off with `reverie dream off`\n")

    def mark_dirty(self) -> None:
        mark_dirty(self.conn)

    def status(self) -> dict[str, Any]:
        """What the index holds and how fresh it is."""
        self.workspace.require()
        conn = self.conn
        one = lambda sql: conn.execute(sql).fetchone()[0]  # noqa: E731
        stored = get_meta(conn, "embedder")
        try:
            current = self.embedder.identity.label() if self.embedder else None
        except ProviderError as exc:  # status must work while a provider is down
            current = f"unreachable ({exc})"
        vectors = one("SELECT count(*) FROM chunks WHERE has_vector = 1")
        chunks = one("SELECT count(*) FROM chunks")
        stale = vectors if (current is not None and stored is not None and stored != current) else 0
        return {
            "workspace": str(self.workspace.root),
            "index": str(self.workspace.index_path),
            "schema_version": user_version(conn),
            "schema_current": user_version(conn) == SCHEMA_VERSION,
            "files": one("SELECT count(*) FROM sources"),
            "chunks": chunks,
            "vectors": vectors,
            "vectors_missing": chunks - vectors,
            "vectors_stale": stale,
            "embedder": current or "none",
            "embedder_indexed": stored,
            "tokenizer": get_meta(conn, "tokenizer"),
            "chunking_version": get_meta(conn, "chunking_version"),
            "last_sync": get_meta(conn, "last_sync"),
            "dirty": get_meta(conn, "dirty", "1") == "1" or get_meta(conn, "last_sync") is None,
            "origins": dict(
                conn.execute("SELECT origin, count(*) FROM provenance GROUP BY origin").fetchall()
            ),
        }


__all__ = ["Reverie"]
