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
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from filelock import FileLock

from conftest import base_env

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
                why = f"pip install {HERMES} failed: {done.stderr.strip()[-500:]}"
                if os.environ.get("CI"):
                    pytest.fail(why)
                pytest.skip(why)
    return exe


def _reply(request: dict[str, Any]) -> dict[str, Any]:
    """The scripted model: asked where Beth lives, it searches its memory; given the
    tool's answer, it repeats it; anything else is noted."""
    last = (request.get("messages") or [{}])[-1]
    if last.get("role") == "tool":
        return {"role": "assistant", "content": f"FROM MEMORY: {last.get('content')}"}
    if "Where does Beth live" in json.dumps(last.get("content")):
        call = {"name": "memory_search", "arguments": json.dumps({"query": "Beth moved"})}
        return {"role": "assistant", "content": None,
                "tool_calls": [{"id": "call_1", "type": "function", "function": call}]}  # fmt: skip
    return {"role": "assistant", "content": "Noted."}


@pytest.fixture
def model() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    seen: list[dict[str, Any]] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def _send(self, body: bytes, kind: str = "application/json") -> None:
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:  # the model list
            self._send(json.dumps({"object": "list", "data": [{"id": "fake-model"}]}).encode())

        def do_POST(self) -> None:
            size = int(self.headers.get("Content-Length", 0))
            request = json.loads(self.rfile.read(size) or b"{}")
            seen.append(request)
            message = _reply(request)
            finish = "tool_calls" if message.get("tool_calls") else "stop"
            base = {"id": "c1", "created": int(time.time()), "model": "fake-model"}
            if not request.get("stream"):
                choice = {"index": 0, "message": message, "finish_reason": finish}
                usage = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
                body = {**base, "object": "chat.completion", "choices": [choice], "usage": usage}
                self._send(json.dumps(body).encode())
                return
            delta = dict(message)
            if "tool_calls" in delta:
                delta["tool_calls"] = [{**c, "index": i} for i, c in enumerate(delta["tool_calls"])]
            events = [
                {**base, "object": "chat.completion.chunk",
                 "choices": [{"index": 0, "delta": d, "finish_reason": f}]}
                for d, f in ((delta, None), ({}, finish))
            ]  # fmt: skip
            stream = "".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n"
            self._send(stream.encode(), "text/event-stream")

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", seen
    finally:
        server.shutdown()
        server.server_close()


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

    assert "Noted." in turn("Remember that my sister Beth moved to Leeds in March.")
    answer = turn("Where does Beth live?")
    assert "FROM MEMORY:" in answer and "my sister Beth moved to Leeds in March." in answer
    assert "owner" in answer  # the line is the owner's, and the model is told so
    chats = [r for r in seen if r.get("messages")]  # (Hermes may make other calls too)
    system = [m["content"] for r in chats for m in r["messages"] if m.get("role") == "system"]
    assert any("Tea, never coffee." in str(s) for s in system)  # the bootstrap went in
    tools = {t["function"]["name"] for r in chats for t in r.get("tools") or []}
    assert {"memory_search", "memory_get", "memory_write", "memory_link"} <= tools
