"""The two thread lanes an :class:`reverie.aio.AsyncReverie` runs the facade's verbs on.

Every verb of :class:`reverie.Reverie` blocks (SQLite, the file system, an embedder, a
model call), so a coroutine hands it to a thread and awaits the result; the event loop
only ever waits on a future, never on a lock. Two lanes:

- **the writer**: one thread per workspace, shared by every :class:`AsyncReverie` of
  this process that opens that workspace, so the journal, the index's sync, the dreamer
  and the curation verbs of one workspace are run one at a time, in the order they were
  asked for (a write waits behind a sync, never beside it);
- **the readers**: a bounded pool per :class:`AsyncReverie` for what only reads
  (search, get, context, status). The facade guards its one connection with its own
  lock, so readers wait for a sync in their thread, never on the loop.

No :mod:`asyncio` lock exists here: a task cancelled while it waits leaves its verb to
finish in its thread (a write that was asked for lands, as from any other door).
"""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

_writers: dict[Path, tuple[ThreadPoolExecutor, int]] = {}
_writers_lock = threading.Lock()


def _take_writer(root: Path) -> ThreadPoolExecutor:
    with _writers_lock:
        pool, users = _writers.get(root, (None, 0))
        if pool is None:
            pool = ThreadPoolExecutor(1, thread_name_prefix=f"reverie-writer-{root.name}")
        _writers[root] = (pool, users + 1)
        return pool


def _drop_writer(root: Path) -> None:
    with _writers_lock:
        pool, users = _writers[root]
        if users > 1:
            _writers[root] = (pool, users - 1)
            return
        del _writers[root]
    pool.shutdown(wait=True)  # what was asked for is finished, never dropped


class Lanes:
    """The writer of ``root`` (shared per process) and a pool of ``readers`` threads."""

    def __init__(self, root: Path, *, readers: int) -> None:
        if readers < 1:
            raise ValueError("an AsyncReverie needs at least one reader thread")
        self._root = root.resolve()
        self._writer = _take_writer(self._root)
        self._readers = ThreadPoolExecutor(readers, thread_name_prefix="reverie-reader")
        self._closed = False

    async def write(self, fn: Callable[..., T], /, *args: Any, **kw: Any) -> T:
        """Run ``fn`` on the workspace's one writer thread."""
        return await self._run(self._writer, fn, args, kw)

    async def read(self, fn: Callable[..., T], /, *args: Any, **kw: Any) -> T:
        """Run ``fn`` on a reader thread."""
        return await self._run(self._readers, fn, args, kw)

    async def _run(self, pool: ThreadPoolExecutor, fn: Callable[..., T], args: Any, kw: Any) -> T:
        if self._closed:
            from ..errors import ReverieError

            raise ReverieError("this AsyncReverie is closed")
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(pool, functools.partial(fn, *args, **kw))

    def close(self) -> None:
        """Finish what was asked for, then release the threads (idempotent)."""
        if self._closed:
            return
        self._closed = True
        self._readers.shutdown(wait=True)
        _drop_writer(self._root)


__all__ = ["Lanes"]
