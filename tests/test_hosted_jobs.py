"""The hosted server's per-tenant daemon jobs (issue 23, :mod:`reverie.daemon.tenants`):
tenant A's nightly dream, run by the scheduler, promotes into A's MEMORY.md only and
never changes or counts B's files or rows though both hold the same text; a broken
tenant or a failing dream is logged and never stops another tenant's dream; never more
than ``tenant_jobs`` jobs run at once; what queues a job (a file change once quiet, the
dream slot, the backstop)."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from conftest import FIXED_NOW, STAGING_QUERIES, base_env, plant
from reverie import Reverie
from reverie.clock import Clock
from reverie.daemon.tenants import JobSettings, TenantJobs
from reverie.dreaming.schedule import DaemonState
from reverie.provenance.origin import Origin, SessionKind

NOW = datetime.fromisoformat(FIXED_NOW)
FACT = "The staging database lives on host orca-db-2 in the Frankfurt region."
FILLER = "Lunch was a sandwich again, nothing worth keeping."


def _opener(root: Path, env: dict[str, str]) -> Callable[..., Reverie]:
    def open_at(tenant: str, days: float = 0) -> Reverie:
        return Reverie.open(
            root / tenant / "ws",
            root / tenant / "state",
            environ={**env, "REVERIE_INDEX_TENANT": tenant},
            clock=Clock(NOW + timedelta(days=days)),
            embedder="fake",
        )

    return open_at


def _seed(open_at: Callable[..., Reverie], tenant: str, *, recalled: bool) -> None:
    """The fact journaled four days ago; searched on each of the three days since (every
    promotion gate passed) when ``recalled``; the tenant's dream slot of today due."""
    with open_at(tenant, -4) as e:
        e.init()
        plant(e, FILLER, origin=Origin.OWNER, session=SessionKind.INTERACTIVE)
        plant(e, FACT, origin=Origin.OWNER, session=SessionKind.INTERACTIVE)
        e.index()
        DaemonState(last_slot=(NOW - timedelta(days=1)).isoformat()).save(e.workspace.daemon_state)
    for day in (-3, -2, -1) if recalled else ():
        with open_at(tenant, day) as e:
            for q in STAGING_QUERIES:
                assert e.search(q).hits, q


def _jobs(root: Path, open_at: Callable[..., Reverie], ids: list[str], **kw: object) -> TenantJobs:
    folders = {t: (root / t / "ws", root / t / "state") for t in ids}
    return TenantJobs(folders, open_at, JobSettings(**kw), watch=False)  # type: ignore[arg-type]


def _files(*roots: Path) -> dict[str, str]:
    return {
        str(p): hashlib.sha256(p.read_bytes()).hexdigest()
        for root in roots
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.name.endswith(("-wal", "-shm", ".lock"))
    }


def _pg_rows(dsn: str, tenant: str) -> tuple[object, ...]:
    """The tenant's index rows and recall log rows (both in the database), digested."""
    import psycopg

    with psycopg.connect(dsn) as conn:
        chunks = conn.execute(
            "SELECT count(*), md5(string_agg(path || ':' || start_line || text, '|' "
            "ORDER BY path, start_line, part)) FROM chunks WHERE tenant_id = %s",
            (tenant,),
        ).fetchone()
        recalls = conn.execute(
            "SELECT count(*), md5(string_agg(key || ':' || recall_count || last_recalled, '|' "
            "ORDER BY key)) FROM recall_store WHERE tenant_id = %s",
            (tenant,),
        ).fetchone()
    return (*(chunks or ()), *(recalls or ()))


