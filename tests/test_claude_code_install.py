"""``reverie install claude-code`` on settings files that already hold other hooks and
servers: added, idempotent, removed cleanly, everything else byte-identical."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
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
    mine = {"HOME": str(tmp_path)}  # the workspace and state dir lie under "home"
    run_cli("install", "claude-code", "--project", str(project), env=mine)
    mcp = json.loads((project / ".mcp.json").read_text())
    assert mcp["mcpServers"]["reverie"]["args"][-1] == "mcp"
    assert '\n    "model"' in settings_path.read_text()  # still four spaces
    assert not (tmp_path / ".claude" / "settings.json").exists()  # user settings untouched
    run_cli("install", "claude-code", "--project", str(project), "--uninstall", env=mine)
    assert settings_path.read_bytes() == original
    assert not (project / ".mcp.json").exists()  # the install created it: gone again


ODD = (
    '{"model":"opus",\n'
    '   "hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"x"}]}]},\n'
    '   "permissions": {"allow": [], "deny": []}}'
)  # compact, three spaces, no final newline: nothing json.dumps would give back


def test_uninstall_gives_back_the_files_byte_for_byte(home: Path, run_cli: RunCli) -> None:
    settings_path, claude_json = home / ".claude" / "settings.json", home / ".claude.json"
    settings_path.write_text(ODD, encoding="utf-8")
    mcp_text = '{\n\t"numStartups": 3,\n\t"mcpServers": {}\n}\n'  # an empty map of yours
    claude_json.write_text(mcp_text, encoding="utf-8")
    run_cli("install", "claude-code")
    assert "reverie" in json.loads(claude_json.read_text())["mcpServers"]
    run_cli("install", "claude-code", "--uninstall")
    assert settings_path.read_text(encoding="utf-8") == ODD
    assert claude_json.read_text(encoding="utf-8") == mcp_text


def test_uninstall_after_your_edits_keeps_them_and_your_empty_map(
    home: Path, run_cli: RunCli
) -> None:
    claude_json = home / ".claude.json"
    claude_json.write_text('{"numStartups": 3, "mcpServers": {}}\n', encoding="utf-8")
    run_cli("install", "claude-code")
    data = json.loads(claude_json.read_text())
    data["numStartups"] = 4  # Claude Code rewrites its own file meanwhile
    claude_json.write_text(json.dumps(data), encoding="utf-8")
    run_cli("install", "claude-code", "--uninstall")
    assert json.loads(claude_json.read_text()) == {"numStartups": 4, "mcpServers": {}}


def test_project_install_names_no_personal_path(
    home: Path, tmp_path: Path, env: dict[str, str]
) -> None:
    """A project's .claude/settings.json and .mcp.json are committed: they name
    `reverie` on PATH and paths under $CLAUDE_PROJECT_DIR / $HOME, and the hook runs."""
    project = tmp_path / "widgets"
    project.mkdir()
    base = [sys.executable, "-m", "reverie.cli", "--workspace", str(project / "memory-ws")]
    base += ["--state-dir", str(home / ".reverie" / "state")]
    subprocess.run([*base, "--embedder", "fake", "init"], env=env, check=True, timeout=120)
    subprocess.run(
        [*base, "install", "claude-code", "--project", str(project)],
        env=env,
        check=True,
        timeout=120,
        capture_output=True,
    )
    written = (project / ".claude" / "settings.json").read_text() + (
        project / ".mcp.json"
    ).read_text()
    assert str(tmp_path) not in written and sys.executable not in written
    server = json.loads((project / ".mcp.json").read_text())["mcpServers"]["reverie"]
    assert server["command"] == "reverie"
    assert server["args"] == [
        "--workspace",
        "${CLAUDE_PROJECT_DIR:-.}/memory-ws",
        "--state-dir",
        "${HOME}/.reverie/state",
        "mcp",
    ]
    command = our_hooks(json.loads((project / ".claude" / "settings.json").read_text()))
    start = command["SessionStart"][0]
    assert start.startswith("reverie ")
    run_env = {**env, "CLAUDE_PROJECT_DIR": str(project), "REVERIE_EMBEDDER": "fake"}
    run_env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    stdin = json.dumps({"hook_event_name": "SessionStart", "source": "startup", "session_id": "x"})
    proc = subprocess.run(
        ["/bin/sh", "-c", start],
        input=stdin,
        env=run_env,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert "MEMORY.md" in json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]


def test_project_install_refuses_a_personal_path(
    home: Path, tmp_path: Path, run_cli: RunCli
) -> None:
    project = tmp_path / "widgets"
    proc = run_cli("install", "claude-code", "--project", str(project), check=False)
    assert proc.returncode != 0 and "outside the project and your home" in proc.stderr
    assert not (project / ".claude").exists() and not (project / ".mcp.json").exists()


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
