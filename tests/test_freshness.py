"""The check before a one-shot ``reverie search`` (issue 41 point 3): a file edited in
place, added or removed since the last sync is found by the next search, and the check
(``reverie.storage.walk.differs``) says "behind" exactly when the workspace walk finds
other files than the registry holds, whatever the workspace holds (links, FIFOs,
hidden folders, review files)."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conftest import Paths, RunCli
from reverie.engine import Reverie
from reverie.storage.embedders.fake import FakeEmbedder
from reverie.storage.index.freshness import behind
from reverie.storage.walk import FileEntry

JOURNAL = "- 09:00 the heron nests by the old mill\n- 09:05 the kettle is blue\n"


def found(run_cli: RunCli, query: str) -> list[tuple[str, str]]:
    """(path, snippet) of the hits a one-shot ``reverie search`` answers."""
    out = json.loads(run_cli("search", query, "--lanes", "keyword", "--json").stdout)
    return [(h["path"], h["snippet"]) for h in out["hits"]]


def test_an_edit_in_place_is_found_by_the_next_one_shot_search(
    run_cli: RunCli, paths: Paths
) -> None:
    run_cli("init")
    day = paths.write("memory/2026-04-30.md", JOURNAL)
    assert [p for p, _ in found(run_cli, "heron")] == ["memory/2026-04-30.md"]
    inode = day.stat().st_ino
    with day.open("r+b") as f:  # an editor that writes into the same file, same size
        f.seek(JOURNAL.index("heron"))
        f.write(b"egret")
    assert day.stat().st_ino == inode and day.stat().st_size == len(JOURNAL)
    assert found(run_cli, "heron") == []
    hits = found(run_cli, "egret")
    assert [p for p, _ in hits] == ["memory/2026-04-30.md"] and "egret" in hits[0][1]


def test_a_file_added_in_a_new_folder_or_removed_is_found_by_the_next_search(
    run_cli: RunCli, paths: Paths
) -> None:
    run_cli("init")
    paths.write("memory/2026-04-30.md", JOURNAL)
    assert found(run_cli, "lighthouse") == []
    paths.write("notes/trips/coast.md", "- the lighthouse keeper waves at noon\n")
    assert [p for p, _ in found(run_cli, "lighthouse")] == ["notes/trips/coast.md"]
    (paths.workspace / "notes/trips/coast.md").unlink()
    assert found(run_cli, "lighthouse") == []


def walked(engine: Reverie) -> bool:
    """The check as it was before issue 41: every walk entry against the registry."""
    port = engine._a.port  # (a test reads the adapters directly)
    if port.is_dirty():
        return True
    known = {path: (row[1], row[2]) for path, row in port.sources().items()}
    seen = 0
    for entry in engine.workspace.walk():
        if not isinstance(entry, FileEntry):
            continue
        if known.get(entry.real or entry.relpath) != (entry.size, entry.mtime_ns):
            return True
        seen += 1
    return seen < len(known)


def _touch(path: Path) -> None:
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))


def _fifo(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)


CHANGES: dict[str, Callable[[Path], None]] = {
    "nothing": lambda ws: None,
    "a journal edited in place, same size": lambda ws: _touch(ws / "memory/2026-04-30.md"),
    "a journal appended to": lambda ws: (ws / "memory/2026-04-30.md").write_text(JOURNAL * 2),
    "a journal removed": lambda ws: (ws / "memory/2026-04-30.md").unlink(),
    "MEMORY.md edited": lambda ws: (ws / "MEMORY.md").write_text("- a fact\n"),
    "a note added deep down": lambda ws: (
        Path(ws / "a/b/c").mkdir(parents=True) or (ws / "a/b/c/n.md").write_text("- x\n")
    ),
    "a text file added": lambda ws: (ws / "notes/todo.txt").write_text("x\n"),
    "DREAMS.md edited (never indexed)": lambda ws: (ws / "DREAMS.md").write_text("# d\n"),
    "a note in a hidden folder": lambda ws: (
        Path(ws / ".cache").mkdir() or (ws / ".cache/n.md").write_text("- x\n")
    ),
    "a session transcript added": lambda ws: (
        Path(ws / "memory/.dreams/session-corpus").mkdir(parents=True, exist_ok=True)
        or (ws / "memory/.dreams/session-corpus/2026-04-30.md").write_text("- said\n")
    ),
    "a link to a note": lambda ws: (ws / "notes/link.md").symlink_to(ws / "notes/a.md"),
    "a link leaving the workspace": lambda ws: (ws / "notes/out.md").symlink_to("/etc/hostname"),
    "a broken link": lambda ws: (ws / "notes/gone.md").symlink_to(ws / "notes/nothing.md"),
    "a link to a folder": lambda ws: (ws / "linked").symlink_to(ws / "notes"),
    "a FIFO named like a note": lambda ws: _fifo(ws / "notes/pipe.md"),
    "a note replaced by a FIFO": lambda ws: (
        (ws / "notes/a.md").unlink() or _fifo(ws / "notes/a.md")
    ),
}

# what a user notices: these reach the next search (the rest are never indexed, or are
# held to the walk's own answer alone)
FOUND = {
    "a journal edited in place, same size",
    "a journal appended to",
    "a journal removed",
    "MEMORY.md edited",
    "a note added deep down",
    "a session transcript added",
}
NOT_FOUND = {"nothing", "a text file added", "DREAMS.md edited (never indexed)"}
NOT_FOUND |= {"a note in a hidden folder"}


@pytest.mark.skipif(sys.platform == "win32", reason="links and FIFOs")
@pytest.mark.parametrize("change", list(CHANGES))
def test_the_check_says_behind_exactly_when_the_walk_finds_other_files(
    change: str, engine_factory: Callable[..., Any], paths: Paths
) -> None:
    engine = engine_factory(use_embedder=FakeEmbedder())
    engine.init()
    paths.write("memory/2026-04-30.md", JOURNAL)
    paths.write("notes/a.md", "- a note\n")
    engine.index()
    assert not behind(engine._a.port, engine.workspace) and not walked(engine)
    CHANGES[change](paths.workspace)
    now = behind(engine._a.port, engine.workspace)
    assert now == walked(engine)
    if change in FOUND | NOT_FOUND:
        assert now is (change in FOUND)
    engine.refresh()  # synced: both agree the index holds the files again
    assert behind(engine._a.port, engine.workspace) == walked(engine)