def test_a_tenants_dream_promotes_into_its_own_memory_only_and_never_counts_the_other(
    tmp_path: Path, pg_dsn: str
) -> None:
    env = {**base_env(tmp_path), "REVERIE_INDEX_BACKEND": "postgres", "REVERIE_INDEX_DSN": pg_dsn}
    open_at = _opener(tmp_path, env)
    _seed(open_at, "a", recalled=False)
    _seed(open_at, "b", recalled=True)  # the same text, recalled enough to be promoted
    jobs = _jobs(tmp_path, open_at, ["a", "b"])
    b_files, b_rows = _files(tmp_path / "b"), _pg_rows(pg_dsn, "b")

    jobs.request(["a"], "dream")
    jobs.drain()  # A's evidence is none: B's recalls of the same text are not A's
    memory_a = (tmp_path / "a" / "ws" / "MEMORY.md").read_text(encoding="utf-8")
    assert "orca-db-2" not in memory_a
    with open_at("a") as a:
        assert DaemonState.load(a.workspace.daemon_state).last_dream["outcome"] == "ok"

    _seed(open_at, "a", recalled=True)
    jobs.request(["a"], "dream")
    jobs.drain()
    assert "orca-db-2" in (tmp_path / "a" / "ws" / "MEMORY.md").read_text(encoding="utf-8")
    assert jobs.runs == {"a": 2, "b": 0} and jobs.failures == {"a": 0, "b": 0}
    assert _files(tmp_path / "b") == b_files  # B's workspace and state untouched
    assert _pg_rows(pg_dsn, "b") == b_rows and b_rows[2]  # B's index and recall log too
    assert "orca-db-2" not in (tmp_path / "b" / "ws" / "MEMORY.md").read_text(encoding="utf-8")
    with open_at("a") as a:  # A's promoted entry is in A's index, and not B's
        assert any(h.path == "MEMORY.md" for h in a.search("staging database host").hits)
    with open_at("b") as b:
        assert not any(h.path == "MEMORY.md" for h in b.search("staging database host").hits)


