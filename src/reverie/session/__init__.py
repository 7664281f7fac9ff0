"""The session API an agent loop calls (issue: write flow).

    mem = Reverie.open(workspace, state_dir)
    s = mem.open_session(kind="interactive", channel="direct", sender="alice", owner="alice")
    ctx = s.context(user_text)            # bootstrap + triggers (+ lane 2 if enabled)
    s.record(user_text, source="owner")   # every message, with where it came from
    s.record(tool_output, source="tool")
    s.record(reply, source="assistant")
    if s.flush_due().due: s.flush()       # silent pre-compaction flush to today's journal
    s.compacted()                         # the runtime compacted its context
    s.end()                               # transcript becomes dreaming evidence

Provenance is computed from this session context and the declared source, never
from the message text (:func:`reverie.provenance.origin_for`).

The session talks to its host through :class:`SessionHost`, a small port the facade
implements: it never sees (or imports) the facade itself.
"""

from __future__ import annotations

import re
import uuid
import warnings
from collections import deque
from collections.abc import Iterable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from ..curation.requests import Request
from ..dreaming.directives import from_session
from ..errors import ParseError, ProviderError, ReverieError
from ..intents import Intent
from ..llm.base import LLM, Message
from ..provenance.grounding import cited
from ..provenance.origin import (
    EXTERNAL,
    PROMOTABLE_ORIGINS,
    Author,
    Channel,
    Origin,
    SessionKind,
    Source,
)
from ..provenance.redact import mask, strip_controls
from ..recall.context import TurnContext
from ..recall.escalation import Target, Turn
from ..results import Accepted, Pending, Rejected
from ..scope.session import SessionScope
from ..tokens import count_tokens
from ..user.directives import Change
from ..write.flush import (
    FLUSH_SCHEMA,
    FLUSH_SYSTEM,
    FlushDecision,
    FlushResult,
    FlushState,
    accept_entries,
    build_input,
    plan,
)
from ..write.ingest import IngestResult
from ..write.journal import Appended
from ..write.transcript import VERSION, append_record, iter_messages, load
from ..write.transcript import create as create_transcript
from .host import ROLE, TURN_ROLES, Recorded, SessionHost, said_at


