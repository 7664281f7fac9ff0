"""Reverie inside the real Hermes Agent (``hermes-agent`` from PyPI, issue 42 point 4):
``reverie install hermes``, then two one-shot turns (``hermes -z``) against a scripted
OpenAI-compatible model on loopback. The first turn is recorded as the owner's; in the
second the model calls ``memory_search`` and reads the first turn back; the system
prompt carried MEMORY.md.

Hermes pins exact versions of libraries Reverie's own environment holds newer
(pydantic, openai, httpx, rich), so it runs from a virtual environment of its own,
made once per machine from the package registry (``~/.cache/reverie-tests/``, or
``REVERIE_TEST_HERMES_VENV``) and reused; the provider in it imports nothing of
Reverie and calls this ``reverie`` by command, as a user's Hermes does. Where the
registry cannot be reached the test skips, and fails under CI."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from filelock import FileLock

from conftest import base_env, missing
from fake_chat import converse, fake_chat_model

HERMES = "hermes-agent==0.19.0"


@pytest.fixture(scope="session")
def hermes() -> Path:
    default = Path.home() / ".cache" / "reverie-tests" / HERMES.replace("==", "-")
    root = Path(os.environ.get("REVERIE_TEST_HERMES_VENV", default))
    exe = root / "bin" / "hermes"
    root.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(f"{root}.lock"):  # one install, whichever test worker comes first
        if not exe.exists():
            shutil.rmtree(root, ignore_errors=True)
            subprocess.run([sys.executable, "-m", "venv", str(root)], check=True)
            pip = [str(root / "bin" / "python"), "-m", "pip", "install", "-q", HERMES]
            done = subprocess.run(pip, capture_output=True, text=True, timeout=1200)
            if done.returncode != 0:
                shutil.rmtree(root, ignore_errors=True)
                missing(f"pip install {HERMES} failed: {done.stderr.strip()[-500:]}")
    return exe


@pytest.fixture
def model() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    with fake_chat_model() as served:
        yield served


@pytest.mark.timeout(1200)  # the first run on a machine installs the runtime
def test_a_hermes_turn_writes_to_and_recalls_from_reverie(
    hermes: Path, model: tuple[str, list[dict[str, Any]]], tmp_path: Path
) -> None:
    url, seen = model
    env = base_env(tmp_path)
    (tmp_path / "config.toml").write_text('embedder = "fake"\n', encoding="utf-8")
    home = tmp_path / "hermes-home"
    home.mkdir()
    (home / "config.yaml").write_text(
        f"model:\n  provider: custom\n  base_url: {url}\n  default: fake-model\n  api_key: sk-test\n",
        encoding="utf-8",
    )
    env.update(REVERIE_CONFIG=str(tmp_path / "config.toml"), HERMES_HOME=str(home))
    env.pop("REVERIE_NOW", None)  # Hermes stamps its own sessions: one clock for both
    reverie = [sys.executable, "-m", "reverie.cli", "--workspace", str(tmp_path / "ws")]
    reverie += ["--state-dir", str(tmp_path / "st")]
    subprocess.run([*reverie, "init"], env=env, check=True, capture_output=True)
    (tmp_path / "ws" / "MEMORY.md").write_text("# Long-term memory\n\n- Tea, never coffee.\n")
    installed = subprocess.run(
        [*reverie, "install", "hermes", "--hermes", str(hermes), "--json"],
        env=env, check=True, capture_output=True, text=True,
    )  # fmt: skip
    assert json.loads(installed.stdout)["memory_provider"] == "set"

    def turn(prompt: str) -> str:
        done = subprocess.run(
            [str(hermes), "-z", prompt],
            env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-2000:]
        return done.stdout

    chats = converse(turn, seen)
    hermes_config = [str(hermes), "config", "set", "memory.provider", "holographic"]
    subprocess.run(hermes_config, env=env, check=True, capture_output=True, timeout=120)
    removed = subprocess.run(
        [*reverie, "install", "hermes", "--hermes", str(hermes), "--uninstall", "--json"],
        env=env, check=True, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert json.loads(removed.stdout)["memory_provider"] == "left as it is (holographic)"
    assert not (home / "plugins" / "reverie").exists()
    system = [m["content"] for r in chats for m in r["messages"] if m.get("role") == "system"]
    assert any("Tea, never coffee." in str(s) for s in system)  # the bootstrap went in
