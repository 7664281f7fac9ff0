"""Sync faults (issue 25): kill -9 at each step leaves both workspaces readable and a
re-run converges; an unreachable remote is a clear error that touches nothing; a
remote rewritten by force-push is refused."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from reverie.errors import SyncError
from sync_helpers import DAY, Device, fleet

KILLER = textwrap.dedent(
    """
    import os, signal, sys
    from reverie import Reverie
    import reverie.wiring.sync_door as door

    ws, state, step, at = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])

    def progress(name, done, total):
        if name == step and done >= at:
            os.kill(os.getpid(), signal.SIGKILL)

    if step == "reindex":  # killed inside the index sync, after its first file
        real = door.syncer
        def syncer(a, progress=None):
            s = real(a, progress)
            def die(*_):
                os.kill(os.getpid(), signal.SIGKILL)
            s.reindex = lambda: a.index(force=True, progress=die)
            return s
        door.syncer = syncer
    engine = Reverie.open(ws, state, embedder="none")
    engine.sync.run(progress=progress)
    print("finished without being killed")
    """
)


@pytest.fixture
def two(tmp_path: Path, env: dict[str, str]) -> Iterator[list[Device]]:
    yield from fleet(tmp_path, env, 2)


def _lines(d: Device) -> list[str]:
    return [ln for ln in d.read().splitlines() if ln.startswith("- ")]


def _readable(d: Device) -> None:
    for path in d.root.rglob("*.md"):
        text = path.read_text(encoding="utf-8")
        assert "<<<<<<<" not in text and ">>>>>>>" not in text, path
    d.engine.search("zq")  # the index opens and answers
    assert d.engine.bootstrap().text


@pytest.mark.parametrize(
    ("step", "at"),
    [
        ("merge", 2),  # after the local commit, before the merge
        ("write", 1),  # during the merge: one merged file written, the rest not
        ("push", 3),  # the merge committed, before the push
        ("reindex", 0),  # during the re-index
    ],
)
def test_kill_9_at_each_step_leaves_both_readable_and_a_rerun_converges(
    two: list[Device], env: dict[str, str], step: str, at: int
) -> None:
    a, b = two
    for i in range(3):
        a.write(f"zq from a {i}")
        b.write(f"zq from b {i}")
    (a.root / "MEMORY.md").write_text("# Long-term memory\n\n- zq a's entry\n")
    (b.root / "USER.md").write_text("# User\n\n- zq b's entry\n")
    b.sync()
    proc = subprocess.run(
        [sys.executable, "-c", KILLER, str(a.root), str(a.engine.workspace.state_dir), step, str(at)],
        env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == -9, proc.stdout + proc.stderr  # it was killed mid-sync
    _readable(a)
    _readable(b)
    for d in (a, b, a, b):
        d.sync()
    assert a.read() == b.read()
    counts = Counter(ln.split("-->")[-1].strip() for ln in _lines(a))
    want = {f"09:00 zq from {s} {i}" for s in "ab" for i in range(3)}
    assert set(counts) == want and set(counts.values()) == {1}  # 0 lost, 0 duplicated
    assert a.read("MEMORY.md") == b.read("MEMORY.md") and "a's entry" in b.read("MEMORY.md")
    assert "b's entry" in a.read("USER.md")


def test_an_unreachable_remote_is_a_clear_error_and_touches_nothing(two: list[Device]) -> None:
    a, _ = two
    a.write("zq written while offline")
    before = {p: p.read_bytes() for p in a.root.rglob("*") if p.is_file()}
    with pytest.raises(SyncError, match=r"unreachable.*untouched"):
        a.engine.sync.run("/nonexistent/remote.git")
    assert {p: p.read_bytes() for p in a.root.rglob("*") if p.is_file()} == before


def test_a_force_pushed_remote_is_refused_not_merged(tmp_path: Path, two: list[Device]) -> None:
    a, b = two
    a.write("zq the history everyone has")
    a.sync()
    b.sync()
    clone = tmp_path / "rewrite"
    subprocess.run(["git", "clone", "-q", a.remote, str(clone)], check=True)
    git = ["git", "-C", str(clone), "-c", "user.name=x", "-c", "user.email=x@x"]
    subprocess.run([*git, "checkout", "-q", "--orphan", "new"], check=True)
    (clone / DAY).write_text("# 2026-05-01\n\n- 09:00 zq a rewritten past\n")
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "rewrite"], check=True)
    subprocess.run([*git, "push", "-q", "-f", "origin", "new:main"], check=True)
    before = b.read()
    with pytest.raises(SyncError, match="rewritten"):
        b.sync()
    assert b.read() == before and "rewritten past" not in before
    with pytest.raises(SyncError, match="rewritten"):  # and again: never merged blindly
        b.sync()
