"""``reverie serve --sync-every MINUTES``: the git sync of :mod:`reverie.sync` on a
schedule inside the daemon (issue 25). One sync at a time, on the daemon's own thread
(it already holds the workspace's writers in order); a failed sync (the remote down, a
refused force-push) is logged and retried at the next slot, and never stops the daemon
or its index and dream work (P5)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

log = logging.getLogger("reverie.daemon")


class RemoteSync:
    """Runs ``sync()`` every ``minutes``: first at start, then one slot after each run."""

    def __init__(
        self,
        sync: Callable[[], Any],
        minutes: float,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if minutes <= 0:
            raise ValueError(f"--sync-every must be a positive number of minutes, not {minutes}")
        self._sync = sync
        self.every = minutes * 60.0
        self._clock = clock
        self.next_at = clock()  # the first sync at start: pull what other devices wrote
        self.runs = 0
        self.errors = 0
        self.last_error: str | None = None

    def wait(self) -> float:
        """Seconds until the next slot (the daemon's loop sleeps no longer than this)."""
        return max(0.0, self.next_at - self._clock())

    def tick(self) -> bool:
        """Sync if the slot came; True when a sync ran (whether or not it failed)."""
        if self._clock() < self.next_at:
            return False
        try:
            report = self._sync()
        except Exception as exc:  # P5: a sync failure is logged, retried next slot
            self.errors += 1
            self.last_error = f"{type(exc).__name__}: {exc}"
            log.error("git sync failed (retrying in %.0f min): %s", self.every / 60, exc)
        else:
            self.runs += 1
            self.last_error = None
            log.info("git sync done: %s", getattr(report, "remote", "the remote"))
        finally:
            self.next_at = self._clock() + self.every
        return True


__all__ = ["RemoteSync"]
