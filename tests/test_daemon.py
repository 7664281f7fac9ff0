"""`reverie serve`: the schedule, the advancing clock, and the daemon a user runs.

Pure schedule rules first (daylight saving included), then the daemon in-process with
an injected clock (sleep/wake, first start, failures), then the real daemon in a
subprocess: the 03:00 dream, an edit becoming searchable, SIGTERM mid-sync, one daemon
per state dir and a lock that a SIGKILL does not leave stuck.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from itertools import pairwise
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
import sqlean as sqlite3
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import Paths, cli_command, merged_env
from reverie.clock import Clock, local_zone
from reverie.daemon import Daemon, DaemonBusy, DaemonState
from reverie.dreaming.schedule import due_run, latest_slot, next_run, validate
from reverie.engine import Reverie
from reverie.errors import ConfigError
from reverie.storage.watch import WorkspaceWatcher as _Watcher

BERLIN = ZoneInfo("Europe/Berlin")
NEW_YORK = ZoneInfo("America/New_York")
NIGHTLY = "0 3 * * *"


def at(zone: ZoneInfo, *args: int, fold: int = 0) -> datetime:
    return datetime(*args, tzinfo=zone, fold=fold)  # type: ignore[misc]


def simulate(expr: str, start: datetime, end: datetime, step: timedelta, zone: Any) -> list:
    """A daemon ticking every ``step`` from ``start`` (its first start) to ``end``."""
    last: datetime | None = start  # the baseline recorded at first start
    runs = []
    now = start
    while now <= end:
        slot = due_run(expr, now=now, last_run=last, tz=zone)
        if slot is not None:
            runs.append(slot)
            last = slot
        now += step
    return runs


# -- schedule (pure) --------------------------------------------------------------------
def test_the_slot_is_due_at_three_and_not_before() -> None:
    day = at(BERLIN, 2026, 5, 1, 2, 59, 59)
    assert due_run(NIGHTLY, now=day, last_run=day - timedelta(minutes=5), tz=BERLIN) is None
    slot = due_run(NIGHTLY, now=at(BERLIN, 2026, 5, 1, 3), last_run=day, tz=BERLIN)
    assert slot == at(BERLIN, 2026, 5, 1, 3)


def test_no_history_means_nothing_missed() -> None:
    """A first start at 10:00 does not replay the 03:00 slot it never saw."""
    assert due_run(NIGHTLY, now=at(BERLIN, 2026, 5, 1, 10), last_run=None, tz=BERLIN) is None


def test_a_machine_that_slept_two_nights_dreams_once_on_wake() -> None:
    last = at(BERLIN, 2026, 5, 1, 3)
    wake = at(BERLIN, 2026, 5, 3, 10)
    slot = due_run(NIGHTLY, now=wake, last_run=last, tz=BERLIN)
    assert slot == at(BERLIN, 2026, 5, 3, 3)  # the latest slot only, once
    for later in (wake + timedelta(seconds=1), at(BERLIN, 2026, 5, 4, 2, 59, 59)):
        assert due_run(NIGHTLY, now=later, last_run=slot, tz=BERLIN) is None
    assert due_run(NIGHTLY, now=at(BERLIN, 2026, 5, 4, 3), last_run=slot, tz=BERLIN)


def test_a_clock_set_back_runs_nothing_until_a_new_slot() -> None:
    last = at(BERLIN, 2026, 5, 3, 3)
    assert due_run(NIGHTLY, now=at(BERLIN, 2026, 5, 2, 12), last_run=last, tz=BERLIN) is None


@pytest.mark.parametrize("zone", [BERLIN, NEW_YORK], ids=["Berlin", "New_York"])
def test_nightly_dream_stays_at_three_local_across_spring_forward(zone: ZoneInfo) -> None:
    day = (2026, 3, 29) if zone is BERLIN else (2026, 3, 8)
    start = at(zone, *day, 0) - timedelta(days=1)
    runs = simulate(NIGHTLY, start, start + timedelta(days=3), timedelta(minutes=10), zone)
    assert [r.astimezone(zone).hour for r in runs] == [3, 3, 3]
    assert runs[1].astimezone(zone).date().day == day[2]
    # the night of the change is an hour shorter in real time
    real = [r.astimezone(UTC) for r in runs]
    assert [r2 - r1 for r1, r2 in pairwise(real)] == [
        timedelta(hours=23),
        timedelta(hours=24),
    ]


def test_slot_in_the_skipped_hour_runs_once_after_the_jump() -> None:
    start = at(BERLIN, 2026, 3, 28, 12)
    runs = simulate("30 2 * * *", start, start + timedelta(days=1), timedelta(minutes=5), BERLIN)
    assert len(runs) == 1
    assert runs[0].astimezone(UTC) == datetime(2026, 3, 29, 1, 30, tzinfo=UTC)  # 03:30 CEST


@pytest.mark.parametrize(
    ("zone", "day"), [(BERLIN, (2026, 10, 25)), (NEW_YORK, (2026, 11, 1))], ids=["Berlin", "NY"]
)
def test_slot_in_the_repeated_hour_runs_once_at_its_first_occurrence(zone, day) -> None:
    expr = "30 2 * * *" if zone is BERLIN else "30 1 * * *"
    start = at(zone, *day, 0)
    runs = simulate(expr, start, start + timedelta(hours=6), timedelta(minutes=5), zone)
    assert len(runs) == 1
    assert runs[0].fold == 0 and runs[0].utcoffset() == (
        timedelta(hours=2) if zone is BERLIN else timedelta(hours=-4)
    )


def test_next_run_across_daylight_saving() -> None:
    assert next_run(NIGHTLY, at(BERLIN, 2026, 3, 28, 4), BERLIN) == at(BERLIN, 2026, 3, 29, 3)
    # during the repeated hour, 02:30 already happened: next is tomorrow
    second = at(BERLIN, 2026, 10, 25, 2, 10, fold=1)
    assert next_run("30 2 * * *", second, BERLIN) == at(BERLIN, 2026, 10, 26, 2, 30)
    assert latest_slot("30 2 * * *", second, BERLIN).astimezone(UTC) == datetime(
        2026, 10, 25, 0, 30, tzinfo=UTC
    )


def test_bad_cron_expression_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="not a cron expression"):
        validate("every night")
    assert validate(" 0 3 * * * ") == NIGHTLY


instants = st.datetimes(
    min_value=datetime(2025, 1, 1), max_value=datetime(2028, 12, 31), timezones=st.just(UTC)
)
crons = st.sampled_from([NIGHTLY, "30 2 * * *", "0 */6 * * *", "15 1 * * 1-5", "0 0 1 * *"])


@settings(max_examples=150, deadline=None)
@given(
    expr=crons,
    last=instants,
    gap=st.timedeltas(min_value=timedelta(0), max_value=timedelta(days=40)),
    zone=st.sampled_from([BERLIN, NEW_YORK, UTC]),
)
def test_due_run_is_the_one_latest_missed_slot(expr, last, gap, zone) -> None:
    now = last + gap
    slot = due_run(expr, now=now, last_run=last, tz=zone)
    if slot is None:
        assert next_run(expr, last, zone) > now  # nothing fell in (last, now]
    else:
        assert last < slot <= now
        assert next_run(expr, slot, zone) > now  # it is the latest
        assert due_run(expr, now=now, last_run=slot, tz=zone) is None  # never twice


@settings(max_examples=60, deadline=None)
@given(
    start=instants,
    steps=st.lists(st.integers(1, 36 * 3600), min_size=1, max_size=30),
    zone=st.sampled_from([BERLIN, NEW_YORK]),
)
def test_ticks_run_each_slot_at_most_once_and_never_skip_the_last(start, steps, zone) -> None:
    last, now, runs = start, start, []
    for seconds in steps:
        now += timedelta(seconds=seconds)
        slot = due_run(NIGHTLY, now=now, last_run=last, tz=zone)
        if slot is not None:
            runs.append(slot)
            last = slot
    assert runs == sorted(set(runs))
    if next_run(NIGHTLY, start, zone) <= now:
        assert runs and runs[-1] == latest_slot(NIGHTLY, now, zone)


# -- clock --------------------------------------------------------------------------------
def test_advancing_clock_starts_at_reverie_now_and_moves_on() -> None:
    clock = Clock.from_env({"REVERIE_NOW": "2026-05-01T02:59:58+00:00", "REVERIE_CLOCK": "advance"})
    first = clock.now()
    assert first >= datetime(2026, 5, 1, 2, 59, 58, tzinfo=UTC)
    assert first < datetime(2026, 5, 1, 3, 0, 0, tzinfo=UTC)
    later = clock.now()
    assert later >= first


def test_fixed_clock_is_unchanged_without_the_new_variable() -> None:
    clock = Clock.from_env({"REVERIE_NOW": "2026-05-01T09:00:00+00:00"})
    assert clock.now() == clock.now() == datetime(2026, 5, 1, 9, tzinfo=UTC)
    assert Clock(datetime(2026, 5, 1, 9, tzinfo=UTC)) == clock
    with pytest.raises(ConfigError, match="REVERIE_CLOCK"):
        Clock.from_env({"REVERIE_NOW": "2026-05-01T09:00:00", "REVERIE_CLOCK": "warp"})


def test_local_zone_follows_tz() -> None:
    assert local_zone({"TZ": "Europe/Berlin"}) == BERLIN
    assert local_zone({"TZ": ":America/New_York"}) == NEW_YORK
    assert local_zone({"TZ": "Not/AZone"}).utcoffset(datetime.now()) is not None


# -- the daemon in-process, with an injected clock ------------------------------------------
@pytest.fixture
def engine(engine_factory: Callable[..., Reverie]) -> Reverie:
    e = engine_factory(embedder="fake")
    e.init()
    return e


def daemon_at(engine: Reverie, moment: datetime, **kwargs: Any) -> Daemon:
    return Daemon(engine, watch=False, now=lambda: moment, zone=UTC, **kwargs)


def test_first_start_records_a_baseline_and_does_not_dream(engine: Reverie) -> None:
    summary = daemon_at(engine, datetime(2026, 5, 1, 10, tzinfo=UTC)).run(once=True)
    assert summary.syncs == 1 and summary.dreams == 0
    state = DaemonState.load(engine.workspace.daemon_state)
    assert state.last_slot_time() == datetime(2026, 5, 1, 10, tzinfo=UTC)
    assert state.stopped is not None
    # the next night's slot is caught
    summary = daemon_at(engine, datetime(2026, 5, 2, 3, 0, 5, tzinfo=UTC)).run(once=True)
    assert summary.dreams == 1


def test_sleep_through_two_nights_dreams_once_then_not_again(engine: Reverie) -> None:
    DaemonState(last_slot="2026-05-01T03:00:00+00:00").save(engine.workspace.daemon_state)
    wake = datetime(2026, 5, 3, 10, tzinfo=UTC)
    daemon = daemon_at(engine, wake)
    record = daemon.dream_if_due(wake)
    assert record is not None and record["outcome"] == "ok"
    assert record["slot"] == "2026-05-03T03:00:00+00:00"
    for later in (wake + timedelta(seconds=1), wake + timedelta(hours=16, minutes=59)):
        assert daemon.dream_if_due(later) is None
    # a restarted daemon reads the slot back from disk: still nothing until tomorrow 03:00
    restarted = daemon_at(engine, wake + timedelta(hours=1))
    assert restarted.run(once=True).dreams == 0
    assert DaemonState.load(engine.workspace.daemon_state).dream_runs == 1
    assert restarted.dream_if_due(datetime(2026, 5, 4, 3, tzinfo=UTC)) is not None


def test_a_failing_dream_is_logged_and_the_slot_not_retried_every_tick(
    engine: Reverie, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(**_: Any) -> Any:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(engine, "dream", broken)
    DaemonState(last_slot="2026-05-01T03:00:00+00:00").save(engine.workspace.daemon_state)
    now = datetime(2026, 5, 2, 3, 1, tzinfo=UTC)
    daemon = daemon_at(engine, now)
    summary = daemon.run(once=True)
    assert summary.dream_errors == 1 and summary.failed
    assert "disk on fire" in caplog.text
    assert daemon.dream_if_due(now + timedelta(minutes=1)) is None


def test_dreaming_off_skips_the_slot_without_dreaming(
    engine: Reverie, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine.set_dreaming(False)
    monkeypatch.setattr(engine, "dream", lambda **_: pytest.fail("dreamed while off"))
    DaemonState(last_slot="2026-05-01T03:00:00+00:00").save(engine.workspace.daemon_state)
    summary = daemon_at(engine, datetime(2026, 5, 2, 4, tzinfo=UTC)).run(once=True)
    assert summary.dreams_skipped == 1 and summary.dreams == 0


def test_a_failing_sync_does_not_raise(engine: Reverie, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(**_: Any) -> Any:
        raise OSError("index unreadable")

    monkeypatch.setattr(engine, "index", broken)
    summary = daemon_at(engine, datetime(2026, 5, 1, 10, tzinfo=UTC)).run(once=True)
    assert summary.sync_errors == 1 and summary.syncs == 0


def test_second_daemon_in_the_same_process_is_refused(
    engine: Reverie, engine_factory: Callable[..., Reverie]
) -> None:
    first = daemon_at(engine, datetime(2026, 5, 1, 10, tzinfo=UTC))
    first.acquire()
    try:
        with pytest.raises(DaemonBusy, match="another daemon is running"):
            daemon_at(
                engine_factory(embedder="fake"), datetime(2026, 5, 1, 10, tzinfo=UTC)
            ).acquire()
    finally:
        first.release()


def test_watcher_reacts_only_to_what_the_index_reads(tmp_path: Path) -> None:
    w = _Watcher(tmp_path, lambda: None)
    assert w.relevant(str(tmp_path / "memory/2026-05-01.md"), False)
    assert w.relevant(str(tmp_path / "MEMORY.md"), False)
    assert w.relevant(str(tmp_path / "notes"), True)  # a folder deleted or moved
    assert not w.relevant(str(tmp_path / "memory/.MEMORY.md.x1.tmp"), False)  # atomic temp
    assert not w.relevant(str(tmp_path / "notes/todo.txt"), False)
    assert not w.relevant(str(tmp_path / ".git/HEAD.md"), False)
    assert not w.relevant(str(tmp_path / "DREAMS.md"), False)  # never indexed
    assert not w.relevant(str(tmp_path.parent / "elsewhere.md"), False)


# -- the real daemon, in a subprocess ----------------------------------------------------------
class Served:
    """A ``reverie serve`` subprocess with its log files and state file."""

    def __init__(self, paths: Paths, env: dict[str, str], *args: str, tag: str = "d") -> None:
        self.paths = paths
        self.out = paths.state.parent / f"{tag}.out"
        self.err = paths.state.parent / f"{tag}.err"
        self.state = paths.state / "main" / "daemon-state.json"
        with self.out.open("w") as out, self.err.open("w") as err:
            self.proc = subprocess.Popen(
                cli_command(paths, "serve", "--json", *args), env=env, stdout=out, stderr=err
            )

    def read_state(self) -> dict[str, Any]:
        try:
            return json.loads(self.state.read_text())
        except (FileNotFoundError, ValueError):
            return {}

    def wait_for(self, cond: Callable[[dict[str, Any]], bool], timeout: float = 20) -> dict:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            state = self.read_state()
            if state.get("pid") == self.proc.pid and cond(state):
                return state
            assert self.proc.poll() is None, f"daemon exited early:\n{self.err.read_text()}"
            time.sleep(0.05)
        raise AssertionError(f"timed out; state {self.read_state()}\n{self.err.read_text()}")

    def ready(self) -> dict[str, Any]:
        return self.wait_for(lambda s: s.get("syncs", 0) >= 1)

    def stop(self, timeout: float = 20) -> dict[str, Any]:
        self.proc.send_signal(signal.SIGTERM)
        assert self.proc.wait(timeout=timeout) == 0, self.err.read_text()
        return json.loads(self.out.read_text().strip().splitlines()[-1])

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)


@pytest.fixture
def serve(paths: Paths, env: dict[str, str]) -> Iterator[Callable[..., Served]]:
    started: list[Served] = []
    base = merged_env(env, {"TZ": "UTC"})

    def start(*args: str, extra_env: dict[str, str] | None = None, tag: str = "d") -> Served:
        served = Served(paths, merged_env(base, extra_env), *args, tag=tag)
        started.append(served)
        return served

    yield start
    for served in started:
        served.kill()


def test_daemon_dreams_exactly_once_at_three(serve, engine: Reverie) -> None:
    daemon = serve(
        "--no-watch",
        extra_env={"REVERIE_NOW": "2026-05-01T02:59:58+00:00", "REVERIE_CLOCK": "advance"},
    )
    state = daemon.wait_for(lambda s: s.get("dream_runs", 0) >= 1)
    assert state["last_dream"]["slot"] == "2026-05-01T03:00:00+00:00"
    assert state["last_dream"]["outcome"] == "ok"
    time.sleep(0.3)  # a few more ticks
    summary = daemon.stop()
    assert summary["dreams"] == 1
    assert summary["next_dream"].startswith("2026-05-02T03:00:00")
    assert daemon.read_state()["dream_runs"] == 1


def test_a_journal_edit_is_searchable_within_three_seconds(
    serve, paths: Paths, engine: Reverie
) -> None:
    journal = paths.write("memory/2026-05-01.md", "- started the day\n")
    daemon = serve()
    daemon.ready()
    reader = engine
    t0 = time.monotonic()
    with journal.open("a", encoding="utf-8") as fh:
        fh.write("- the quokka migration plan is approved\n")
    found = False
    while time.monotonic() - t0 < 6:
        hits = reader.search("quokka", lanes="keyword", record=False).hits
        if any("quokka" in (h.text or h.snippet) for h in hits):
            found = True
            break
        time.sleep(0.05)
    elapsed = time.monotonic() - t0
    assert found and elapsed < 3.0, f"visible after {elapsed:.2f} s"
    assert daemon.stop()["syncs"] >= 2


def _sources(index: Path) -> int:
    try:
        conn = sqlite3.connect(f"file:{index}?mode=ro", uri=True)
        try:
            return int(conn.execute("SELECT count(*) FROM sources").fetchone()[0])
        finally:
            conn.close()
    except sqlite3.Error:
        return 0


def test_sigterm_mid_sync_exits_zero_and_leaves_a_usable_index(
    serve, cli_json, paths: Paths, engine: Reverie
) -> None:
    total = 1500
    for i in range(total):
        paths.write(f"notes/n{i % 40}/f{i}.md", f"# Note {i}\n\nThe note about topic {i}.\n")
    daemon = serve("--no-schedule")
    deadline = time.monotonic() + 20
    while _sources(paths.index) == 0:
        assert time.monotonic() < deadline and daemon.proc.poll() is None
        time.sleep(0.02)
    t0 = time.monotonic()
    summary = daemon.stop(timeout=15)
    assert time.monotonic() - t0 < 15
    n = total + 3  # plus AGENTS.md, MEMORY.md, USER.md
    assert summary["sync_interrupted"] or summary["index"]["files"] == n
    stats = cli_json("index")
    assert stats["files_scanned"] == n
    status = cli_json("status")
    assert status["files"] == n and status["dirty"] is False


def test_a_second_daemon_on_the_same_state_dir_refuses_clearly(
    serve, run_cli, engine: Reverie
) -> None:
    first = serve("--no-schedule")
    first.ready()
    second = run_cli("serve", "--no-schedule", check=False, timeout=30)
    assert second.returncode != 0
    assert f"another daemon is running (pid {first.proc.pid})" in second.stderr
    first.stop()


def test_a_killed_daemon_does_not_leave_the_lock_stuck(serve, run_cli, engine: Reverie) -> None:
    first = serve("--no-schedule")
    first.ready()
    os.kill(first.proc.pid, signal.SIGKILL)
    first.proc.wait(timeout=10)
    again = run_cli("serve", "--once", "--json", timeout=30)
    assert json.loads(again.stdout)["syncs"] == 1


# -- faults: a clock that ran ahead, a state dir deleted under the daemon --------------------
def test_a_slot_recorded_in_the_future_is_clock_skew_and_rebaselined(
    engine: Reverie, caplog: pytest.LogCaptureFixture
) -> None:
    """A clock that once ran ahead recorded a 2031 slot: the daemon warns, starts a new
    baseline, and the next 03:00 dreams again."""
    DaemonState(last_slot="2031-01-01T03:00:00+00:00").save(engine.workspace.daemon_state)
    now = datetime(2026, 5, 1, 10, tzinfo=UTC)
    summary = daemon_at(engine, now).run(once=True)
    assert "clock skew" in caplog.text
    assert summary.next_dream == "2026-05-02T03:00:00+00:00"
    assert DaemonState.load(engine.workspace.daemon_state).last_slot_time() == now
    assert daemon_at(engine, datetime(2026, 5, 2, 3, 0, 5, tzinfo=UTC)).run(once=True).dreams == 1


def test_a_daemon_whose_state_dir_is_deleted_stops_loudly(
    engine: Reverie, caplog: pytest.LogCaptureFixture
) -> None:
    """The state dir is deleted under a running daemon: it notices on its next tick,
    logs an error and stops without re-creating the dir, so a second daemon started on
    that state dir is the only one serving it."""
    import shutil
    import threading

    stop = threading.Event()
    daemon = Daemon(engine, watch=False, schedule=False, tick=0.05)
    runner = threading.Thread(target=daemon.run, args=(stop,), daemon=True)
    runner.start()
    deadline = time.monotonic() + 10
    while daemon.summary.syncs < 1 and time.monotonic() < deadline:
        time.sleep(0.02)
    # the daemon may be renaming a state file into the dir while it goes: remove again
    # until the dir is gone (the daemon must never bring it back, checked below)
    gone_by = time.monotonic() + 10
    while engine.workspace.agent_dir.exists() and time.monotonic() < gone_by:
        shutil.rmtree(engine.workspace.agent_dir, ignore_errors=True)
    runner.join(timeout=5)
    stopped = not runner.is_alive()
    stop.set()
    runner.join(timeout=5)
    assert stopped, "the daemon kept serving a deleted state dir"
    assert daemon.summary.state_dir_lost and daemon.summary.failed
    assert "state dir" in caplog.text
    assert not engine.workspace.agent_dir.exists()  # not re-created behind the next daemon's back
