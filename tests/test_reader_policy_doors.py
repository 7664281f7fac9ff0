"""One reader policy, round 2 (issue 22, points 10-11): ``memory_get`` (the facade, the
CLI ``get`` and so the MCP tool) reads only the memory files a person owns, as the
index does: never a group conversation's corpus, a file under a hidden folder or a
file that is not Markdown, however it is named or linked; and a bad byte in a file a
person can edit never crashes a reader, nor is it lost by a writer."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import RunCli
from reverie.dreaming import archive
from reverie.engine import Reverie
from reverie.errors import WorkspaceError

GROUP = "memory/.dreams/session-corpus/group/main/team-chat/2026-05-01.md"
DIRECT = "memory/.dreams/session-corpus/2026-05-01.md"


@pytest.fixture
def engine(engine_factory: Callable[..., Reverie]) -> Reverie:
    e = engine_factory(embedder="fake")
    e.init()
    return e


def _put(root: Path, rel: str, text: str) -> Path:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text, encoding="utf-8")
    return p


def test_get_refuses_every_file_the_index_does_not_read(engine: Reverie, tmp_path: Path) -> None:
    root = engine.workspace.root
    _put(root, GROUP, "# Session corpus\n\n- zqgroup the team's private line\n")
    _put(root, DIRECT, "# Session corpus\n\n- zqdirect my own line\n")
    _put(root, "notes/secret.txt", "zqtxt not a memory file\n")
    _put(root, ".hidden/notes.md", "zqhidden under a hidden folder\n")
    os.symlink(root / GROUP, root / "notes" / "alias.md")  # a link inside, to the group
    refused = [GROUP, "notes/secret.txt", ".hidden/notes.md", "notes/alias.md"]
    refused += ["memory/.dreams/session-corpus/group/main/../main/team-chat/2026-05-01.md"]
    for rel in refused:
        with pytest.raises(WorkspaceError, match="not a memory file"):
            engine.get(rel)
    assert "zqdirect my own line" in engine.get(DIRECT).text
    assert "Long-term memory" in engine.get("MEMORY.md").text or engine.get("MEMORY.md")


def test_the_cli_get_refuses_a_group_corpus_with_a_clear_error(
    engine: Reverie, run_cli: RunCli
) -> None:
    _put(engine.workspace.root, GROUP, "# Session corpus\n\n- zqgroup the team's private line\n")
    proc = run_cli("get", GROUP, check=False)
    assert proc.returncode != 0
    assert "not a memory file" in proc.stderr and "Traceback" not in proc.stderr
    assert "zqgroup" not in proc.stdout + proc.stderr


def test_a_bad_byte_in_a_settings_file_is_a_clear_error_naming_file_and_line(
    engine: Reverie, run_cli: RunCli, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    before = b'{\n  "model": "opus",\n  "note": "caf\xe9"\n}\n'
    settings.write_bytes(before)
    proc = run_cli("install", "claude-code", env={"HOME": str(home)}, check=False)
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert f"{settings}:3: invalid UTF-8" in proc.stderr
    assert settings.read_bytes() == before  # nothing changed


def test_the_archive_keeps_a_persons_bad_byte_when_a_dream_adds_to_it(engine: Reverie) -> None:
    path = engine.workspace.memory_archive_path
    path.parent.mkdir(parents=True, exist_ok=True)
    mine = b"# Archive\n\n- an old line of mine, caf\xe9\n"
    path.write_bytes(mine)
    assert "caf\ufffd" in archive.read(engine.workspace)  # a reader: replaced, no crash
    archive.add(
        engine.workspace,
        ["- zqmoved a line the dream archived (Source: memory/2026-04-01.md#L3-L3)"],
        "2026-05-01",
    )
    data = path.read_bytes()
    assert data.startswith(mine.rstrip(b"\n")) and b"zqmoved" in data
