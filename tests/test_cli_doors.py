"""The command line as a person meets it: paths from any folder, where a value came
from, and errors that a script can read (issue 22, point 18)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from conftest import Paths, RunCli, cli_command


def test_trust_a_workspace_folder_from_outside_the_workspace(
    run_cli: RunCli, paths: Paths, env: dict[str, str], tmp_path: Path
) -> None:
    run_cli("init")
    (paths.workspace / "notes").mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    proc = subprocess.run(
        cli_command(paths, "trust", "notes", "--json"),
        cwd=elsewhere,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["trusted"] == ["notes"]
    outside = subprocess.run(
        cli_command(paths, "trust", str(elsewhere)),
        cwd=elsewhere,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert outside.returncode != 0 and "not inside the workspace" in outside.stderr


def test_settings_say_a_value_came_from_the_environment(
    run_cli: RunCli, paths: Paths, env: dict[str, str]
) -> None:
    cmd = ["python", "-m", "reverie.cli", "settings", "--json"]
    cmd[0] = cli_command(paths)[0]
    mine = {**env, "REVERIE_WORKSPACE": str(paths.workspace), "REVERIE_EMBEDDER": "fake"}
    proc = subprocess.run(cmd, env=mine, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    rows = {r["name"]: r for r in json.loads(proc.stdout)}
    assert rows["workspace"]["source"] == "env REVERIE_WORKSPACE"
    assert rows["embedder"]["source"] == "env REVERIE_EMBEDDER"
    flagged = json.loads(run_cli("settings", "--json").stdout)
    assert {r["name"]: r["source"] for r in flagged}["workspace"] == "flag"


def test_json_errors_go_to_stderr_as_json(run_cli: RunCli) -> None:
    proc = run_cli("search", "anything", "--json", check=False)  # no workspace yet
    assert proc.returncode == 3
    assert proc.stdout == ""
    error = json.loads(proc.stderr)
    assert error["error"] == "WorkspaceError" and "reverie init" in error["message"]
