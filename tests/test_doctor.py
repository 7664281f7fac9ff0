"""``reverie doctor`` end to end through the CLI: a healthy workspace, and broken ones,
each finding naming the command that fixes it (issue 22, point 20)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conftest import Paths, RunCli, cli_command


def doctor(run_cli: RunCli, **env: str | None) -> tuple[int, dict[str, dict[str, Any]]]:
    proc = run_cli("doctor", "--json", env=env, check=False)
    assert "Traceback" not in proc.stderr
    report = json.loads(proc.stdout)
    assert report["healthy"] == (proc.returncode == 0)
    return proc.returncode, {f["check"]: f for f in report["findings"]}


@pytest.fixture
def home(tmp_path: Path, env: dict[str, str]) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    env["HOME"] = str(home)
    env.pop("CLAUDE_CONFIG_DIR", None)
    return home


@pytest.fixture
def healthy(run_cli: RunCli, paths: Paths, home: Path) -> Paths:
    run_cli("init")
    run_cli("index")
    run_cli("install", "claude-code")
    return paths


def test_a_healthy_workspace(healthy: Paths, run_cli: RunCli) -> None:
    code, found = doctor(run_cli)
    assert code == 0
    for check in ("workspace", "state dir", "origin key", "index", "embedder"):
        assert found[check]["status"] == "ok", found[check]
    assert found["claude code (user)"]["status"] == "ok"
    assert found["daemon"]["status"] == "info" and found["daemon"]["fix"] == (
        "reverie serve (or a service manager running it)"
    )
    text = run_cli("doctor").stdout
    assert text.rstrip().endswith("healthy")


def test_no_workspace(run_cli: RunCli, home: Path) -> None:
    code, found = doctor(run_cli)
    assert code == 1
    assert found["workspace"]["status"] == "error" and found["workspace"]["fix"] == "reverie init"


def test_the_index_behind_the_files_and_a_broken_index(healthy: Paths, run_cli: RunCli) -> None:
    with (healthy.workspace / "MEMORY.md").open("a", encoding="utf-8") as fh:
        fh.write("- A new fact, not yet indexed.\n")
    code, found = doctor(run_cli)
    assert code == 0 and found["index"]["status"] == "warn"
    assert "MEMORY.md" in found["index"]["message"] and found["index"]["fix"] == "reverie index"
    index = healthy.state / "main" / "index.sqlite"
    for extra in ("-wal", "-shm"):
        Path(f"{index}{extra}").unlink(missing_ok=True)
    index.write_bytes(b"this is not a database" * 100)
    code, found = doctor(run_cli)
    assert code == 1 and found["index"]["status"] == "error"
    assert "file is not a database)" in found["index"]["message"]  # the driver's words
    assert found["index"]["fix"].startswith(f"rm {index} && reverie index")
    removal = found["index"]["fix"].split(" && ")[0]
    subprocess.run(removal, shell=True, check=True)  # the fix as it says, then the index
    run_cli("index")
    assert doctor(run_cli)[1]["index"]["status"] == "ok"


def test_a_lost_key_a_dead_daemon_and_a_half_install(
    healthy: Paths, run_cli: RunCli, home: Path
) -> None:
    (healthy.state / "origin.key").unlink()
    dead = subprocess.Popen(["true"])
    dead.wait()
    state = {"pid": dead.pid, "started": "2026-05-01T03:00:00+00:00", "stopped": None}
    (healthy.state / "main" / "daemon-state.json").write_text(json.dumps(state))
    settings = home / ".claude" / "settings.json"
    data = json.loads(settings.read_text())
    del data["hooks"]["PreCompact"]
    settings.write_text(json.dumps(data))
    code, found = doctor(run_cli)
    assert code == 0  # warnings only: it still works
    assert found["origin key"]["status"] == "warn" and "origin.key" in found["origin key"]["fix"]
    assert found["daemon"]["status"] == "warn" and found["daemon"]["fix"] == "reverie serve"
    claude = found["claude code (user)"]
    assert claude["status"] == "warn" and "PreCompact" in claude["message"]
    assert claude["fix"] == "reverie install claude-code"


def test_vectors_of_another_embedder(healthy: Paths, run_cli: RunCli) -> None:
    """An index whose vectors another embedder made (the setting changed since)."""
    index = healthy.state / "main" / "index.sqlite"
    with sqlite3.connect(index) as conn:
        conn.execute(
            "UPDATE meta SET value = 'openai:text-embedding-3-small:1536' WHERE key = 'embedder'"
        )
    found = doctor(run_cli)[1]["embedder"]
    assert found["status"] == "warn" and "text-embedding-3-small" in found["message"]
    assert found["fix"] == "reverie index"
    run_cli("index")
    assert doctor(run_cli)[1]["embedder"]["status"] == "ok"


def test_an_unreachable_embedder(healthy: Paths, run_cli: RunCli) -> None:
    env = {
        "REVERIE_EMBED_BASE_URL": "http://127.0.0.1:9/v1",
        "REVERIE_EMBED_MODEL": "m",
        "REVERIE_EMBED_ATTEMPTS": "1",
        "REVERIE_EMBED_TIMEOUT": "2",
    }
    proc = run_cli("doctor", "--json", env=env, embedder="openai", check=False)
    found = {f["check"]: f for f in json.loads(proc.stdout)["findings"]}
    assert proc.returncode == 1 and found["embedder"]["status"] == "error"
    assert "openai" in found["embedder"]["message"] and found["embedder"]["fix"]


def test_a_failing_hook_is_reported(healthy: Paths, run_cli: RunCli, env: dict[str, str]) -> None:
    """A hook fails open (no output, exit 0): the doctor is where the person hears of it."""
    assert "hooks log" not in doctor(run_cli)[1]
    hook = subprocess.run(
        cli_command(healthy, "hook", "session-start"),
        input=b"not json",
        env=env,
        capture_output=True,
        timeout=120,
    )
    assert hook.returncode == 0 and not hook.stdout
    found = doctor(run_cli)[1]["hooks log"]
    assert found["status"] == "warn" and "stdin is not JSON" in found["message"]
    assert "hooks.log" in found["fix"]
