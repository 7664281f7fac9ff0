"""``reverie serve``: keep the index fresh and dream at night, in one background process.

- **One daemon per state dir.** An OS file lock (``daemon.lock``, taken without waiting,
  dropped by the OS when the process dies); a second daemon fails at once with
  "another daemon is running (pid N)".
- **Three sync triggers (SPEC 2.3 step 0).** A recursive file watcher on the workspace
  (indexed ``.md`` files, folder moves and deletes; not reads, which our sync causes),
  debounced by ``watch_debounce`` (1.5 s); a backstop sync every ``sync_interval``
  seconds; and the index's ``dirty`` flag, which other processes set.
  While the watcher runs and saw nothing since the last sync, :meth:`Daemon.watched_current`
  vouches for the index, so a warm search need not walk the files.
- **The nightly dream (R-DREAM-1)** when :func:`reverie.dreaming.schedule.due_run` says so
  (local time). The last slot run is kept in ``daemon-state.json``: a night missed
  asleep runs once on wake, never twice; on a first start no earlier slot is replayed.
- **Faults.** A recorded slot more than an hour ahead of the clock is clock skew:
  re-baselined at now. A lock file gone or replaced (state dir deleted) stops the loop
  loudly, so two daemons never serve one state dir. P5: a failing sync or dream is
  logged and retried later (a sync with backoff, a dream at its next slot).
- **Clean shutdown.** :meth:`Daemon.run` returns when its stop event is set: a sync stops
  at the next batch boundary (a transaction per file; the dirty flag sends the rest to
  the next sync), a dream finishes (its ``MEMORY.md`` write is atomic), the lock goes.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from datetime import datetime, timedelta, tzinfo
from typing import Any

from filelock import FileLock, Timeout
from watchdog.observers import Observer

from ..clock import local_zone
from ..dreaming.schedule import DaemonState, due_run, next_run, validate
from ..engine import Reverie
from ..errors import DaemonBusy, ReverieError
from ..intents.notify import notify_due
from ..storage.watch import WorkspaceWatcher
from .remote import RemoteSync
from .summary import Summary

SYNC_LOCK_WAIT = 10.0  # seconds; another process's long sync: retry on a later tick
CLOCK_SKEW_TOLERANCE = timedelta(hours=1)  # a recorded slot further ahead is clock skew
log = logging.getLogger("reverie.daemon")
_RETRY_MIN = 5.0  # first retry after a failed sync, seconds; doubles up to sync_interval


class _Interrupted(Exception):
    """Raised from the sync's progress callback to stop at a batch boundary."""


