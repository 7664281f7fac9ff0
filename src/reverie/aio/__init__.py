"""``AsyncReverie``: the verbs of :class:`reverie.Reverie` as coroutines.

    from reverie.aio import AsyncReverie

    async with AsyncReverie.open("~/.reverie/workspace") as mem:
        await mem.write("The deploy key rotates on Fridays.", source="owner", author=me)
        await mem.refresh()
        hits = (await mem.search("deploy key")).hits

Each verb returns exactly what the synchronous verb returns (the same typed results)
and runs it off the event loop (:mod:`reverie.aio.lanes`): what writes on the
workspace's one writer thread, what reads on a bounded pool. Many tasks may call one
``AsyncReverie`` at once; nothing here holds a lock across an ``await``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self, TypeVar

from ..engine import Reverie
from ..provenance.origin import Author, Origin, SessionKind, Source
from .lanes import Lanes
from .parts import AsyncCuration, AsyncIntents, AsyncSession

if TYPE_CHECKING:
    from ..dreaming.curate import OwnerPromotion, OwnerRejected
    from ..dreaming.report import DreamReport
    from ..dreaming.state import DreamStatus
    from ..engine import Refresh
    from ..recall.bootstrap import Bootstrap
    from ..recall.context import TurnContext
    from ..recall.escalation import Target
    from ..recall.search import GetResult, SearchResponse
    from ..recall.search import Lanes as SearchLanes
    from ..storage.index.sync import SyncStats
    from ..write.ingest import IngestResult
    from ..write.journal import Appended

T = TypeVar("T")
DEFAULT_READERS = 2  # the facade serialises index reads on its connection: more add GIL churn


class AsyncReverie:
    """One agent's memory for asyncio code: :class:`Reverie`'s verbs, awaited."""

    def __init__(self, memory: Reverie, *, readers: int = DEFAULT_READERS) -> None:
        self.memory = memory  # the synchronous door, for what is not a verb here
        self._lanes = Lanes(memory.workspace.root, readers=readers)
        self.curation = AsyncCuration(memory, self._lanes)
        self.intents = AsyncIntents(memory, self._lanes)

    @classmethod
    def open(
        cls,
        workspace: str | Path | None = None,
        state_dir: str | Path | None = None,
        *,
        environ: Mapping[str, str] | None = None,
        readers: int = DEFAULT_READERS,
        **kw: Any,
    ) -> AsyncReverie:
        """:meth:`Reverie.open` (cheap: nothing is loaded before the first verb)."""
        return cls(Reverie.open(workspace, state_dir, environ=environ, **kw), readers=readers)

    async def aclose(self) -> None:
        """Let every verb asked for finish, then close the memory."""
        await self._lanes_closed()
        self.memory.close()

    async def _lanes_closed(self) -> None:
        import asyncio

        await asyncio.to_thread(self._lanes.close)  # (waits for threads: off the loop)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def in_reader(self, fn: Callable[..., T], /, *args: Any, **kw: Any) -> T:
        """Run a door's own synchronous code over :attr:`memory` that only reads (the
        Claude Agent SDK's prompt hook) on a reader thread."""
        return await self._lanes.read(fn, *args, **kw)

    async def in_writer(self, fn: Callable[..., T], /, *args: Any, **kw: Any) -> T:
        """Run a door's own synchronous code over :attr:`memory` that writes (a
        transcript mirrored at compaction) on the workspace's writer."""
        return await self._lanes.write(fn, *args, **kw)

    # -- reads ------------------------------------------------------------------------
    async def search(
        self,
        query: str,
        *,
        max_results: int | None = None,
        active_projects: frozenset[str] | set[str] | tuple[str, ...] = (),
        lanes: SearchLanes = "hybrid",
        decay: bool = True,
        record: bool = True,
        budget_tokens: int | None = None,
    ) -> SearchResponse:
        """:meth:`Reverie.search`."""
        return await self._lanes.read(
            self.memory.search,
            query,
            max_results=max_results,
            active_projects=active_projects,
            lanes=lanes,
            decay=decay,
            record=record,
            budget_tokens=budget_tokens,
        )

    async def get(self, path: str, *, from_line: int = 1, lines: int | None = None) -> GetResult:
        """:meth:`Reverie.get`."""
        return await self._lanes.read(self.memory.get, path, from_line=from_line, lines=lines)

    async def context(
        self,
        message: str,
        *,
        active_projects: frozenset[str] | set[str] | tuple[str, ...] = (),
        target: Target | None = None,
        explain_lane: bool = True,
    ) -> TurnContext:
        """:meth:`Reverie.context` (never raises for a memory failure)."""
        return await self._lanes.read(
            self.memory.context,
            message,
            active_projects=active_projects,
            target=target,
            explain_lane=explain_lane,
        )

    async def bootstrap(self) -> Bootstrap:
        """:meth:`Reverie.bootstrap`."""
        return await self._lanes.read(self.memory.bootstrap)

    async def status(self) -> dict[str, Any]:
        """:meth:`Reverie.status`."""
        return await self._lanes.read(self.memory.status)

    async def dream_status(self) -> DreamStatus:
        """:meth:`Reverie.dream_status`."""
        return await self._lanes.read(self.memory.dream_status)

    async def dream_explain(self, key: str) -> dict[str, Any]:
        """:meth:`Reverie.dream_explain`."""
        return await self._lanes.read(self.memory.dream_explain, key)

    async def preimages(self) -> list[Path]:
        """:meth:`Reverie.preimages`."""
        return await self._lanes.read(self.memory.preimages)

    # -- writes: the workspace's one writer -----------------------------------------
    async def write(
        self,
        text: str,
        *,
        source: Source | str,
        author: Author,
        lower_to: Origin | None = None,
        info: dict[str, str] | None = None,
        sync: bool = False,
        project: str | None = None,
    ) -> Appended:
        """:meth:`Reverie.write`: the origin is what ``author`` gives ``source``."""
        return await self._lanes.write(
            self.memory.write,
            text,
            source=Source(source),
            author=author,
            lower_to=lower_to,
            info=info,
            sync=sync,
            project=project,
        )

    async def refresh(self) -> Refresh:
        """:meth:`Reverie.refresh` (never raises)."""
        return await self._lanes.write(self.memory.refresh)

    async def index(self, *, force: bool = False, wait: float | None = None) -> SyncStats:
        """:meth:`Reverie.index`."""
        return await self._lanes.write(self.memory.index, force=force, wait=wait)

    async def ingest(
        self, transcript: Path, *, session_kind: SessionKind | None = None, trust: bool = False
    ) -> IngestResult:
        """:meth:`Reverie.ingest`."""
        kind = session_kind
        return await self._lanes.write(
            self.memory.ingest, transcript, session_kind=kind, trust=trust
        )

    async def open_session(self, **kw: Any) -> AsyncSession:
        """:meth:`Reverie.open_session` (``kind``, ``channel``, ``sender``, ``owner``,
        ``session_id``, ``cwd``); its verbs are coroutines too."""
        session = await self._lanes.write(self.memory.open_session, **kw)
        return AsyncSession(session, self._lanes)

    async def dream(self, *, dry_run: bool = False) -> DreamReport:
        """:meth:`Reverie.dream` (a preview reads only)."""
        if dry_run:
            return await self._lanes.read(self.memory.dream, dry_run=True)
        return await self._lanes.write(self.memory.dream)

    async def dream_promote(self, key: str) -> OwnerPromotion:
        """:meth:`Reverie.dream_promote`."""
        return await self._lanes.write(self.memory.dream_promote, key)

    async def dream_reject(self, key: str) -> OwnerRejected:
        """:meth:`Reverie.dream_reject`."""
        return await self._lanes.write(self.memory.dream_reject, key)

    async def dream_restore(self, name: str | None = None) -> Path:
        """:meth:`Reverie.dream_restore`."""
        return await self._lanes.write(self.memory.dream_restore, name)


__all__ = ["AsyncCuration", "AsyncIntents", "AsyncReverie", "AsyncSession"]
