"""LangGraph: :class:`ReverieStore`, a ``langgraph.store.base.BaseStore`` (sync and async).

    from reverie.adapters.langgraph import ReverieStore
    store = ReverieStore(AsyncReverie.open(...))
    graph = builder.compile(store=store)       # nodes get it as ``store`` / runtime.store

How LangGraph's items map onto memory (files stay the truth):

- every ``put`` appends one record to today's journal, as the connected agent with the
  store's declared source (``agent`` by default; ``tool``, ``web``, ``member`` write it
  ``untrusted``), tagged with the project ``langgraph/<namespace>`` (R-SCOPE-1). The
  record is the namespace, the key and the value as JSON (:mod:`.langgraph_records`):
  any text, any size (a long one is written in parts), read back equal;
- the newest record of a key is the item, so ``get`` reads back exactly what was put;
  its origin, computed from the line's signed marker, stands beside the value
  (:class:`ReverieItem` ``.origin``, and ``.framed``: the text a model may read of an
  untrusted or system item), never inside it;
- a record replaces (or deletes) an item only when its origin is at least as trusted
  as the item's: a tool's write never overwrites or deletes what the agent put. An
  owner's line is never an item;
- ``delete`` appends a delete record: the item is gone from the store, and a ``put``
  of the same value brings it back. It is not the owner's forget (``reverie forget``
  removes the lines for good and refuses them again); the earlier records stay in the
  journal as its history;
- ``search(prefix, query=...)`` ranks the items under the prefix by Reverie's hybrid
  search (its score); the items it does not rank follow, newest first, with score 0,
  and items put with ``index=False`` come last, with no score. Without a query, the
  newest first. ``filter`` takes the operators LangGraph documents. LangGraph's own
  ``index`` configuration (an embedder, fields to embed) does not apply: the whole
  record is searched, with the workspace's embedder;
- the store keeps the records it has read and re-reads only the journals that changed
  since (their size and modification time), so ``get`` does not grow with the store.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
from collections.abc import Coroutine, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)

from ..aio import AsyncReverie
from ..engine import Reverie
from ..provenance.frames import frame_for
from ..provenance.origin import CONNECTED_AGENT, Origin
from . import langgraph_records as records
from .common import source_of, write_as_agent

T = TypeVar("T")
_STAMP = re.compile(r"-->\s*(\d{1,2}):(\d{2})\b")
_DAY = re.compile(r"\d{4}-\d\d-\d\d")


class _Provenance:
    """An item's provenance beside its value: ``origin`` (computed from the line's
    signed marker) and ``framed`` (the value as a model may read it, for an untrusted
    or system item; None otherwise)."""

    __slots__ = ()
    origin: str
    framed: str | None

    def __init__(self, *, origin: str, framed: str | None, **item: Any) -> None:
        super().__init__(**item)
        self.origin, self.framed = origin, framed  # type: ignore[misc]  # (slots below)

    def dict(self) -> dict[str, Any]:
        return {**super().dict(), "origin": self.origin, "framed": self.framed}  # type: ignore[misc]


class ReverieItem(_Provenance, Item):
    """What ``get`` returns: an ``Item`` with its provenance beside the value."""

    __slots__ = ("framed", "origin")


class ReverieSearchItem(_Provenance, SearchItem):
    """What ``search`` returns: a ``SearchItem`` with its provenance beside the value."""

    __slots__ = ("framed", "origin")


@dataclass(frozen=True)
class _Entry:
    """The current state of one item: its newest record and where it stands."""

    path: str
    first: int  # the record's first and last line
    last: int
    value: dict[str, Any]
    indexed: bool
    origin: Origin
    created: datetime
    updated: datetime


def project_of(namespace: tuple[str, ...]) -> str:
    """The project key of a namespace (``("users", "Alice")`` -> ``langgraph/users/alice``)."""
    text = "/".join(re.sub(r"[^A-Za-z0-9_.@~+-]", "_", part) for part in namespace)
    return ("langgraph/" + text).lower()[:128]


def _run(coro: Coroutine[Any, Any, T]) -> T:
    """A coroutine run to completion from synchronous code (a thread of its own when
    the caller is inside an event loop already)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    out: list[T] = []
    err: list[BaseException] = []

    def target() -> None:
        try:
            out.append(asyncio.run(coro))
        except BaseException as exc:  # handed back to the caller
            err.append(exc)

    thread = threading.Thread(target=target)
    thread.start()
    thread.join()
    if err:
        raise err[0]
    return out[0]


