"""``reverie import openclaw DIR`` (issue 42): an OpenClaw workspace taken as it is.
Every file but the hidden folders lands byte for byte, its lines at the trust the owner
declares (untrusted by default: found, framed, never injected; ``--as-owner``: a trusted
folder of the owner's notes); importing again adds nothing and overwrites nothing; a
forgotten line is not brought back; the reader policy holds (no link out, no FIFO)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from conftest import RunCli

FILES = {
    "AGENTS.md": "# AGENTS\n\nBe brief. Ask before deleting anything.\n",
    "SOUL.md": "# Soul\n\nCurious, kind, a little dry.\n",
    "USER.md": "# User\n\n- Name: Priya\n- Prefers tea to coffee.\n",
    "MEMORY.md": "# Memory\n\n- The boiler service is booked with Hendry & Sons.\n- 周末去杭州看外婆。\n",
    "memory/2026-03-01.md": "# 2026-03-01\n\n- Priya's new flat is on Calder Road.\n",
    "memory/projects/garden.md": "## Garden\n\n- The spare key is under the blue pot.\n",
}


@pytest.fixture
def openclaw_ws(tmp_path: Path) -> Path:
    root = tmp_path / "openclaw-workspace"
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    (root / "canvas.png").write_bytes(bytes(range(256)))  # not Markdown: kept as it is
    (root / ".git").mkdir()
    (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    return root


def _import(run_cli: RunCli, root: Path, *extra: str) -> dict[str, Any]:
    return dict(json.loads(run_cli("import", "openclaw", str(root), "--json", *extra).stdout))


def test_every_file_lands_as_it_is_untrusted_by_default(
    run_cli: RunCli, paths: Any, openclaw_ws: Path
) -> None:
    run_cli("init")
    dry = _import(run_cli, openclaw_ws, "--dry-run")
    assert dry["new"] == 7 and not (paths.workspace / "memory" / "imports" / "openclaw").exists()
    report = _import(run_cli, openclaw_ws)
    folder = paths.workspace / "memory" / "imports" / "openclaw"
    for rel, text in FILES.items():
        assert (folder / rel).read_text(encoding="utf-8") == text  # every line, as it was
    assert (folder / "canvas.png").read_bytes() == bytes(range(256))
    assert not (folder / ".git").exists()
    assert report["origins"] == {
        "untrusted": sum(len([ln for ln in t.split("\n") if ln.strip()]) for t in FILES.values())
    }
    hits = json.loads(run_cli("search", "boiler service Hendry", "--json").stdout)["hits"]
    assert hits[0]["origin"] == "untrusted" and hits[0]["path"].startswith(
        "memory/imports/openclaw/"
    )
    context = json.loads(run_cli("context", "boiler", "--json").stdout)["text"]
    assert "Hendry" not in context  # found by search, never injected
    again = _import(run_cli, openclaw_ws)
    assert again["new"] == 0 and again["already"] == 7


def test_as_owner_the_folder_is_the_owners_and_nothing_is_overwritten(
    run_cli: RunCli, paths: Any, openclaw_ws: Path
) -> None:
    run_cli("init")
    _import(run_cli, openclaw_ws, "--as-owner")
    hits = json.loads(run_cli("search", "spare key blue pot", "--json").stdout)["hits"]
    assert hits[0]["origin"] == "owner" and hits[0]["path"] == "openclaw/memory/projects/garden.md"
    copy = paths.workspace / "openclaw" / "MEMORY.md"
    copy.write_text(copy.read_text() + "- Edited here.\n", encoding="utf-8")
    (openclaw_ws / "MEMORY.md").write_text(FILES["MEMORY.md"] + "- Changed there.\n")
    again = _import(run_cli, openclaw_ws, "--as-owner")
    assert "- Edited here." in copy.read_text() and "Changed there" not in copy.read_text()
    assert any("MEMORY.md: differs" in w for w in again["warnings"])


def test_a_forgotten_line_is_not_brought_back_and_the_reader_policy_holds(
    run_cli: RunCli, paths: Any, openclaw_ws: Path, tmp_path: Path
) -> None:
    run_cli("init")
    _import(run_cli, openclaw_ws)
    run_cli("forget", "The boiler service is booked with Hendry & Sons.")
    folder = paths.workspace / "memory" / "imports" / "openclaw"
    assert "Hendry" not in (folder / "MEMORY.md").read_text()
    (folder / "MEMORY.md").unlink()
    secret = tmp_path / "elsewhere.md"
    secret.write_text("- not part of the workspace\n")
    os.symlink(secret, openclaw_ws / "linked.md")
    os.symlink(openclaw_ws / "SOUL.md", openclaw_ws / "soul-link.md")  # a link inside
    os.mkfifo(openclaw_ws / "pipe.md")  # a FIFO never hangs the import
    report = _import(run_cli, openclaw_ws)
    assert "Hendry" not in (folder / "MEMORY.md").read_text()  # left blank
    assert "周末去杭州看外婆。" in (folder / "MEMORY.md").read_text()
    assert not (folder / "linked.md").exists() and not (folder / "pipe.md").exists()
    assert (folder / "soul-link.md").read_text() == FILES["SOUL.md"]
    assert any("link out of" in w for w in report["warnings"])
    assert any("pipe.md" in w for w in report["warnings"])
