"""Is the index behind the files? A cheap stat check for long-running servers and the
CLI's ``search``, so a hand edit is found without anyone running ``reverie index``.

:func:`stale` walks the workspace (a ``stat`` per Markdown file, no reads) and compares
sizes and modification times with the index's source registry; the index's own dirty
flag (set by every write through the engine) counts too. :func:`sync_if_stale` then
runs the ordinary sync, which re-reads only the files that changed.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from ..engine import Reverie
from ..storage.index.sync import SyncStats
from ..storage.workspace import FileEntry


def stale(engine: Reverie) -> bool:
    """True when a file was added, changed or removed since the last sync, or the
    index is marked dirty (or was never synced)."""
    if engine.is_dirty():
        return True
    with engine._lock:  # the engine shares one connection between threads
        rows = engine.conn.execute("SELECT path, size, mtime_ns FROM sources").fetchall()
    known = {str(r[0]): (int(r[1]), int(r[2])) for r in rows}
    seen = 0
    for entry in engine.workspace.walk():
        if not isinstance(entry, FileEntry):
            continue
        key = entry.real or entry.relpath
        if known.get(key) != (entry.size, entry.mtime_ns):
            return True
        seen += 1
    return seen < len(known)  # a file was removed


def sync_if_stale(engine: Reverie, *, wait: float | None = 30.0) -> SyncStats | None:
    """Sync when :func:`stale`; None when the index was current."""
    return engine.index(wait=wait) if stale(engine) else None


class FreshnessGuard:
    """For a server: before each call, sync if the files changed, checking at most once
    per ``interval`` seconds (a hand edit is visible within about that long)."""

    def __init__(
        self,
        engine: Reverie,
        *,
        interval: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.engine = engine
        self.interval = interval
        self._clock = clock
        self._last = float("-inf")
        self._lock = threading.Lock()
        self.syncs = 0

    def check(self) -> SyncStats | None:
        with self._lock:
            now = self._clock()
            if now - self._last < self.interval:
                return None
            self._last = now
        stats = sync_if_stale(self.engine)
        if stats is not None:
            self.syncs += 1
        return stats


__all__ = ["FreshnessGuard", "stale", "sync_if_stale"]
