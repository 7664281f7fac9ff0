"""The daemon's work for every tenant of the hosted server (issue 23): what ``reverie
serve`` does for one agent (re-index on a file change, a backstop sync, the git sync
where it is set up, the nightly dream, time intents), done for each tenant of a
``--tenants`` file, at most ``tenant_jobs`` tenants at once.

- **A job** is one tenant's ``reverie serve --once``: its engine opened (the hosted
  server's settings, its own folders and ``tenant_id``), a sync, the dream if a slot of
  its ``dream_schedule`` passed since the last one handled (a tenant's first job only
  sets the baseline, as a daemon's first start does), its time intents, then the git
  sync if that tenant has one set up (a repository with a remote) and
  ``tenant_sync_every`` minutes passed, and the engine closed. A tenant already served
  by a ``reverie serve`` of its own (its daemon lock taken) is skipped, and so is one
  never opened (no state folder yet): a job creates nothing for a tenant nobody used.
- **What queues a job.** Every tenant at start; a file change in its workspace (one
  watcher thread for all tenants), once ``watch_debounce`` seconds passed quietly;
  ``sync_interval`` seconds after its last job (the backstop); every tenant when the
  server's ``dream_schedule`` slot comes (a tenant's own schedule is still checked by
  its job, at the latest by its backstop). A tenant is queued once, however many
  reasons; one queued again while its job runs runs again after it.
- **Bounded.** ``tenant_jobs`` worker threads take the queue in order, so 1,000
  tenants never open 1,000 engines at once; one tenant never has two jobs at once.
- **Faults (P5).** A tenant whose engine cannot be opened (a broken workspace, the
  database down) or whose sync or dream fails is logged with its id and counted in
  :attr:`TenantJobs.failures`; the other tenants' jobs go on and the tenant is tried
  again at its next backstop.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime, tzinfo
from pathlib import Path
from typing import Any

from ..clock import local_zone
from ..dreaming.schedule import next_run, validate
from ..errors import DaemonBusy
from ..storage.watch import WorkspaceWatcher
from . import Daemon

log = logging.getLogger("reverie.daemon.tenants")

OpenTenant = Callable[[str], Any]  # a tenant id -> its engine, a Reverie (the job closes it)
RunJob = Callable[[str, frozenset[str]], None]  # (tenant id, reasons): raises on failure
TICK = 1.0  # seconds between two looks at the watcher's events and the clocks


@dataclass(frozen=True, slots=True)
class JobSettings:
    """The server's settings the scheduler itself reads (a job uses its tenant's)."""

    jobs: int = 2  # tenant_jobs: jobs at once (0: none run)
    interval: float = 300.0  # sync_interval: the backstop, seconds after a tenant's last job
    debounce: float = 1.5  # watch_debounce
    cron: str = "0 3 * * *"  # dream_schedule: when every tenant is queued for its dream
    sync_every: float = 60.0  # tenant_sync_every: minutes between a tenant's git syncs (0: never)

    @classmethod
    def of(cls, settings: Any) -> JobSettings:
        return cls(
            jobs=int(settings.tenant_jobs),
            interval=float(settings.sync_interval),
            debounce=float(settings.watch_debounce),
            cron=validate(str(settings.dream_schedule)),
            sync_every=float(settings.tenant_sync_every),
        )


def tenant_job(
    engine: Any, reasons: frozenset[str], *, now: Callable[[], datetime] | None = None
) -> None:
    """One tenant's ``reverie serve --once`` on ``engine``, plus its git sync when
    ``"git"`` is among ``reasons`` and sync is set up there. Raises when a step failed."""
    summary = Daemon(engine, watch=False, now=now).run(once=True)
    failed = []
    if summary.sync_errors:
        failed.append("sync")
    if summary.dream_errors:
        failed.append("dream")
    if "git" in reasons and engine.sync.configured():
        try:
            engine.sync.run()
        except Exception as exc:  # the failure below names it; the rest of the job ran
            failed.append(f"git sync ({type(exc).__name__}: {exc})")
    if failed:
        raise RuntimeError(" and ".join(failed) + " failed (see the log above)")


class TenantJobs:
    """Queues and runs every tenant's jobs (see the module docstring)."""

    def __init__(
        self,
        folders: dict[str, tuple[Path, Path]],
        open_tenant: OpenTenant,
        settings: JobSettings,
        *,
        run_job: RunJob | None = None,
        watch: bool = True,
        zone: tzinfo | None = None,
        clock: Callable[[], float] = time.monotonic,
        now: Callable[[], datetime] | None = None,
    ) -> None:
        self.workspaces = {t: ws for t, (ws, _) in folders.items()}
        self.state_dirs = {t: state for t, (_, state) in folders.items()}
        self.settings = settings
        self._open_tenant = open_tenant
        self._run_job = run_job or self._default_job
        self._watch = watch
        self._zone = zone or local_zone()
        self._clock = clock
        self._now = now or (lambda: datetime.now(self._zone))
        self._cond = threading.Condition()
        self._pending: dict[str, set[str]] = {}  # insertion order: first queued, first run
        self._running: set[str] = set()
        self._events: dict[str, tuple[float, float]] = {}  # tenant: (first, last) event
        self._backstop: dict[str, float] = {}
        self._git_at: dict[str, float] = {t: 0.0 for t in self.workspaces}
        self._watched: set[str] = set()
        self._next_dream: datetime | None = None
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._observer: Any = None
        self.runs: dict[str, int] = {t: 0 for t in self.workspaces}
        self.failures: dict[str, int] = {t: 0 for t in self.workspaces}
        self.last_error: dict[str, str] = {}

    # -- queueing --------------------------------------------------------------------------
    def request(self, tenants: Iterable[str], reason: str) -> None:
        """Queue a job for each of ``tenants`` (once each, the reasons merged)."""
        with self._cond:
            for tenant_id in tenants:
                self._pending.setdefault(tenant_id, set()).add(reason)
            self._cond.notify_all()

    def notice(self, tenant_id: str) -> None:
        """A relevant file of ``tenant_id``'s workspace changed (the watcher's thread)."""
        mono = self._clock()
        with self._cond:
            first, _ = self._events.get(tenant_id, (mono, mono))
            self._events[tenant_id] = (first, mono)

    def tick(self) -> None:
        """Queue what is due: debounced file changes, backstops, the dream slot."""
        mono, now = self._clock(), self._now()
        debounce = self.settings.debounce
        max_delay = max(10 * debounce, 5.0)  # a file saved nonstop still syncs
        with self._cond:
            changed = [
                t
                for t, (first, last) in self._events.items()
                if mono - last >= debounce or mono - first >= max_delay
            ]
            for t in changed:
                del self._events[t]
            idle = [t for t, at in self._backstop.items() if mono >= at]
            for t in idle:
                del self._backstop[t]  # set again when its job ends
        self.request(changed, "watch")
        self.request(idle, "backstop")
        if self._next_dream is None:
            self._next_dream = next_run(self.settings.cron, now, self._zone)
        elif now >= self._next_dream:
            self._next_dream = next_run(self.settings.cron, now, self._zone)
            log.info("dream slot: queueing %d tenants", len(self.workspaces))
            self.request(self.workspaces, "dream")

    def _take(self) -> tuple[str, frozenset[str]] | None:
        """The first queued tenant without a running job (waits; None once stopped)."""
        with self._cond:
            while not self._stop.is_set():
                for tenant_id in self._pending:
                    if tenant_id not in self._running:
                        reasons = self._pending.pop(tenant_id)
                        self._running.add(tenant_id)
                        return tenant_id, frozenset(reasons)
                self._cond.wait()
            return None

    # -- running ---------------------------------------------------------------------------
    def run_one(self, tenant_id: str, reasons: frozenset[str]) -> bool:
        """Run one job of ``tenant_id`` (never raises); False when it failed."""
        mono = self._clock()
        every = self.settings.sync_every * 60.0
        if every > 0 and mono >= self._git_at.get(tenant_id, 0.0):
            reasons = reasons | {"git"}
            self._git_at[tenant_id] = mono + every
        ok = True
        try:
            if not self.state_dirs[tenant_id].is_dir():  # never opened: nothing to keep
                log.debug("tenant %r: skipped, never opened", tenant_id)
            else:
                self._run_job(tenant_id, reasons)
        except DaemonBusy as exc:
            log.info("tenant %r: skipped, %s", tenant_id, exc)
        except Exception as exc:  # P5: logged and counted; the other tenants go on
            ok = False
            self.failures[tenant_id] = self.failures.get(tenant_id, 0) + 1
            self.last_error[tenant_id] = f"{type(exc).__name__}: {exc}"
            log.error(
                "tenant %r: job (%s) failed: %s",
                tenant_id,
                ", ".join(sorted(reasons)),
                self.last_error[tenant_id],
            )
        finally:
            self.runs[tenant_id] = self.runs.get(tenant_id, 0) + 1
            with self._cond:
                self._running.discard(tenant_id)
                self._backstop[tenant_id] = self._clock() + self.settings.interval
                self._cond.notify_all()
        self._watch_tenant(tenant_id)  # its workspace may exist only now
        return ok

    def _default_job(self, tenant_id: str, reasons: frozenset[str]) -> None:
        engine = self._open_tenant(tenant_id)
        try:
            tenant_job(engine, reasons)
        finally:
            engine.close()

    def _worker(self) -> None:
        while (job := self._take()) is not None:
            self.run_one(*job)

    def _loop(self) -> None:
        while not self._stop.wait(TICK):
            try:
                self.tick()
            except Exception as exc:  # P5: the scheduler itself never dies of one tick
                log.error("tenant jobs: tick failed: %s: %s", type(exc).__name__, exc)

    def drain(self) -> None:
        """Run every queued job on this thread, one at a time (tests, ``--once``)."""
        while True:
            with self._cond:
                if not self._pending:
                    return
                tenant_id = next(iter(self._pending))
                reasons = frozenset(self._pending.pop(tenant_id))
                self._running.add(tenant_id)
            self.run_one(tenant_id, reasons)

    # -- lifecycle -------------------------------------------------------------------------
    def start(self) -> None:
        """Queue every tenant and start the watcher, the clock and the workers."""
        if self.settings.jobs <= 0:
            log.info("tenant jobs are off (tenant_jobs = 0)")
            return
        self.request(self.workspaces, "start")
        if self._watch:
            self._start_watcher()
        names = [("clock", self._loop)] + [
            (f"worker-{i}", self._worker) for i in range(self.settings.jobs)
        ]
        for name, target in names:
            thread = threading.Thread(target=target, name=f"reverie-tenants-{name}", daemon=True)
            thread.start()
            self._threads.append(thread)
        log.info("tenant jobs: %d tenants, %d at once", len(self.workspaces), self.settings.jobs)

    def stop(self, timeout: float = 30.0) -> None:
        """Stop queueing; wait for the running jobs (a dream finishes, its write is atomic)."""
        self._stop.set()
        with self._cond:
            self._cond.notify_all()
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(timeout=5)
        for thread in self._threads:
            thread.join(timeout=timeout)
        self._threads.clear()

    def _start_watcher(self) -> None:
        from watchdog.observers import Observer

        try:
            observer = Observer()
            observer.daemon = True
            observer.start()
        except Exception as exc:  # P5: the backstop still runs
            log.error("file watcher unavailable (%s); relying on the periodic sync", exc)
            return
        self._observer = observer
        for tenant_id in self.workspaces:
            self._watch_tenant(tenant_id)

    def _watch_tenant(self, tenant_id: str) -> None:
        root = self.workspaces[tenant_id]
        if self._observer is None or tenant_id in self._watched or not root.is_dir():
            return
        try:
            handler = WorkspaceWatcher(root, lambda: self.notice(tenant_id))
            self._observer.schedule(handler, str(root), recursive=True)
        except Exception as exc:  # e.g. the inotify watch limit: its backstop still runs
            log.warning("tenant %r: no file watcher (%s); its backstop sync runs", tenant_id, exc)
        self._watched.add(tenant_id)


__all__ = ["JobSettings", "OpenTenant", "RunJob", "TenantJobs", "tenant_job"]
