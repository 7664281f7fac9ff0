"""The async forms of a session, of curation and of the standing intents.

A :class:`reverie.session.Session` is one transcript with its own counters: its verbs
run one at a time (a thread lock per session, taken only inside the thread). What
appends to the journal, ingests or changes curated state runs on the workspace's
writer; what only reads and records into the session's own transcript on a reader.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ..provenance.origin import Source
from .lanes import Lanes

if TYPE_CHECKING:
    from ..curation.forget import ForgetReport
    from ..curation.link import Linked
    from ..curation.pending import Request
    from ..engine import Reverie
    from ..intents import Intent
    from ..intents.service import Proposer
    from ..recall.context import TurnContext
    from ..results import Accepted, Pending
    from ..session import Recorded, Session
    from ..write.flush import FlushResult
    from ..write.ingest import IngestResult
    from ..write.journal import Appended

T = TypeVar("T")


class AsyncSession:
    """:class:`reverie.session.Session`'s verbs as coroutines (same provenance rules:
    the origin comes from the session context and the declared source)."""

    def __init__(self, session: Session, lanes: Lanes) -> None:
        self.session = session
        self._lanes = lanes
        self._lock = threading.Lock()  # one verb of this session at a time (in threads)

    @property
    def id(self) -> str:
        return self.session.id

    def _one(self, fn: Callable[..., T]) -> Callable[..., T]:
        def run(*args: Any, **kw: Any) -> T:
            with self._lock:
                return fn(*args, **kw)

        return run

    async def record(
        self, text: str, *, source: Source | str, sender: str | None = None
    ) -> Recorded:
        """:meth:`Session.record`: ``tool``, ``web``, ``member`` are untrusted."""
        return await self._lanes.read(
            self._one(self.session.record), text, source=source, sender=sender
        )

    async def context(
        self, message: str, *, active_projects: tuple[str, ...] = (), cwd: str | Path | None = None
    ) -> TurnContext:
        """:meth:`Session.context` (what is injected is recorded as ``recalled``)."""
        fn = self._one(self.session.context)
        return await self._lanes.read(fn, message, active_projects=active_projects, cwd=cwd)

    async def write(
        self, text: str, *, source: Source | str = Source.ASSISTANT, cwd: str | Path | None = None
    ) -> Appended:
        """:meth:`Session.write` (a declared source can only lower the origin)."""
        return await self._lanes.write(self._one(self.session.write), text, source=source, cwd=cwd)

    async def flush(self, *, force: bool = False) -> FlushResult:
        """:meth:`Session.flush` (never raises)."""
        return await self._lanes.write(self._one(self.session.flush), force=force)

    async def compacted(self) -> int:
        """:meth:`Session.compacted`."""
        return await self._lanes.read(self._one(self.session.compacted))

    async def add_intent(
        self, text: str, *, grounded_in: int | None = None, **how: str
    ) -> Accepted[Intent] | Pending[Intent]:
        """:meth:`Session.add_intent`: armed only when grounded in the owner's message,
        else pending until the owner confirms it."""
        fn = self._one(self.session.add_intent)
        return await self._lanes.write(fn, text, grounded_in=grounded_in, **how)

    async def end(self) -> IngestResult:
        """:meth:`Session.end`: the transcript becomes dreaming evidence."""
        return await self._lanes.write(self._one(self.session.end))


class AsyncCuration:
    """``Reverie.curation`` as coroutines, on the workspace's writer."""

    def __init__(self, memory: Reverie, lanes: Lanes) -> None:
        self._memory, self._lanes = memory, lanes

    async def forget(
        self,
        text: str | None = None,
        *,
        key: str | None = None,
        session: str | None = None,
        source: str | None = None,
        dry_run: bool = False,
        purge_history: bool = False,
    ) -> ForgetReport:
        """:meth:`reverie.curation.service.Curation.forget`."""
        how = {"key": key, "session": session, "source": source}
        forget = self._memory.curation.forget
        return await self._lanes.write(
            forget, text, dry_run=dry_run, purge_history=purge_history, **how
        )

    async def link(self, newer: str, older: str) -> Linked:
        """:meth:`reverie.curation.service.Curation.link` (the owner's)."""
        return await self._lanes.write(self._memory.curation.link, newer, older)

    async def agent_link(self, newer: str, older: str, subject: str) -> Linked | Request:
        """:meth:`reverie.curation.service.Curation.agent_link` (a connected agent's)."""
        return await self._lanes.write(self._memory.curation.agent_link, newer, older, subject)

    async def trust(self, folder: str) -> list[str]:
        return await self._lanes.write(self._memory.curation.trust, folder)

    async def untrust(self, folder: str) -> list[str]:
        return await self._lanes.write(self._memory.curation.untrust, folder)

    async def request(
        self, kind: str, text: str, new_text: str | None = None, *, by: str
    ) -> Request:
        """An agent's ``memory_forget`` / ``memory_correct``: pending until confirmed."""
        pending = self._memory.curation.pending
        return await self._lanes.write(pending.request, kind, text, new_text, by=by)

    async def requests(self, *, all_: bool = False) -> list[Request]:
        return await self._lanes.read(self._memory.curation.pending.requests, all_=all_)

    async def confirm(self, rid: str) -> dict[str, Any]:
        return await self._lanes.write(self._memory.curation.pending.confirm, rid)

    async def reject(self, rid: str) -> Request:
        return await self._lanes.write(self._memory.curation.pending.reject, rid)


class AsyncIntents:
    """``Reverie.intents`` as coroutines (changes on the writer, listings on a reader)."""

    def __init__(self, memory: Reverie, lanes: Lanes) -> None:
        self._memory, self._lanes = memory, lanes

    async def add(
        self, text: str, *, proposer: Proposer, proposed_by: str, **how: str | None
    ) -> Intent:
        """:meth:`reverie.intents.service.Intents.add` (armed only for the owner)."""
        add = self._memory.intents.add
        return await self._lanes.write(add, text, proposer=proposer, proposed_by=proposed_by, **how)

    async def confirm(self, intent_id: str) -> Intent:
        return await self._lanes.write(self._memory.intents.confirm, intent_id)

    async def cancel(self, intent_id: str) -> Intent:
        return await self._lanes.write(self._memory.intents.cancel, intent_id)

    async def get(self, intent_id: str) -> Intent:
        return await self._lanes.read(self._memory.intents.get, intent_id)

    async def listing(self, *, all: bool = False) -> list[Intent]:
        return await self._lanes.read(self._memory.intents.listing, all=all)


__all__ = ["AsyncCuration", "AsyncIntents", "AsyncSession"]