class Session:
    """One conversation of the agent: records every message with its computed
    origin, builds the turn context, flushes before compaction, ingests at the end."""

    def __init__(self, host: SessionHost, path: Path) -> None:
        self.host = host
        self.path = path
        state = load(path, keep_messages=False)  # messages streamed below (issue 22.12)
        h = state.header
        try:
            self.id = str(h["id"])
            self.kind = SessionKind(h["kind"])
            self.channel = Channel(h.get("channel", "direct"))
        except (KeyError, ValueError):
            msg = "not a session header (id, kind, channel)"
            raise ParseError(msg, path=str(path), line=1) from None
        self.sender = h.get("sender")
        self.owner = h.get("owner")
        self._seq = state.last_seq
        self._cycle = state.cycle
        self._flushed = state.flushed_cycle
        self._tokens = state.tokens_in_cycle
        self._turns: deque[Turn] = deque(maxlen=6)  # the latest turns, for the escalation lane
        self._tainted = self._replay_taint(self._keep_turns(iter_messages(path)))
        self._size = path.stat().st_size
        self._cycle_start_size = state.cycle_start_bytes
        self.ended = state.ended
        limit = host.settings.scope_active_projects
        self.scope = SessionScope(state.scope, persist=self._persist, limit=limit)

    # -- creation --------------------------------------------------------------------
    @classmethod
    def create(
        cls,
        host: SessionHost,
        *,
        kind: SessionKind | str | None = None,
        channel: Channel | str | None = None,
        sender: str | None = None,
        owner: str | None = None,
        session_id: str | None = None,
        key: bytes | None,
        cwd: str | Path | None = None,
    ) -> Session:
        """A new session (``kind`` and ``channel`` default to interactive, direct), or
        the existing one of ``session_id`` when its header matches.

        ``key`` (the origin key) seals the header: the proof ingestion asks for before it
        lets the header's sender and owner count (None: an unsealed transcript, capped
        at ``untrusted`` when ingested). Reopening an existing id keeps its recorded
        context; every one of ``kind``, ``channel``, ``sender``, ``owner`` that is given
        (not None) must equal the recorded one, else :class:`ReverieError`: a session
        never silently continues under a header other than the one asked for. ``cwd``:
        the directory the agent works in (its project becomes active, R-SCOPE-1)."""
        sid = session_id or uuid.uuid4().hex[:12]
        if not re.fullmatch(r"[A-Za-z0-9_.-]{1,64}", sid):
            raise ReverieError(f"session id {sid!r}: use letters, digits, '_', '.', '-'")
        path = host.workspace.session_transcript(sid)
        asked = {
            "kind": None if kind is None else SessionKind(kind).value,
            "channel": None if channel is None else Channel(channel).value,
            "sender": sender,
            "owner": owner,
        }
        header = {
            "type": "session",
            "version": VERSION,
            "id": sid,
            "kind": asked["kind"] or SessionKind.INTERACTIVE.value,
            "channel": asked["channel"] or Channel.DIRECT.value,
            "sender": sender,
            "owner": owner,
            "started": host.clock.now().isoformat(timespec="seconds"),
        }
        if create_transcript(path, header, key=key):
            created = cls(host, path)
            created.scope.enter(cwd)
            return created
        session = cls(host, path)
        recorded = {
            "kind": session.kind.value,
            "channel": session.channel.value,
            "sender": session.sender,
            "owner": session.owner,
        }
        differ = [
            f"{k} {recorded[k]!r}" for k, v in asked.items() if v is not None and v != recorded[k]
        ]
        if differ:
            raise ReverieError(
                f"session {sid!r} exists with {', '.join(differ)}: reopen it with its own "
                "kind, channel, sender and owner (or by id alone), or use another session id"
            )
        session.scope.enter(cwd)
        return session

    def _keep_turns(self, messages: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        for m in messages:
            if m.get("role") in TURN_ROLES:
                self._turns.append(Turn(m["role"], m["text"]))
            yield m

    @staticmethod
    def _replay_taint(messages: Iterable[dict[str, Any]]) -> bool:
        tainted = False
        for m in messages:
            src = m.get("source")
            if src == Source.OWNER.value and m.get("origin") in ("owner", "agent"):
                tainted = False
            elif src in {s.value for s in EXTERNAL} or m.get("origin") == "untrusted":
                tainted = True
        return tainted

    # -- recording -------------------------------------------------------------------
    @property
    def author(self) -> Author:
        """This session's context as provenance sees it (taint included)."""
        return Author(self.kind, self.channel, self.sender, self.owner, self._tainted)

    def origin_of(self, source: Source, sender: str | None = None) -> Origin:
        author = self.author
        if sender is not None:
            author = Author(self.kind, self.channel, sender, self.owner, self._tainted)
        return author.origin(source)

    def record(
        self,
        text: str,
        *,
        source: Source | str,
        sender: str | None = None,
        at: datetime | None = None,
    ) -> Recorded:
        """Record one message with where it came from; returns its computed origin.
        ``at``: when it was said, for a conversation recorded later (an import), never
        after now. Control characters are removed from the text (a transcript is input
        to the session corpus, which must stay readable)."""
        if not isinstance(text, str):
            raise ReverieError(f"session {self.id}: a message's text must be a string")
        text = strip_controls(text)
        src = Source(source)
        origin = self.origin_of(src, sender)
        seq = self._seq + 1
        self._size = append_record(  # whole or not at all: on WriteError nothing changed
            self.path,
            {
                "type": "message",
                "seq": seq,
                "ts": said_at(at, self.host.clock.now()).isoformat(timespec="seconds"),
                "source": src.value,
                "role": ROLE[src],
                "sender": sender if sender is not None else self.sender,
                "origin": origin.value,
                "text": text,
            },
        )
        self._seq = seq
        if ROLE[src] in TURN_ROLES:
            self._turns.append(Turn(ROLE[src], text))
        if src is Source.OWNER and origin in PROMOTABLE_ORIGINS:
            self._tainted = False
        elif src in EXTERNAL or origin is Origin.UNTRUSTED:
            self._tainted = True
        self._tokens += count_tokens(text)
        return Recorded(self._seq, origin, src)

    def _persist(self, record: dict[str, object]) -> None:
        self._size = append_record(self.path, dict(record))

    def context(
        self, message: str, *, active_projects: tuple[str, ...] = (), cwd: str | Path | None = None
    ) -> TurnContext:
        """What to inject for ``message``; the injected memory is recorded as
        ``recalled`` so ingestion strips it (R-PROV-4). ``cwd``: the agent works there
        now; the active projects are this session's LRU plus ``active_projects``."""
        self.scope.enter(cwd)
        target = Target(self.id, self.kind.value, self.channel.value, tuple(self._turns))
        active = self.scope.active(active_projects)
        ctx = self.host.context(message, active_projects=active, target=target)
        for block in ctx.blocks[1:]:  # every injected block but the bootstrap
            if block:
                self.record(block, source=Source.RECALLED)
        return ctx

    def write(
        self, text: str, *, source: Source | str = Source.ASSISTANT, cwd: str | Path | None = None
    ) -> Appended:
        """Daily append from inside the session (memory_write): the origin is what the
        session context gives the declared source, so a declaration can only lower it;
        the line is tagged with the project the session works in (R-SCOPE-1). Blank
        text is refused (:class:`ReverieError`)."""
        project = self.scope.enter(cwd)
        return self.host.write(text, source=Source(source), author=self.author, project=project)

    def directive(
        self, text: str, *, cites: int, key: str | None = None
    ) -> Accepted[Change] | Rejected | Pending[Request]:
        """Put a directive the owner stated in this session into USER.md (R-USER-1).
        Refused, with the reason, unless ``cites`` (a seq) is a message the owner typed
        here; pending (``reverie pending confirm ID``) when that message does not hold all
        of it (:func:`reverie.provenance.grounding.grounded`)."""
        out = from_session(self.host, self.path, self.kind.value, text, cites=cites, key=key)
        if isinstance(out, Accepted) or out.code != "grounding":
            return out
        req = self.host.curation.pending.request(
            "directive", text, by=f"session:{self.id}#{cites}", key=key, reason=out.reason
        )
        return Pending(req.id, out.code, out.reason, req)

    # -- standing intents (R-INTENT-1..3) ------------------------------------------------
    def add_intent(
        self, text: str, *, grounded_in: int | None = None, **how: str
    ) -> Accepted[Intent] | Pending[Intent]:
        """A standing intent (``how``: at=, every=, on=, review_by=, else read from
        ``text``). Armed only when ``grounded_in`` is the seq of a message the owner typed
        in this interactive session that holds all of it; otherwise pending, with the
        reason, until the owner confirms it (``reverie pending confirm ID``)."""
        said = cited(load(self.path).messages, grounded_in, session_kind=self.kind.value)
        return self.host.intents.propose(text, said, f"session:{self.id}#{grounded_in}", **how)

    def list_intents(self, *, all: bool = False) -> list[Intent]:
        return self.host.intents.listing(all=all)

    def cancel_intent(self, intent_id: str) -> Intent:
        """Cancel an intent: an explicit request only, never inferred (R-INTENT-3)."""
        return self.host.intents.cancel(intent_id)

    # -- flush -----------------------------------------------------------------------
    @property
    def flush_state(self) -> FlushState:
        return FlushState(
            self._cycle, self._flushed, self._tokens, self._size - self._cycle_start_size
        )

    def flush_due(self) -> FlushDecision:
        s = self.host.settings
        return plan(
            self.flush_state,
            self.kind,
            context_window=s.context_window,
            reserve_tokens=s.flush_reserve_tokens,
            soft_tokens=s.flush_soft_tokens,
            transcript_bytes_limit=s.flush_transcript_bytes,
        )

    def compacted(self) -> int:
        """The runtime compacted its context: a new cycle starts."""
        self._cycle += 1
        self._tokens = 0
        self._size = append_record(
            self.path,
            {
                "type": "compaction",
                "cycle": self._cycle,
                "ts": self.host.clock.now().isoformat(timespec="seconds"),
            },
        )
        self._cycle_start_size = self._size
        return self._cycle

    def flush(self, llm: LLM | None = None, *, force: bool = False) -> FlushResult:
        """Run the silent flush turn if due (or ``force``). Never raises: a timeout or
        failing provider skips the flush with a warning (P5)."""
        decision = self.flush_due()
        if not decision.due and not (force and self.kind.promotable):
            return FlushResult("skipped", decision.reason)
        model = llm if llm is not None else self.host.llm("flush")
        if model is None:
            return FlushResult("skipped", "no LLM configured")
        state = load(self.path)
        turns = [  # this cycle's trusted turns only: earlier cycles were flushed already
            (m.get("role", ""), str(m.get("text", "")))
            for m in state.messages[state.cycle_start_message :]
            if m.get("origin") in ("owner", "agent") and m.get("source") in ("owner", "assistant")
        ]
        self._mark_flushed("started")
        if not turns:
            return FlushResult("nothing", "no trusted turns to flush")
        masked = mask(build_input(turns))  # the model never sees an address or a key
        try:
            reply = model.complete(
                [Message("user", masked.text)],
                system=FLUSH_SYSTEM,
                json_schema=FLUSH_SCHEMA,
                timeout=self.host.settings.llm_timeout,
            )
        except ProviderError as exc:
            warnings.warn(f"pre-compaction flush skipped: {exc}", stacklevel=2)
            return FlushResult("failed", str(exc))
        entries = accept_entries(masked.restore_data(reply.data))
        if not entries:
            return FlushResult("nothing", "the model had nothing to store")
        sources = []
        for entry in entries:
            # the flush model summarises this cycle's trusted turns: the agent's own words
            clean = Author(self.kind, self.channel, self.sender, self.owner, tainted=False)
            try:
                where: dict[str, Any] = {"info": {"role": "flush"}, "project": self.scope.current}
                appended = self.host.write(entry, source=Source.ASSISTANT, author=clean, **where)
            except ReverieError:  # a blank entry: nothing to store
                continue
            sources.append(f"{appended.path}#L{appended.first_line}-L{appended.last_line}")
        return FlushResult("written", f"{len(entries)} entries", entries, sources)

    def _mark_flushed(self, status: str) -> None:
        self._flushed = self._cycle
        self._size = append_record(
            self.path,
            {
                "type": "flush",
                "cycle": self._cycle,
                "status": status,
                "ts": self.host.clock.now().isoformat(timespec="seconds"),
            },
        )

    # -- end -------------------------------------------------------------------------
    def end(self) -> IngestResult:
        """End the session; an interactive transcript becomes dreaming evidence."""
        if not self.ended:
            append_record(
                self.path,
                {"type": "end", "ts": self.host.clock.now().isoformat(timespec="seconds")},
            )
            self.ended = True
        return self.host.ingest(self.path)


__all__ = ["Recorded", "Session", "SessionHost"]
