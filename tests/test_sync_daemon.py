"""``reverie serve --sync-every``: the daemon runs the git sync on a schedule (issue 25),
and a failing sync never stops it."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import RunCli
from reverie.daemon import Daemon
from reverie.daemon.remote import RemoteSync
from sync_helpers import Device, fleet


@pytest.fixture
def two(tmp_path: Path, env: dict[str, str]) -> Iterator[list[Device]]:
    yield from fleet(tmp_path, env, 2)


def _serve(daemon: Daemon, until: threading.Event | None = None, seconds: float = 60) -> None:
    stop = threading.Event()
    runner = threading.Thread(target=daemon.run, args=(stop,), daemon=True)
    runner.start()
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and not (until and until.is_set()):
        time.sleep(0.05)
    stop.set()
    runner.join(timeout=30)
    assert not runner.is_alive()


def test_the_daemon_pushes_a_line_written_here_and_pulls_one_written_there(
    two: list[Device],
) -> None:
    a, b = two
    a.write("zq the daemon carries this line from device a")
    b.write("zq and this one from device b")
    b.sync()  # b's line is on the remote before a's daemon starts
    done = threading.Event()

    def sync() -> object:
        try:
            return a.engine.sync.run(a.remote)
        finally:
            done.set()

    remote = RemoteSync(sync, minutes=60)  # the first sync at start, the next in an hour
    _serve(Daemon(a.engine, watch=False, schedule=False, tick=0.05, remote=remote), done)
    assert remote.runs == 1 and remote.errors == 0
    assert "zq and this one from device b" in a.read()  # pulled
    b.sync()
    assert "zq the daemon carries this line from device a" in b.read()  # pushed
    hits = a.engine.search("this one from device b").hits
    assert any("device b" in h.snippet for h in hits)  # re-indexed after the pull


def test_a_failing_sync_is_retried_at_the_next_slot_and_never_stops_the_daemon(
    two: list[Device], tmp_path: Path
) -> None:
    a, _ = two
    calls: list[float] = []
    twice = threading.Event()

    def sync() -> object:
        calls.append(time.monotonic())
        if len(calls) >= 2:
            twice.set()
        return a.engine.sync.run(str(tmp_path / "no-such-remote.git"))  # unreachable

    remote = RemoteSync(sync, minutes=0.002)  # every 0.12 s
    daemon = Daemon(a.engine, watch=False, schedule=False, tick=0.05, remote=remote)
    _serve(daemon, twice)
    assert len(calls) >= 2 and remote.errors == len(calls) and remote.runs == 0
    assert remote.last_error and "SyncError" in remote.last_error
    assert daemon.summary.git_sync_errors >= 2 and not daemon.summary.state_dir_lost
    assert daemon.summary.syncs >= 1  # the index work went on


def test_a_schedule_of_no_minutes_is_refused(run_cli: RunCli) -> None:
    with pytest.raises(ValueError, match="positive number of minutes"):
        RemoteSync(lambda: None, minutes=0)
    run_cli("init")
    bad = run_cli("serve", "--sync-every", "0", check=False)
    assert bad.returncode == 2 and "--sync-every" in bad.stderr  # a usage error, no traceback
    assert "Traceback" not in bad.stderr
