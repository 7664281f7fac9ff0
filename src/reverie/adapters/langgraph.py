"""LangGraph: :class:`ReverieStore`, a ``langgraph.store.base.BaseStore`` (sync and async).

    from reverie.adapters.langgraph import ReverieStore
    store = ReverieStore(AsyncReverie.open(...))
    graph = builder.compile(store=store)       # nodes get it as ``store`` / runtime.store

How LangGraph's items map onto memory (files stay the truth):

- an item is one journal line, ``lg[<namespace>|<key>] <value as JSON>``, tagged with the
  project ``langgraph/<namespace>`` (a namespace is a project: R-SCOPE-1);
- ``put`` appends it as the connected agent with the store's declared source (``agent``
  by default; ``tool``, ``web``, ``member`` write it ``untrusted``), and a value's own
  fields can never raise that origin; a second ``put`` of a key appends its new value
  (the newest line of a key is the item: the journal is append-only);
- ``get`` reads the newest line of the key back from the journals;
- ``search(prefix, query=...)`` is Reverie's hybrid search, limited to the prefix; an
  item whose line is untrusted comes back with its text framed (``value["framed"]``);
- ``delete`` (a ``put`` of None) goes through ``curation.forget``: every line of the
  item is gone, and a value once deleted is refused if put again (a forgotten text).
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
from collections.abc import Coroutine, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
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
from ..provenance.frames import frame_for
from ..provenance.origin import Origin
from .common import write_as_agent

T = TypeVar("T")
_LINE = re.compile(r"lg\[([^\]|]*)\|([^\]]*)\] (\{.*\})\s*$")
_STAMP = re.compile(r"\b(\d{1,2}:\d{2})\b")


@dataclass(frozen=True)
class _Line:
    path: str
    line: int
    namespace: tuple[str, ...]
    key: str
    value: dict[str, Any]
    origin: Origin
    at: datetime


def _ns_text(namespace: tuple[str, ...]) -> str:
    return "/".join(re.sub(r"[^A-Za-z0-9_.@~+-]", "_", part) for part in namespace)


def project_of(namespace: tuple[str, ...]) -> str:
    """The project key of a namespace (``("users", "Alice")`` -> ``langgraph/users/alice``)."""
    return ("langgraph/" + _ns_text(namespace)).lower()[:128]


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


class ReverieStore(BaseStore):
    """LangGraph's store over one agent's memory (see the module's docstring)."""

    def __init__(self, memory: AsyncReverie, *, source: str = "agent") -> None:
        self.memory = memory
        self.source = source  # what the graph's writes are: "agent", or "tool"/"web"/"member"

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

    # -- the items, read from the journals ---------------------------------------------
    async def _lines(self) -> list[_Line]:
        root = self.memory.memory.workspace.root
        out: list[_Line] = []
        for file in sorted((root / "memory").glob("*.md")):
            rel = file.relative_to(root).as_posix()
            start: int | None = 1
            while start is not None:
                got = await self.memory.get(rel, from_line=start)
                origins = {n: o for a, b, o in got.segments for n in range(a, b + 1)}
                for n, text in enumerate(got.raw.splitlines(), start=got.start_line):
                    found = _LINE.search(text)
                    if found is None or origins.get(n, Origin.UNTRUSTED) is Origin.OWNER:
                        continue  # an owner's line is never an item this store may touch
                    try:
                        value = json.loads(found.group(3))
                    except ValueError:
                        continue
                    ns = tuple(p for p in found.group(1).split("/") if p)
                    stamp = _STAMP.search(text[: found.start()])
                    day = (
                        datetime.fromisoformat(file.stem)
                        if re.match(r"\d{4}-\d\d-\d\d$", file.stem)
                        else datetime.now(UTC)
                    )
                    if stamp:
                        h, m = stamp.group(1).split(":")
                        day = day.replace(hour=int(h), minute=int(m))
                    origin = origins.get(n, Origin.UNTRUSTED)
                    at = day if day.tzinfo else day.replace(tzinfo=UTC)
                    out.append(_Line(rel, n, ns, found.group(2), value, origin, at))
                start = got.more_from
        return out

    async def _current(self) -> dict[tuple[tuple[str, ...], str], _Line]:
        latest: dict[tuple[tuple[str, ...], str], _Line] = {}
        for line in await self._lines():
            latest[(line.namespace, line.key)] = line  # files in day order: the newest wins
        return latest

    @staticmethod
    def _value(line: _Line) -> dict[str, Any]:
        value = dict(line.value)
        if line.origin in (Origin.UNTRUSTED, Origin.SYSTEM):
            body = json.dumps(line.value, ensure_ascii=False)
            value["framed"] = frame_for(line.origin, body, f"{line.path}#L{line.line}")
        value["origin"] = line.origin.value  # computed from the signed marker, never the text
        return value

    async def _get(self, op: GetOp) -> Item | None:
        line = (await self._current()).get((tuple(op.namespace), op.key))
        if line is None:
            return None
        return Item(
            value=self._value(line),
            key=line.key,
            namespace=line.namespace,
            created_at=line.at,
            updated_at=line.at,
        )

    async def _search(self, op: SearchOp) -> list[SearchItem]:
        prefix = tuple(op.namespace_prefix)
        current = await self._current()
        by_place = {
            (ln.path, ln.line): ln
            for ln in current.values()
            if ln.namespace[: len(prefix)] == prefix
        }
        chosen: list[tuple[_Line, float | None]] = []
        if op.query:
            await self.memory.refresh()
            wanted = op.limit + op.offset
            response = await self.memory.search(
                op.query, max_results=max(wanted * 3, 10), active_projects={project_of(prefix)}
            )
            seen: set[tuple[str, int]] = set()
            for hit in response.hits:
                for n in range(hit.start_line, hit.end_line + 1):
                    line = by_place.get((hit.path, n))
                    if line is not None and (hit.path, n) not in seen:
                        seen.add((hit.path, n))
                        chosen.append((line, hit.score))
        else:
            chosen = [
                (ln, None) for ln in sorted(by_place.values(), key=lambda ln: ln.at, reverse=True)
            ]
        if op.filter:
            chosen = [
                (ln, s)
                for ln, s in chosen
                if all(ln.value.get(k) == v for k, v in op.filter.items())
            ]
        chosen = chosen[op.offset : op.offset + op.limit]
        return [
            SearchItem(ln.namespace, ln.key, self._value(ln), ln.at, ln.at, score=s)
            for ln, s in chosen
        ]

    async def _put(self, op: PutOp) -> None:
        namespace = tuple(op.namespace)
        if op.value is None:  # delete: every line of the item is forgotten
            old = [
                ln for ln in await self._lines() if (ln.namespace, ln.key) == (namespace, op.key)
            ]
            for line in reversed(old):  # (from the last line up: numbers stay valid)
                await self.memory.curation.forget(key=f"{line.path}:{line.line}")
        else:  # a new line; the newest line of a key is the item (the older ones stay)
            value = json.loads(json.dumps(dict(op.value), default=str))
            current = (await self._current()).get((namespace, op.key))
            if current is not None and current.value == value:
                return  # the same item again: nothing changes
            body = json.dumps(value, ensure_ascii=False, sort_keys=True)
            text = f"lg[{_ns_text(namespace)}|{op.key}] {body}"
            await write_as_agent(self.memory, text, self.source, project=project_of(namespace))
        await self.memory.refresh()

    async def _namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        spaces = sorted({ln.namespace for ln in (await self._current()).values()})
        for cond in op.match_conditions or ():
            path = tuple(cond.path)

            def matches(
                ns: tuple[str, ...], path: tuple[str, ...] = path, kind: str = cond.match_type
            ) -> bool:
                part = ns[: len(path)] if kind == "prefix" else ns[-len(path) :]
                return len(ns) >= len(path) and all(
                    p in ("*", q) for p, q in zip(path, part, strict=True)
                )

            spaces = [ns for ns in spaces if matches(ns)]
        if op.max_depth is not None:
            spaces = sorted({ns[: op.max_depth] for ns in spaces})
        return spaces[op.offset : op.offset + op.limit]


__all__ = ["ReverieStore", "project_of"]
