"""Before each call, sync the index if the files changed (hand edits included),
checking at most once per ``interval`` seconds: an edit is visible within about that."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from ..engine import Reverie
from ..errors import ReverieError
from ..storage.index.sync import SyncStats


class FreshnessGuard:
    """Throttled :func:`reverie.storage.index.freshness.behind` check plus sync."""

    def __init__(
        self,
        engine: Reverie,
        *,
        interval: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
        current: Callable[[], bool] | None = None,
    ) -> None:
        self.engine = engine
        self.current = current  # the daemon's watcher vouching for the index (relayed)
        self.interval = interval
        self._clock = clock
        self._last = float("-inf")
        self._lock = threading.Lock()
        self.syncs = 0

    def check(self) -> SyncStats | None:
        """Sync when the files changed; None when the index was current (or checked
        less than ``interval`` seconds ago)."""
        with self._lock:
            now = self._clock()
            if now - self._last < self.interval:
                return None
            self._last = now
        if self.current is not None and self.current() and not self.engine.is_dirty():
            return None
        refreshed = self.engine.refresh()
        if refreshed.note:
            raise ReverieError(refreshed.note)
        if refreshed.synced is not None:
            self.syncs += 1
        return refreshed.synced


__all__ = ["FreshnessGuard"]
