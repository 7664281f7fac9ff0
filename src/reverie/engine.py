"""The facade: the one object the CLI, the MCP server and the daemon all go through.

It wires the flows together and hands each lower layer only the small ports it needs
(the session gets a :class:`reverie.session.SessionHost`, the dreamer explicit
collaborators); nothing below this module imports it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .clock import Clock
from .dreaming.report import DreamReport  # the facade's annotations name real classes
from .errors import ProviderError, ReverieError
from .intents import DB_NAME as INTENTS_DB
from .provenance.origin import CONNECTED_AGENT, Author, Channel, Origin, SessionKind, Source
from .recall.bootstrap import Bootstrap, Bootstrapper
from .recall.context import TriggerIndex, TurnContext, add_triggers
from .settings import Settings, load_settings
from .storage.index.query import TriggerRows, index_counts
from .user.turn import add_directives
from .wiring import UNSET, Adapters, Projects, Unset

if TYPE_CHECKING:  # built or imported on first use: one-shot commands never import them
    from .curation.service import Curation
    from .dreaming.runner import Dreamer
    from .intents import Intents
    from .llm.base import LLM
    from .recall.escalation import EscalationLane, Target
    from .recall.search import GetResult, Lanes, SearchResponse
    from .session import Session
    from .storage.embedders.base import Embedder
    from .write.ingest import IngestResult
    from .write.journal import Appended


def _sealed(header: Mapping[str, Any], key: bytes) -> bool:
    """:func:`reverie.write.transcript.is_sealed`, imported when lane 2 first reads a
    transcript (the write flow is not on the per-prompt path)."""
    from .write.transcript import is_sealed

    return is_sealed(header, key)


def _may_exist(path: Path) -> bool:
    """False only when ``path`` is surely absent (a failing look-up is left to the step)."""
    try:
        return path.exists()
    except OSError:
        return True


class Reverie(Adapters):
    """Memory for one agent: a workspace of Markdown files plus its derived index.

    ``embedder`` and ``llm`` override what the settings name (``None``: keyword-only
    search, no model); tests and demos pass fakes here.
    """

    def __init__(
        self,
        settings: Settings,
        *,
        clock: Clock | None = None,
        embedder: Embedder | Unset | None = UNSET,
        llm: LLM | Unset | None = UNSET,
    ) -> None:
        super().__init__(settings, clock=clock, embedder=embedder, llm=llm)
        self._bootstrapper = Bootstrapper(self.workspace.root)
        # one-shot processes read the trigger index from its snapshot (recall.trigger_snapshot)
        self._triggers = TriggerIndex(self.workspace.agent_dir / "triggers.sqlite")
        self._lane: EscalationLane | None = None
        self._intents: Intents | None = None  # R-INTENT-1..3, built on first use
        self._intents_settings = settings

    def close(self) -> None:
        super().close()
        if self._intents is not None:
            self._intents.close()
        self._triggers.close()

    @classmethod
    def open(
        cls,
        workspace: str | Path | None = None,
        state_dir: str | Path | None = None,
        *,
        environ: Mapping[str, str] | None = None,
        clock: Clock | None = None,
        use_embedder: Embedder | Unset | None = UNSET,
        llm: LLM | Unset | None = UNSET,
        **flags: Any,
    ) -> Reverie:
        """Resolve settings (defaults < config file < environment < arguments)."""
        where = {"workspace": workspace, "state_dir": state_dir}
        flags = {**flags, **{k: str(v) for k, v in where.items() if v is not None}}
        settings = load_settings(flags, environ=environ)
        return cls(settings, clock=clock or Clock.from_env(environ), embedder=use_embedder, llm=llm)

    @property
    def escalation(self) -> EscalationLane:
        """Lane 2, wired with ports (R-LANE2-1..3)."""
        if self._lane is None:
            from .recall.escalation import EscalationLane

            self._lane = EscalationLane(self, sealed=_sealed)
        return self._lane

    @property
    def intents(self) -> Intents:
        """The standing intents (R-INTENT-1..3)."""
        if self._intents is None:
            from .intents.service import Intents

            self._intents = Intents(self.workspace, self._intents_settings, lambda: self.clock)
        return self._intents

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
        active_projects: Projects = (),
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
        from .recall.search import memory_get

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
        return self._bootstrapper.load_with(self.settings)

    def context(
        self,
        message: str,
        *,
        active_projects: Projects = (),
        target: Target | None = None,
        explain_lane: bool = True,
    ) -> TurnContext:
        """What to inject for one message: bootstrap, triggers, fired intents, lane 2's
        summary for ``target`` (None: the caller, a direct talk) and the USER.md directives
        that bear on it. Never raises for a memory failure (P5). ``explain_lane=False``:
        with lane 2 off, its gates are not decided (``ctx.escalation`` stays None), for
        a caller that only injects (the per-prompt hook)."""
        self.workspace.require()
        ctx = TurnContext(message, self.bootstrap())
        try:
            with self._lock:
                source = TriggerRows(self.conn)
                add_triggers(ctx, source, self._triggers, self.settings, frozenset(active_projects))
        except Exception as exc:  # P5: memory failure never blocks a reply
            ctx.degraded.append(f"trigger injection skipped: {type(exc).__name__}: {exc}")
        if self._intents is not None or _may_exist(self.workspace.agent_dir / INTENTS_DB):
            from .intents.turn import add_intents  # (no table: no intent was ever added)

            add_intents(ctx, self.intents)  # never raises (P5): a failure lands in ctx.degraded
        if explain_lane or self.settings.escalation:
            # lane 2: own deadline, never raises (P5), no lock held
            self.escalation.fill(ctx, target)
        add_directives(ctx, self.workspace.root / "USER.md", self.settings, self._embedder)
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
        project: str | None = None,
    ) -> Appended:
        """Append to today's journal (R-WRITE-1). The one place write provenance is
        decided: the origin is what ``author`` (the runtime's session context) gives
        ``source``, lowered to ``lower_to``; nothing in the text can raise it. Blank
        text is refused. A line that landed is never reported as failed: a sync that
        fails afterwards leaves the index dirty and adds a warning (``project``: R-SCOPE-1)."""
        from .write.journal import append as journal_append

        self.workspace.require()
        origin, now = author.origin(source, lower_to=lower_to), self.clock.now()
        kw: dict[str, Any] = {"session": author.session_kind, "info": info, "project": project}
        appended = journal_append(self.workspace, text, origin=origin, now=now, **kw)
        if appended is None:
            raise ReverieError("nothing to write: the text is blank")
        warnings = self._after_write(sync=sync, path=appended.path)
        return replace(appended, warnings=appended.warnings + tuple(warnings))

    def _after_write(self, *, sync: bool, path: str = "") -> list[str]:
        from .write.after import after_write

        return after_write(self.mark_dirty, self.index, sync=sync, path=path)

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
        cwd: str | Path | None = None,
    ) -> Session:
        """Open (or reopen) a session; its transcript is persisted as JSONL. None: the
        default (interactive, direct) for a new session, the recorded value on reopen."""
        from .session import Session

        self.workspace.require()
        return Session.create(
            self,
            kind=kind,
            channel=channel,
            sender=sender,
            owner=owner,
            session_id=session_id,
            key=self.workspace.origin_key(),  # seals the header: the proof ingestion asks for
            cwd=cwd,
        )

    def ingest(
        self, transcript: Path, *, session_kind: SessionKind | None = None, trust: bool = False
    ) -> IngestResult:
        """A finished transcript becomes evidence (R-WRITE-3); ``trust``: the owner vouches."""
        from .write.ingest import ingest

        self.workspace.require()
        now, kind = self.clock.now(), session_kind
        result = ingest(self.workspace, transcript, now=now, session_kind=kind, trust=trust)
        if result.lines_written:
            result.warnings += self._after_write(sync=False)
        return result

    @property
    def curation(self) -> Curation:
        """The owner's hand: forget, pending agent requests, trusted folders."""
        from .curation.service import Curation

        ws, agent = self.workspace, CONNECTED_AGENT
        return Curation(
            workspace=ws,
            preimages_kept=self.settings.preimages_kept,
            now=self.clock.now,
            recall_log=lambda: self.recall_log if ws.recall_log_path.exists() else None,
            conn=lambda: self.conn,
            reindex=self._reindex,
            journal=lambda text: self.write(text, source=Source.ASSISTANT, author=agent),
            max_pending=self.settings.pending_max,
            intents=lambda: self.intents,
        )

    # -- dreaming -------------------------------------------------------------------------
    @property
    def dreamer(self) -> Dreamer:
        """The dreamer, wired with explicit collaborators (never this facade)."""
        from .dreaming.runner import Dreamer

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
        from .storage.locks import held

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
