"""Symlinks and special files on the write side (issue 14, defects 8 and 11): one policy
everywhere. A link out of the workspace is refused by writers as by readers; a FIFO
where a journal should be never hangs a write."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import Paths, RunCli, dreamer, plant
from reverie.engine import Reverie
from reverie.errors import PathEscapeError, WriteError
from reverie.provenance.origin import Origin


def test_a_memory_folder_linked_out_of_the_workspace_refuses_writes(
    paths: Paths, run_cli: RunCli, tmp_path: Path
) -> None:
    run_cli("init")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    memory = paths.workspace / "memory"
    for child in memory.iterdir():
        os.rename(child, outside / child.name)
    memory.rmdir()
    memory.symlink_to(outside, target_is_directory=True)
    proc = run_cli("write", "zqlink a note that would be lost", check=False)
    assert proc.returncode == 3 and "outside the workspace" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not list(outside.glob("*.md"))  # nothing written where it is never indexed


def test_a_fifo_in_place_of_todays_journal_fails_the_write_at_once(
    paths: Paths, engine_factory: Callable[..., Reverie]
) -> None:
    engine = engine_factory(embedder="fake")
    engine.init()
    fifo = paths.workspace / f"memory/{engine.clock.today().isoformat()}.md"
    os.mkfifo(fifo)
    with pytest.raises(WriteError, match="nothing written"):
        plant(engine, "zqfifo must not hang", origin=Origin.OWNER)


def test_a_memory_md_linked_out_is_never_rewritten_by_a_dream(
    paths: Paths, engine_factory: Callable[..., Reverie], tmp_path: Path
) -> None:
    engine = engine_factory(embedder="fake")
    engine.init()
    outside = tmp_path / "their-memory.md"
    outside.write_text("# Someone else's file\n", encoding="utf-8")
    (paths.workspace / "MEMORY.md").unlink()
    (paths.workspace / "MEMORY.md").symlink_to(outside)
    with pytest.raises(PathEscapeError):
        dreamer(engine).memory.read()
    with pytest.raises(PathEscapeError):
        dreamer(engine).memory.commit("0" * 64, "# replaced\n", "summary")
    assert outside.read_text(encoding="utf-8") == "# Someone else's file\n"
    assert (paths.workspace / "MEMORY.md").is_symlink()


def test_a_memory_md_linked_inside_is_written_through_and_stays_a_link(
    paths: Paths, engine_factory: Callable[..., Reverie]
) -> None:
    engine = engine_factory(embedder="fake")
    engine.init()
    real = paths.workspace / "MEMORY.real.md"
    real.write_text("# Long-term memory\n\n- kept\n", encoding="utf-8")
    (paths.workspace / "MEMORY.md").unlink()
    (paths.workspace / "MEMORY.md").symlink_to("MEMORY.real.md")
    memory = dreamer(engine).memory
    from reverie.dreaming.safe_write import sha

    old = memory.read()
    assert memory.commit(sha(old), old + "- added\n", "## test\n")
    assert (paths.workspace / "MEMORY.md").is_symlink()
    assert real.read_text(encoding="utf-8").endswith("- added\n")
