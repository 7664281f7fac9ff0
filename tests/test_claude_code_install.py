"""``reverie install claude-code`` on settings files that already hold other hooks and
servers: added, idempotent, removed cleanly, everything else byte-identical."""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conftest import Paths, RunCli
from reverie.integrations.claude_install import is_ours

THEIRS = {
    "model": "opus",
    "permissions": {"allow": ["Bash(npm run lint)", "Read(~/.zshrc)"], "deny": []},
    "hooks": {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "~/bin/audit.sh"}]}
        ],
        "SessionStart": [
            {"matcher": "startup", "hooks": [{"type": "command", "command": "echo hello ☕"}]}
        ],
    },
}
CLAUDE_JSON = {
    "numStartups": 42,
    "mcpServers": {"github": {"type": "stdio", "command": "npx", "args": ["-y", "gh-mcp"]}},
    "projects": {"/home/dev/widgets": {"allowedTools": []}},
}


@pytest.fixture
def home(tmp_path: Path, env: dict[str, str]) -> Path:
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    env["HOME"] = str(home)
    env.pop("CLAUDE_CONFIG_DIR", None)
    return home


def write_json(path: Path, data: Any, indent: int = 2) -> bytes:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=indent, ensure_ascii=False) + "\n", encoding="utf-8")
    return path.read_bytes()


def our_hooks(settings: dict[str, Any]) -> dict[str, list[str]]:
    return {
        event: [h["command"] for g in groups for h in g["hooks"] if is_ours(h)]
        for event, groups in settings.get("hooks", {}).items()
    }


def test_user_install_idempotent_and_clean_uninstall(
    home: Path, paths: Paths, run_cli: RunCli
) -> None:
    settings_path, claude_json = home / ".claude" / "settings.json", home / ".claude.json"
    original = write_json(settings_path, THEIRS)
    original_mcp = write_json(claude_json, CLAUDE_JSON)

    out = json.loads(run_cli("install", "claude-code", "--json").stdout)
    assert all(f["changed"] for f in out["files"])
    settings = json.loads(settings_path.read_text())
    ours = our_hooks(settings)
    assert {e for e, cmds in ours.items() if cmds} == {
        "SessionStart",
        "UserPromptSubmit",
        "PreCompact",
        "SessionEnd",
    }
    program = shlex.split(ours["UserPromptSubmit"][0])
    assert Path(program[0]).is_absolute()
    assert program[-2:] == ["hook", "user-prompt-submit"]
    assert "--workspace" in program and str(paths.workspace.resolve()) in program
    # the others are untouched, in place
    assert settings["hooks"]["PreToolUse"] == THEIRS["hooks"]["PreToolUse"]
    assert settings["hooks"]["SessionStart"][0] == THEIRS["hooks"]["SessionStart"][0]
    assert settings["permissions"] == THEIRS["permissions"]
    mcp = json.loads(claude_json.read_text())
    assert mcp["mcpServers"]["github"] == CLAUDE_JSON["mcpServers"]["github"]
    server = mcp["mcpServers"]["reverie"]
    assert Path(server["command"]).is_absolute() and server["args"][-1] == "mcp"
    assert mcp["projects"] == CLAUDE_JSON["projects"]
    backups = sorted(p.name for p in (home / ".claude").glob("settings.json.reverie-*.bak"))
    assert len(backups) == 1
    assert (home / ".claude" / backups[0]).read_bytes() == original

    installed = settings_path.read_bytes(), claude_json.read_bytes()
    again = json.loads(run_cli("install", "claude-code", "--json").stdout)
    assert not any(f["changed"] for f in again["files"])
    assert (settings_path.read_bytes(), claude_json.read_bytes()) == installed

    gone = json.loads(run_cli("install", "claude-code", "--uninstall", "--json").stdout)
    assert all(f["changed"] for f in gone["files"])
    assert settings_path.read_bytes() == original
    assert claude_json.read_bytes() == original_mcp


def test_dry_run_writes_nothing_and_shows_the_diff(home: Path, run_cli: RunCli) -> None:
    settings_path = home / ".claude" / "settings.json"
    original = write_json(settings_path, THEIRS, indent=4)
    out = run_cli("install", "claude-code", "--dry-run").stdout
    assert "would change" in out and "+" in out and "user-prompt-submit" in out
    assert settings_path.read_bytes() == original
    assert not (home / ".claude.json").exists()


def test_project_install_keeps_its_indentation(home: Path, tmp_path: Path, run_cli: RunCli) -> None:
    project = tmp_path / "widgets"
    settings_path = project / ".claude" / "settings.json"
    original = write_json(settings_path, THEIRS, indent=4)
    run_cli("install", "claude-code", "--project", str(project))
    mcp = json.loads((project / ".mcp.json").read_text())
    assert mcp["mcpServers"]["reverie"]["args"][-1] == "mcp"
    assert '\n    "model"' in settings_path.read_text()  # still four spaces
    assert not (home / ".claude" / "settings.json").exists()  # user settings untouched
    run_cli("install", "claude-code", "--project", str(project), "--uninstall")
    assert settings_path.read_bytes() == original
    assert json.loads((project / ".mcp.json").read_text()) == {}


def test_broken_settings_file_is_refused_with_its_position(home: Path, run_cli: RunCli) -> None:
    settings_path = home / ".claude" / "settings.json"
    settings_path.write_text('{\n  "model": "opus",\n  "hooks": {,\n}\n')
    proc = run_cli("install", "claude-code", check=False)
    assert proc.returncode != 0
    assert f"{settings_path}:3" in proc.stderr
    assert settings_path.read_text() == '{\n  "model": "opus",\n  "hooks": {,\n}\n'


def test_installed_hook_command_runs(
    home: Path, paths: Paths, run_cli: RunCli, env: dict[str, str]
) -> None:
    """The command written into the settings is one Claude Code can run as it stands."""
    run_cli("init")
    run_cli("install", "claude-code")
    settings = json.loads((home / ".claude" / "settings.json").read_text())
    command = our_hooks(settings)["SessionStart"][0]
    stdin = json.dumps({"hook_event_name": "SessionStart", "source": "startup", "session_id": "x"})
    proc = subprocess.run(
        shlex.split(command), input=stdin, env=env, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)["hookSpecificOutput"]
    assert out["hookEventName"] == "SessionStart" and "MEMORY.md" in out["additionalContext"]


def test_claude_config_dir_is_respected(
    home: Path, tmp_path: Path, run_cli: RunCli, env: dict[str, str]
) -> None:
    moved = tmp_path / "claude-config"
    env["CLAUDE_CONFIG_DIR"] = str(moved)
    run_cli("install", "claude-code")
    assert our_hooks(json.loads((moved / "settings.json").read_text()))["SessionEnd"]
    assert "reverie" in json.loads((moved / ".claude.json").read_text())["mcpServers"]
    assert not (home / ".claude" / "settings.json").exists()
    assert not (home / ".claude.json").exists()