def _day_of(path: str) -> datetime:
    """A journal's day (``memory/2026-06-01.md``), else now."""
    day = _DAY.search(Path(path).stem)
    return datetime.fromisoformat(day.group()) if day else datetime.now(UTC)


def _when(day: datetime, text: str) -> datetime:
    """The time a journal line was written: its file's day and its HH:MM stamp."""
    at = day
    stamp = _STAMP.search(text)
    if stamp:
        at = at.replace(hour=int(stamp.group(1)), minute=int(stamp.group(2)))
    return at if at.tzinfo else at.replace(tzinfo=UTC)


class ReverieStore(BaseStore):
    """LangGraph's store over one agent's memory (see the module's docstring)."""

    def __init__(self, memory: AsyncReverie | Reverie, *, source: str = "agent") -> None:
        if isinstance(memory, Reverie):
            memory = AsyncReverie(memory)
        if not isinstance(memory, AsyncReverie):
            raise TypeError(
                f"ReverieStore needs a Reverie or an AsyncReverie, not {type(memory).__name__}"
            )
        self.memory = memory
        self.source = source  # what the graph's writes are: "agent", or "tool"/"web"/"member"
        self._writes_as = CONNECTED_AGENT.origin(source_of(source))
        self._files: dict[str, tuple[int, int]] = {}  # path -> (size, mtime_ns) read
        self._records: dict[str, list[tuple[int, int, records.Record, Origin, datetime]]] = {}
        self._items: dict[tuple[tuple[str, ...], str], _Entry] = {}
        self._lock = threading.Lock()

    # -- BaseStore's two abstract methods ----------------------------------------------
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        return _run(self.abatch(list(ops)))

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        results: list[Result] = []
        for op in ops:
            if isinstance(op, GetOp):
                results.append(await self._get(op))
            elif isinstance(op, SearchOp):
                results.append(await self._search(op))
            elif isinstance(op, PutOp):
                await self._put(op)
                results.append(None)
            elif isinstance(op, ListNamespacesOp):
                results.append(await self._namespaces(op))
            else:
                raise TypeError(f"unknown store operation {type(op).__name__}")
        return results

    # -- the items, read from the journals that changed --------------------------------
    async def _current(self) -> dict[tuple[tuple[str, ...], str], _Entry]:
        root = self.memory.memory.workspace.root
        seen: dict[str, tuple[int, int]] = {}
        for file in sorted((root / "memory").glob("*.md")):
            try:
                st = file.stat()
            except OSError:
                continue
            seen[file.relative_to(root).as_posix()] = (st.st_size, st.st_mtime_ns)
        changed = [p for p, sig in seen.items() if self._files.get(p) != sig]
        gone = [p for p in self._files if p not in seen]
        if not changed and not gone:
            return self._items
        fresh = {p: await self._read(p) for p in changed}
        with self._lock:
            for p in gone:
                self._records.pop(p, None)
            self._records.update(fresh)
            self._files = seen
            self._items = self._replay()
            return self._items

    async def _read(self, rel: str) -> list[tuple[int, int, records.Record, Origin, datetime]]:
        """One journal's records, each with its origin (the lowest of its lines')."""
        lines: list[tuple[int, str]] = []
        origins: dict[int, Origin] = {}
        start: int | None = 1
        while start is not None:
            got = await self.memory.get(rel, from_line=start)
            origins.update({n: o for a, b, o in got.segments for n in range(a, b + 1)})
            lines += list(enumerate(got.raw.splitlines(), start=got.start_line))
            start = got.more_from
        text, day = dict(lines), _day_of(rel)
        out: list[tuple[int, int, records.Record, Origin, datetime]] = []
        for first, last, rec in records.read(lines):
            spans = [origins.get(n, Origin.UNTRUSTED) for n in range(first, last + 1)]
            origin = min(spans, key=lambda o: o.rank)
            if origin is not Origin.OWNER:  # an owner's line is never an item
                out.append((first, last, rec, origin, _when(day, text[first])))
        return out

    def _replay(self) -> dict[tuple[tuple[str, ...], str], _Entry]:
        """Every record in file order: the newest one of a key that may replace the
        item (at least its trust) is the item; a delete removes it."""
        items: dict[tuple[tuple[str, ...], str], _Entry] = {}
        for path in sorted(self._records):
            for first, last, rec, origin, at in self._records[path]:
                where = (rec.namespace, rec.key)
                old = items.get(where)
                if old is not None and origin.rank < old.origin.rank:
                    continue  # a less trusted writer never replaces or deletes an item
                if rec.value is None:
                    items.pop(where, None)
                    continue
                created = old.created if old is not None else at
                items[where] = _Entry(
                    path, first, last, rec.value, rec.indexed, origin, created, at
                )
        return items

    @staticmethod
    def _provenance(entry: _Entry) -> dict[str, Any]:
        framed = None
        if entry.origin in (Origin.UNTRUSTED, Origin.SYSTEM):
            body = json.dumps(entry.value, ensure_ascii=False, default=str)
            framed = frame_for(entry.origin, body, f"{entry.path}#L{entry.first}")
        return {"origin": entry.origin.value, "framed": framed}

    async def _get(self, op: GetOp) -> Item | None:
        where = (tuple(op.namespace), op.key)
        entry = (await self._current()).get(where)
        if entry is None:
            return None
        return ReverieItem(
            value=dict(entry.value), key=op.key, namespace=where[0],
            created_at=entry.created, updated_at=entry.updated, **self._provenance(entry),
        )  # fmt: skip

    async def _search(self, op: SearchOp) -> list[SearchItem]:
        prefix = tuple(op.namespace_prefix)
        items = {
            where: e
            for where, e in (await self._current()).items()
            if where[0][: len(prefix)] == prefix
            and (not op.filter or records.matches(e.value, op.filter))
        }
        newest = sorted(
            items, key=lambda w: (items[w].updated, items[w].path, items[w].first), reverse=True
        )
        scored: dict[tuple[tuple[str, ...], str], float] = {}
        if op.query and op.query.strip() and items:
            scored = await self._scores(op.query, prefix, items, op.limit + op.offset)
        order = [
            *sorted(scored, key=lambda w: -scored[w]),
            *[w for w in newest if w not in scored and items[w].indexed],
            *[w for w in newest if w not in scored and not items[w].indexed],
        ]
        if op.query and op.query.strip():  # ranked, found of no relevance: 0 (not None)
            scored = {w: scored.get(w, 0.0) for w in items if items[w].indexed}
        return [
            ReverieSearchItem(
                namespace=w[0],
                key=w[1],
                value=dict(items[w].value),
                created_at=items[w].created,
                updated_at=items[w].updated,
                score=scored.get(w),
                **self._provenance(items[w]),
            )
            for w in order[op.offset : op.offset + op.limit]
        ]

    async def _scores(
        self,
        query: str,
        prefix: tuple[str, ...],
        items: dict[tuple[tuple[str, ...], str], _Entry],
        wanted: int,
    ) -> dict[tuple[tuple[str, ...], str], float]:
        """The items Reverie's hybrid search ranks for ``query``, with their scores."""
        place = {(e.path, n): w for w, e in items.items() if e.indexed
                 for n in range(e.first, e.last + 1)}  # fmt: skip
        await self.memory.refresh()
        active = {project_of(prefix)} if prefix else set()
        response = await self.memory.search(
            query, max_results=max(3 * wanted, 20), active_projects=active
        )
        out: dict[tuple[tuple[str, ...], str], float] = {}
        for hit in response.hits:
            for n in range(hit.start_line, hit.end_line + 1):
                where = place.get((hit.path, n))
                if where is not None and where not in out:
                    out[where] = float(hit.score)
        return out

    async def _put(self, op: PutOp) -> None:
        namespace = tuple(op.namespace)
        current = (await self._current()).get((namespace, op.key))
        if current is not None and current.origin.rank > self._writes_as.rank:
            raise PermissionError(
                f"refused: item {op.key!r} in {namespace} was written at {current.origin.value} "
                f"trust; this store writes at {self._writes_as.value} and may not replace it"
            )
        if op.value is None:
            if current is None:
                return  # nothing to delete
            record = records.encode(namespace, op.key, None)
        else:
            value = dict(op.value)
            indexed = op.index is not False
            if current is not None and current.value == value and current.indexed == indexed:
                return  # the same item again: nothing changes
            record = records.encode(namespace, op.key, value, index=indexed)
        text = "\n".join(records.lines_of(record))
        await write_as_agent(self.memory, text, self.source, project=project_of(namespace))

    async def _namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        spaces = sorted({where[0] for where in await self._current()})
        for cond in op.match_conditions or ():
            path = tuple(cond.path)
            spaces = [ns for ns in spaces if records.namespace_matches(ns, path, cond.match_type)]
        if op.max_depth is not None:
            spaces = sorted({ns[: op.max_depth] for ns in spaces})
        return spaces[op.offset : op.offset + op.limit]


__all__ = ["ReverieItem", "ReverieSearchItem", "ReverieStore", "project_of"]