class Daemon:
    """Watch, sync and dream for one agent until stopped. See the module docstring."""

    def __init__(
        self,
        engine: Reverie,
        *,
        watch: bool = True,
        schedule: bool = True,
        tick: float = 1.0,
        now: Any = None,
        zone: tzinfo | None = None,
        server: Any = None,
        remote: RemoteSync | None = None,
    ) -> None:
        self.engine = engine
        self.server = server  # a DaemonServer (reverie.daemon.http), started once locked
        self.watch = watch
        self.schedule = schedule
        self.tick = max(0.01, float(tick))
        self.now = now or engine.clock.now
        self.zone = zone or local_zone()
        settings = engine.settings
        self.cron = validate(str(settings.dream_schedule)) if schedule else ""
        self.debounce = float(settings.watch_debounce)
        self.interval = float(settings.sync_interval)
        self.max_delay = max(10 * self.debounce, 5.0)  # a file saved nonstop still syncs
        self.lock_path = engine.workspace.daemon_lock
        self.state_path = engine.workspace.daemon_state
        self.state = DaemonState.load(self.state_path)  # re-read once the lock is held
        self.summary = Summary()
        self._lock: FileLock | None = None
        self._lock_id: tuple[int, int] | None = None
        self._events = threading.Lock()
        self._first_event: float | None = None
        self._last_event = 0.0
        self._seen, self._synced, self._watching = 0, -1, False  # watcher events: all, synced
        self._retry_at = 0.0
        self._retry_delay = _RETRY_MIN
        self._stop = threading.Event()
        self.remote = remote  # ``--sync-every``: the git sync on a schedule

    # -- lifecycle ---------------------------------------------------------------------
    def acquire(self) -> None:
        """Take the per-state-dir lock or raise :class:`DaemonBusy` at once."""
        self.lock_path.parent.mkdir(parents=True, exist_ok=True)
        lock = FileLock(str(self.lock_path), timeout=0)
        try:
            lock.acquire()
        except Timeout:
            pid = DaemonState.load(self.state_path).pid
            who = f"pid {pid}" if pid else "pid unknown"
            raise DaemonBusy(
                f"another daemon is running ({who}) on {self.engine.workspace.agent_dir}"
            ) from None
        self._lock = lock
        st = os.stat(self.lock_path)
        self._lock_id = (st.st_dev, st.st_ino)

    def state_dir_intact(self) -> bool:
        """Whether the lock file this daemon holds is still the one at its path (same
        inode): False once the state dir was deleted or replaced under it."""
        try:
            st = os.stat(self.lock_path)
        except OSError:
            return False
        return self._lock_id is None or (st.st_dev, st.st_ino) == self._lock_id

    def release(self) -> None:
        if self._lock is not None:
            self._lock.release()
            self._lock = None

    def run(self, stop_event: threading.Event | None = None, *, once: bool = False) -> Summary:
        """Serve until ``stop_event`` is set (``once``: one sync and one due-dream check)."""
        self._stop = stop_event or threading.Event()
        self.acquire()
        observer: Any = None
        try:
            self._begin()
            if self.server is not None and not once:
                self._start_server()
            if self.watch and not once:
                observer = self._start_watcher()
            self.sync("start")
            if self.schedule and not self._stop.is_set():
                self.dream_if_due()
            notify_due(self.engine.intents)  # time intents fire on time (never raises)
            if not once:
                self._loop()
        finally:
            if observer is not None:
                observer.stop()
                observer.join(timeout=5)
            if self.server is not None:
                self.server.stop()
            self._end()
            self.release()
        return self.summary

    def _begin(self) -> None:
        self.state = DaemonState.load(self.state_path)
        now = self.now()
        if self.state.last_slot_time() is None:
            # First start: nothing from before the daemon existed is "missed".
            self.state.last_slot = now.isoformat()
        self._unskew(now)
        self.state.pid = os.getpid()
        self.state.started = now.isoformat(timespec="seconds")
        self.state.stopped = None
        self.state.syncs = self.state.sync_errors = 0
        self._save()
        ws = self.engine.workspace
        log.info("serving %s (state %s, pid %d)", ws.root, ws.agent_dir, os.getpid())
        if self.schedule:
            self.summary.next_dream = next_run(self.cron, now, self.zone).isoformat()
            log.info("next dream at %s (%s)", self.summary.next_dream, self.cron)

    def _end(self) -> None:
        self.state.stopped = self.now().isoformat(timespec="seconds")
        if not self.summary.state_dir_lost:  # never re-create a deleted state dir
            self._save()
        log.info("stopped after %d syncs and %d dreams", self.summary.syncs, self.summary.dreams)

    def _unskew(self, now: datetime) -> bool:
        """A recorded slot in the future means the clock once ran ahead: it would block
        every dream until that day. Warn and take ``now`` as the new baseline."""
        last = self.state.last_slot_time()
        if last is None or last <= now + CLOCK_SKEW_TOLERANCE:
            return False
        log.warning(
            "clock skew: the last dream slot on record (%s) is after the clock's now (%s); "
            "the clock ran ahead at some point. Re-baselining the schedule at now.",
            last.isoformat(),
            now.isoformat(),
        )
        self.state.last_slot = now.isoformat()
        return True

    def _save(self) -> None:
        try:
            self.state.save(self.state_path)
        except OSError as exc:  # P5: a full disk must not stop the daemon
            log.error("cannot write %s: %s", self.state_path, exc)

    # -- the loop ------------------------------------------------------------------------
    def _loop(self) -> None:
        next_backstop = time.monotonic() + self.interval
        while not self._stop.is_set():
            if not self.state_dir_intact():
                self.summary.state_dir_lost = True
                log.error(
                    "state dir %s (lock %s) was deleted or replaced under the running daemon; "
                    "stopping so that no two daemons serve it (start `reverie serve` again)",
                    self.engine.workspace.agent_dir,
                    self.lock_path,
                )
                return
            mono = time.monotonic()
            reason = self._sync_reason(mono, next_backstop)
            if reason is not None:
                self.sync(reason)
                next_backstop = time.monotonic() + self.interval
            if self.schedule and not self._stop.is_set():
                self.dream_if_due()
            notify_due(self.engine.intents)
            if self.remote is not None and not self._stop.is_set() and self.remote.tick():
                self.summary.git_syncs, self.summary.git_sync_errors = (
                    self.remote.runs,
                    self.remote.errors,
                )
            self._stop.wait(self._timeout(next_backstop))

    def _sync_reason(self, mono: float, next_backstop: float) -> str | None:
        if mono < self._retry_at:
            return None
        with self._events:
            first = self._first_event
            quiet = mono - self._last_event >= self.debounce
        if first is not None and (quiet or mono - first >= self.max_delay):
            return "watch"
        if mono >= next_backstop:
            return "backstop"
        if self._dirty():
            return "dirty"
        return None

    def _timeout(self, next_backstop: float) -> float:
        mono = time.monotonic()
        wait = min(self.tick, next_backstop - mono)
        if self.remote is not None:
            wait = min(wait, self.remote.wait())
        with self._events:
            if self._first_event is not None:
                wait = min(wait, self._last_event + self.debounce - mono)
        if self._retry_at > mono:
            wait = max(wait, min(self.tick, self._retry_at - mono))
        return max(0.01, wait)

    def _dirty(self) -> bool:
        try:
            return self.engine.is_dirty()
        except Exception as exc:  # a broken index is the sync's to report
            log.debug("dirty flag unreadable: %s", exc)
            return False

    # -- watcher ---------------------------------------------------------------------------
    def notice(self) -> None:
        """A relevant file changed: (re)start the debounce timer."""
        mono = time.monotonic()
        with self._events:
            self._last_event = mono
            self._seen += 1
            if self._first_event is None:
                self._first_event = mono

    def watched_current(self) -> bool:
        """The watcher runs and a completed sync covered every change it saw."""
        with self._events:
            return self._watching and self._synced == self._seen

    def _start_watcher(self) -> Any:
        root = self.engine.workspace.root
        try:
            observer = Observer()
            observer.schedule(WorkspaceWatcher(root, self.notice), str(root), recursive=True)
            observer.daemon = True
            observer.start()
            self._watching = True
        except Exception as exc:  # P5: fall back to the backstop timer
            log.error("file watcher unavailable (%s); relying on the periodic sync", exc)
            return None
        log.info("watching %s (debounce %.1f s)", root, self.debounce)
        return observer

    def _start_server(self) -> None:
        try:
            self.server.start()
        except Exception as exc:  # P5: hooks and the CLI fall back to their one-shot path
            log.error("loopback server unavailable (%s); hooks and the CLI run one-shot", exc)

    # -- steps -----------------------------------------------------------------------------
    def sync(self, reason: str) -> bool:
        """One incremental sync; False if it failed or was interrupted (logged, never
        raised). Stops at the next batch boundary once the stop event is set."""
        with self._events:
            self._first_event = None  # events from now on need another sync
            seen = self._seen

        def progress(done: int, total: int, path: str) -> None:
            if self._stop.is_set() and done < total:
                raise _Interrupted(f"{done}/{total}")

        started = time.monotonic()
        try:
            stats = self.engine.index(progress=progress, wait=SYNC_LOCK_WAIT)
        except _Interrupted as exc:
            self.summary.sync_interrupted = True
            log.info("sync interrupted at %s files by shutdown; the rest waits", exc)
            try:
                self.engine.mark_dirty()
            except Exception as mark_exc:
                log.warning("could not mark the index dirty: %s", mark_exc)
            return False
        except Exception as exc:  # P5: log, back off, keep serving
            self.summary.sync_errors += 1
            self.state.sync_errors += 1
            self.state.last_sync = {"reason": reason, "ok": False, "error": _describe(exc)}
            self._retry_at = time.monotonic() + self._retry_delay
            log.error(
                "sync (%s) failed: %s; retry in %.0f s", reason, _describe(exc), self._retry_delay
            )
            self._retry_delay = min(self._retry_delay * 2, max(self.interval, _RETRY_MIN))
            self._save()
            return False
        self._retry_at, self._retry_delay = 0.0, _RETRY_MIN
        with self._events:
            self._synced = max(self._synced, seen)
        self.summary.syncs += 1
        self.state.syncs += 1
        self.state.last_sync = {
            "reason": reason,
            "ok": True,
            "at": self.now().isoformat(timespec="seconds"),
            "changed": stats.files_changed,
            "deleted": stats.files_deleted,
            "seconds": round(time.monotonic() - started, 3),
        }
        if stats.files_changed or stats.files_deleted:
            log.info(
                "sync (%s): %d changed, %d deleted",
                reason,
                stats.files_changed,
                stats.files_deleted,
            )
        self._save()
        return True

    def dream_if_due(self, now: datetime | None = None) -> dict[str, Any] | None:
        """Dream if a scheduled slot passed since the last one handled; returns the
        record written to the state file, or None when nothing was due."""
        now = now or self.now()
        if self._unskew(now):
            self._save()
        try:
            slot = due_run(self.cron, now=now, last_run=self.state.last_slot_time(), tz=self.zone)
        except ReverieError as exc:
            log.error("dream schedule: %s", exc)
            return None
        if slot is None:
            return None
        record: dict[str, Any] = {"slot": slot.isoformat(), "at": now.isoformat()}
        if not self.engine.dreaming_enabled:
            record["outcome"] = "skipped"
            self.summary.dreams_skipped += 1
            log.info("dream slot %s skipped: dreaming is off", slot.isoformat())
        else:
            log.info("dreaming (slot %s)", slot.isoformat())
            try:
                report = self.engine.dream()
            except Exception as exc:  # P5: the next slot tries again
                record.update(outcome="error", error=_describe(exc))
                self.summary.dream_errors += 1
                log.error("dream failed: %s", _describe(exc))
            else:
                record.update(outcome="ok", promoted=len(report.promoted), mode=report.mode)
                self.summary.dreams += 1
                log.info("dream done: %d promoted (%s)", len(report.promoted), report.mode)
            self.state.dream_runs += 1
        # Record the slot whatever happened: a slot is handled once, never twice.
        self.state.last_slot = slot.isoformat()
        self.state.last_dream = record
        self._save()
        self.summary.next_dream = next_run(self.cron, now, self.zone).isoformat()
        if record["outcome"] == "ok" and not self._stop.is_set() and self.engine.is_dirty():
            # the dream indexes what it wrote itself; sync only what it could not
            self.sync("dream")
        return record


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


__all__ = ["Daemon", "DaemonBusy", "DaemonState", "Summary"]
