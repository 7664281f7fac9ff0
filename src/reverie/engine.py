"""The facade: the one object the CLI, the MCP server, the review page, the hooks and
the daemon all go through.

It holds its adapters (:class:`reverie.wiring.Adapters`: the index connection, the
embedder, the searcher, the recall log, the LLM providers) and the dreamer privately,
wires the flows together and hands each lower layer only the small ports it needs (the
session gets a :class:`reverie.session.SessionHost`, the dreamer explicit
collaborators). Every lock a verb waits on waits as :data:`reverie.wiring.WAITS` says,
whichever door called it. Nothing below this module imports it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from .clock import Clock
from .errors import ReverieError
from .recall.boot import NO_BOOTSTRAP, Bootstrap
from .recall.context import TriggerIndex, TurnContext
from .settings import Settings, load_settings
from .user.turn import add_directives
from .wiring import UNSET, Adapters, DreamDoor, Projects, Refresh, SyncDoor, Unset, UserDoor, sealed

if TYPE_CHECKING:  # built or imported on first use: one-shot commands never import them
    from .curation.service import Curation
    from .dreaming.content import Judge
    from .dreaming.curate import OwnerPromotion, OwnerRejected
    from .dreaming.report import DreamReport
    from .dreaming.state import DreamStatus
    from .intents import Intents
    from .llm.base import LLM
    from .llm.factory import Purpose
    from .provenance.origin import Author, Channel, Origin, SessionKind, Source
    from .recall.escalation import EscalationLane, Target
    from .recall.search import GetResult, Lanes, SearchResponse
    from .session import Session
    from .storage.embedders.base import Embedder
    from .storage.index.sync import Progress, SyncStats
    from .storage.workspace import Workspace
    from .wiring.backend_move import MoveReport
    from .write.ingest import IngestResult
    from .write.journal import Appended


class Reverie:
    """Memory for one agent: a workspace of Markdown files plus its derived index.

    ``embedder``, ``llm`` and ``judge`` (dreaming's) override the settings (``None``: no
    vectors, no model); tests and demos pass fakes here (see :mod:`reverie.testing`).
    """

    def __init__(
        self,
        settings: Settings,
        *,
        clock: Clock | None = None,
        embedder: Embedder | Unset | None = UNSET,
        llm: LLM | Unset | None = UNSET,
        judge: Judge | None = None,
    ) -> None:
        self._a = Adapters(settings, clock=clock, embedder=embedder, llm=llm)
        # one-shot processes read the trigger index from its snapshot (recall.trigger_snapshot)
        self._triggers = TriggerIndex(self.workspace.trigger_snapshot_path)
        self._lane: EscalationLane | None = None
        self._intents: Intents | None = None  # R-INTENT-1..3, built on first use
        self._intents_settings = settings
        self._curation: Curation | None = None
        self._dreams = DreamDoor(
            self._a, judge, enabled=lambda: self.dreaming_enabled, curation=lambda: self.curation
        )
        self.user = UserDoor(self._a)  # USER.md's directives, under the dream lock
        self._finish_forget()  # a forget killed halfway: finished by the next open or read

    def _finish_forget(self) -> None:
        self._a.finish_forget(lambda: self.curation)

    # -- what every door reads -----------------------------------------------------------
    @property
    def settings(self) -> Settings:
        return self._a.settings

    @property
    def clock(self) -> Clock:
        return self._a.clock

    @clock.setter
    def clock(self, clock: Clock) -> None:  # tests move time; every flow reads it from here
        self._a.clock = clock

    @property
    def workspace(self) -> Workspace:
        """The one map of the disk: the workspace's files and the agent's state."""
        return self._a.workspace

    @property
    def sessions_dir(self) -> Path:  # (the session's port)
        return self.workspace.sessions_dir

    @property
    def embedder(self) -> Embedder | None:  # built on first use; None: keyword-only
        return self._a.embedder

    def llm(self, purpose: Purpose = "main") -> LLM | None:
        """The configured LLM provider for ``purpose`` (None when ``llm = none``)."""
        return self._a.llm(purpose)

    def limit_lane(self, seconds: float) -> None:
        """Lane 2 answers within ``seconds`` from now on (a hook's deadline is shorter)."""
        self._a.limit_lane(seconds)

    def close(self) -> None:
        self._a.close()
        if self._intents is not None:
            self._intents.close()
        self._triggers.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

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
        judge: Judge | None = None,
        **flags: Any,
    ) -> Reverie:
        """Resolve settings (defaults < config file < environment < arguments)."""
        where = {"workspace": workspace, "state_dir": state_dir}
        flags.update({k: str(v) for k, v in where.items() if v})
        settings = load_settings(flags, environ=environ)
        clock = clock or Clock.from_env(environ)
        return cls(settings, clock=clock, embedder=use_embedder, llm=llm, judge=judge)

    @property
    def escalation(self) -> EscalationLane:
        """Lane 2, wired with ports (R-LANE2-1..3)."""
        if self._lane is None:
            from .recall.escalation import EscalationLane

            self._lane = EscalationLane(self, sealed=sealed)
        return self._lane

    @property
    def intents(self) -> Intents:
        """The standing intents (R-INTENT-1..3)."""
        if self._intents is None:
            self._intents = self._a.intents(self._intents_settings, lambda: self.clock)
        return self._intents

    # -- the index ------------------------------------------------------------------------
    def init(self) -> list[str]:
        """Create the workspace layout; never overwrites an existing file."""
        return self._a.init()

    def index(
        self, *, force: bool = False, progress: Progress | None = None, wait: float | None = None
    ) -> SyncStats:
        """Bring the index up to date with the files (``force``: rebuild them all),
        waiting ``wait`` seconds for another sync (None: as long as it takes)."""
        return self._a.index(force=force, progress=progress, wait=wait)

    def move_backend(
        self, to: str, *, dsn: str = "", config: Path | None = None, dry_run: bool = False
    ) -> MoveReport:
        """``reverie backend move`` (:mod:`reverie.wiring.backend_move`): this agent's
        memory carried to backend ``to``, counted, set in ``config``; closes the engine."""
        from .wiring.backend_move import move

        with self:  # its settings name the backend it left
            return move(self._a, to, dsn=dsn, config=config, dry_run=dry_run)

    def refresh(self) -> Refresh:
        """Sync if the files changed (hand edits included), waiting ``WAITS.refresh`` for
        another sync; never raises (P5): a failed or busy sync is a note instead."""
        self.workspace.require()
        return self._a.refresh()

    def mark_dirty(self) -> None:
        """Files changed: the next sync (daemon, MCP start-up, ``reverie index``) runs."""
        self._a.mark_dirty()

    def is_dirty(self) -> bool:
        """Files changed since the last complete sync (or never synced)."""
        return self._a.is_dirty()

    def status(self) -> dict[str, Any]:
        """What the index holds and how fresh it is."""
        self.workspace.require()
        return self._a.status()

    def warm(self, *, lanes: bool = True) -> None:  # the trigger index; the search lanes too
        self._a.warm(self._triggers, lanes=lanes)  # (server, daemon; a hook: triggers only)

    def open_recall_log(self) -> None:  # before the first search records in it
        self._a.open_recall_log() if self.dreaming_enabled else None

    # -- recall, lane 1 ---------------------------------------------------------------
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
        self._finish_forget()
        kw: dict[str, Any] = {"max_results": max_results, "lanes": lanes, "decay": decay}
        projects = frozenset(active_projects)
        response = self._a.search(query, projects, budget_tokens=budget_tokens, **kw)
        if record and self.dreaming_enabled:
            try:  # dreaming's evidence; P5: a broken recall log never fails a search
                self._a.recall_log.record_search(
                    response, min_score=self.settings.recall_evidence_min, now=self.clock.now()
                )
            except Exception as exc:
                response.notes.append(f"recall not recorded: {exc}")
        return response

    def get(self, path: str, *, from_line: int = 1, lines: int | None = None) -> GetResult:
        """memory_get: lines of a workspace file (never outside the workspace)."""
        from .recall.search import memory_get

        self.workspace.require()
        self._finish_forget()
        s = self.settings
        limits = {"max_lines": s.get_max_lines, "max_chars": s.get_max_chars}
        return memory_get(self.workspace, path, from_line=from_line, lines=lines, **limits)

    def bootstrap(self, *, total_chars: int | None = None) -> Bootstrap:
        """AGENTS.md, MEMORY.md and USER.md as injected (R-RECALL-1), within ``total_chars``
        when given (a client that injects less than ``bootstrap_total_chars``)."""
        self._finish_forget()
        s = self.settings
        cap = s.bootstrap_total_chars if total_chars is None else total_chars
        return self._a.bootstrapper.load_with(
            s.replace(bootstrap_total_chars=min(cap, s.bootstrap_total_chars))
        )

    def context(
        self,
        message: str,
        *,
        active_projects: Projects = (),
        target: Target | None = None,
        explain_lane: bool = True,
        bootstrap: bool = True,
    ) -> TurnContext:
        """What to inject for one message: bootstrap, triggers, fired intents, lane 2 for
        ``target`` (None: a direct talk), USER.md directives; never raises (P5). The prompt
        hook only injects: ``explain_lane=False`` (gates undecided), ``bootstrap=False``."""
        self.workspace.require()
        self._finish_forget()  # a forget killed halfway first
        ctx = TurnContext(message, self.bootstrap() if bootstrap else NO_BOOTSTRAP)
        self._a.add_triggers(ctx, self._triggers, frozenset(active_projects))  # never raises
        if self._intents is not None or self._a.intents_may_exist():
            from .intents.turn import add_intents  # (no table: no intent was ever added)

            add_intents(ctx, self.intents)  # never raises (P5): a failure lands in ctx.degraded
        if explain_lane or self.settings.escalation:  # own deadline, no lock held (P5)
            self.escalation.fill(ctx, target)
        add_directives(ctx, self.workspace.user_path, self.settings, self._a.loaded_embedder())
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
        """Append to today's journal (R-WRITE-1), the one place write provenance is
        decided: what ``author`` (the session context) gives ``source``, lowered to
        ``lower_to``; nothing in the text raises it. Blank text is refused; a line that
        landed is never reported as failed (a failed sync is a warning; R-SCOPE-1)."""
        from dataclasses import replace

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

        return after_write(self._a.mark_dirty, self._a.index, sync=sync, path=path)

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
        key = self.workspace.origin_key()  # seals the header: the proof ingestion asks for
        who: dict[str, Any] = {"sender": sender, "owner": owner, "session_id": session_id}
        return Session.create(self, kind=kind, channel=channel, key=key, cwd=cwd, **who)

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
        if self._curation is None:
            self._curation = self._a.curation(lambda: self.intents)
        return self._curation

    @property
    def sync(self) -> SyncDoor:  # `reverie sync`, `reverie device pair` (reverie.sync)
        return SyncDoor(self._a, lambda: self.curation)

    # -- dreaming -------------------------------------------------------------------------
    @property
    def dreaming_enabled(self) -> bool:
        """Dreaming on (setting) and not switched off with ``reverie dream off``."""
        return bool(self.settings.dreaming) and not self.workspace.dreaming_switched_off

    def set_dreaming(self, on: bool) -> None:
        """``reverie dream on|off``: off means no dreaming state is written at all."""
        self.workspace.switch_dreaming(on)

    def dream(self, *, dry_run: bool = False) -> DreamReport:
        """Run light, REM and deep sleep now (``dry_run``: preview, write nothing, take
        no lock); a run waits ``WAITS.dream`` seconds for another dream."""
        return self._dreams.run(dry_run=dry_run)

    def dream_explain(self, key: str) -> dict[str, Any]:
        """Every signal and every gate for candidate ``key`` (writes nothing)."""
        return self._dreams.explain(key)

    def dream_promote(self, key: str) -> OwnerPromotion:
        """The owner promotes ``key`` past the numeric gates (``WAITS.owner_dream``)."""
        return self._dreams.promote(key)

    def dream_reject(self, key: str) -> OwnerRejected:
        """The owner rejects ``key`` for good (``WAITS.owner_dream``)."""
        return self._dreams.reject(key)

    def dream_restore(self, name: str | None = None) -> Path:
        """Put a MEMORY.md pre-image back (the newest unless ``name``; the current file
        becomes one), waiting ``WAITS.owner_dream`` for a running dream."""
        return self._dreams.restore(name)

    def preimages(self) -> list[Path]:
        """MEMORY.md's pre-images, oldest first."""
        return self._dreams.preimages()

    def dream_status(self) -> DreamStatus:
        """``reverie dream status``: on or off, the schedule, last run, pre-images."""
        return self._dreams.status()


__all__ = ["Reverie"]