def test_a_broken_tenant_and_a_failing_dream_never_stop_another_tenants_dream(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    open_at = _opener(tmp_path, base_env(tmp_path))
    (tmp_path / "broken" / "state").mkdir(parents=True)
    (tmp_path / "broken" / "ws").write_text("a file where the workspace should be")
    _seed(open_at, "baddream", recalled=True)
    memory = tmp_path / "baddream" / "ws" / "MEMORY.md"
    memory.unlink()
    memory.mkdir()  # the dream cannot read or write MEMORY.md
    _seed(open_at, "a", recalled=True)
    jobs = _jobs(tmp_path, open_at, ["broken", "baddream", "a"])

    jobs.request(["broken", "baddream", "a"], "dream")
    jobs.drain()
    assert "orca-db-2" in (tmp_path / "a" / "ws" / "MEMORY.md").read_text(encoding="utf-8")
    assert jobs.failures == {"broken": 1, "baddream": 1, "a": 0}
    logged = [r.getMessage() for r in caplog.records if r.name == "reverie.daemon.tenants"]
    assert any("tenant 'broken'" in m and "failed" in m for m in logged)
    assert any("tenant 'baddream'" in m and "dream failed" in m for m in logged)


def test_never_more_than_tenant_jobs_run_at_once_and_every_tenant_runs(tmp_path: Path) -> None:
    ids = [f"t{i}" for i in range(7)]
    for t in ids:
        (tmp_path / t / "state").mkdir(parents=True)
    lock, active, peak, started, ran = threading.Lock(), [0], [0], [0], []
    both = threading.Barrier(2, timeout=20)  # the bound is reached, or this breaks
    done = threading.Event()

    def job(tenant: str, reasons: frozenset[str]) -> None:
        with lock:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
            started[0] += 1
            pair = started[0] <= 6  # the first six are held two by two; the last runs alone
        if pair:
            both.wait()
        with lock:
            active[0] -= 1
            ran.append(tenant)
            if len(ran) == len(ids):
                done.set()

    folders = {t: (tmp_path / t / "ws", tmp_path / t / "state") for t in ids}
    jobs = TenantJobs(folders, Reverie.open, JobSettings(jobs=2), run_job=job, watch=False)
    jobs.start()  # every tenant is queued at start
    try:
        assert done.wait(timeout=60)
    finally:
        jobs.stop()
    assert peak[0] == 2 and sorted(ran) == ids and jobs.failures == dict.fromkeys(ids, 0)


def test_a_file_change_once_quiet_and_the_dream_slot_queue_jobs(tmp_path: Path) -> None:
    for t in ("a", "b"):
        (tmp_path / t / "state").mkdir(parents=True)
    mono, now = [100.0], [datetime(2026, 5, 1, 2, 0, tzinfo=NOW.tzinfo)]
    ran: list[tuple[str, frozenset[str]]] = []
    jobs = TenantJobs(
        {t: (tmp_path / t / "ws", tmp_path / t / "state") for t in ("a", "b")},
        Reverie.open,
        JobSettings(debounce=1.5, interval=300.0, sync_every=0),
        run_job=lambda t, r: ran.append((t, r)),
        watch=False,
        zone=NOW.tzinfo,
        clock=lambda: mono[0],
        now=lambda: now[0],
    )
    jobs.tick()  # nothing due yet
    jobs.notice("a")
    mono[0] += 1.0
    jobs.tick()
    jobs.drain()
    assert ran == []  # still within the debounce
    mono[0] += 1.0
    jobs.tick()
    jobs.drain()
    assert ran == [("a", frozenset({"watch"}))]
    now[0] += timedelta(hours=1, minutes=1)  # 03:01: the dream slot passed
    jobs.tick()
    jobs.drain()
    assert ran[1:] == [("a", frozenset({"dream"})), ("b", frozenset({"dream"}))]
    mono[0] += 301.0  # both idle since their last job: the backstop
    jobs.tick()
    jobs.drain()
    assert sorted(t for t, r in ran[3:] if r == {"backstop"}) == ["a", "b"]


def test_a_tenants_job_git_syncs_where_sync_is_set_up_and_nowhere_else(tmp_path: Path) -> None:
    import subprocess

    from sync_helpers import make_remote, open_device

    env = base_env(tmp_path)
    remote = make_remote(tmp_path)
    synced = open_device(tmp_path, "s", env, remote)
    synced.sync()
    synced.write("The lighthouse key hangs by the door.")
    synced.engine.close()
    plain = open_device(tmp_path, "plain", env, remote)
    plain.write("The plain tenant's own line.")
    plain.engine.close()

    def pushed() -> str:
        git = ["git", "--git-dir", remote, "log", "-p", "main"]
        return subprocess.run(git, capture_output=True, text=True, check=True).stdout

    assert "lighthouse" not in pushed()
    jobs = _jobs(tmp_path, _opener(tmp_path, env), ["plain", "s"])
    jobs.request(["plain", "s"], "start")
    jobs.drain()
    assert jobs.failures == {"plain": 0, "s": 0}
    log = pushed()
    assert "lighthouse" in log and "plain tenant" not in log  # s pushed; plain has no sync
    with Reverie.open(tmp_path / "plain" / "ws", tmp_path / "plain" / "state", environ=env) as e:
        assert not e.sync.configured()


def test_the_hosted_server_starts_the_jobs_with_its_lifespan_and_stops_them_first(
    tmp_path: Path,
) -> None:
    import anyio

    from reverie.mcp_server.hosted import HostedApp
    from reverie.mcp_server.tenants import load_tenants, token_digest

    (tmp_path / "tenants.toml").write_text(
        f'[a]\ntoken_sha256 = "{token_digest("t")}"\nworkspace = "a/ws"\nstate_dir = "a/state"\n'
    )
    seen: list[str] = []

    class Jobs:
        def start(self) -> None:
            seen.append("start")

        def stop(self) -> None:
            seen.append("stop")

    def open_engine(tenant: object) -> Reverie:
        raise AssertionError("no request, no tenant opened")

    app = HostedApp(
        load_tenants(tmp_path / "tenants.toml"),
        open_engine,
        host="127.0.0.1",
        path="/mcp",
        max_open=1,
        background=Jobs(),
    )
    messages = iter([{"type": "lifespan.startup"}, {"type": "lifespan.shutdown"}])
    sent: list[str] = []

    async def receive() -> dict[str, str]:
        return next(messages)

    async def send(message: dict[str, str]) -> None:
        sent.append(f"{message['type']} after {seen}")

    anyio.run(app, {"type": "lifespan"}, receive, send)
    assert sent == [
        "lifespan.startup.complete after ['start']",
        "lifespan.shutdown.complete after ['start', 'stop']",
    ]


def test_a_tenant_never_opened_gets_no_job_and_nothing_created(tmp_path: Path) -> None:
    (tmp_path / "used" / "state").mkdir(parents=True)
    (tmp_path / "fresh" / "ws").mkdir(parents=True)  # its folder exists, nobody opened it
    ran: list[str] = []
    jobs = TenantJobs(
        {t: (tmp_path / t / "ws", tmp_path / t / "state") for t in ("fresh", "used")},
        Reverie.open,
        JobSettings(),
        run_job=lambda t, r: ran.append(t),
        watch=False,
    )
    jobs.request(["fresh", "used"], "start")
    jobs.drain()
    assert ran == ["used"] and jobs.failures == {"fresh": 0, "used": 0}
    assert not (tmp_path / "fresh" / "state").exists()
    assert list((tmp_path / "fresh" / "ws").iterdir()) == []
