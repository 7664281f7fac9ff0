"""``reverie mcp`` in-process answers ``initialize`` before the MCP SDK loads (issue 43,
point 5): the SDK's answer is kept in the state folder and given at once to the next
client that asks the same, and never sent twice; ``reverie install claude-code`` and a
session whose kept answers miss one keep the SDK's answers to every handshake it
supports, so the first start of a state folder, and the first after an upgrade, answer
at once too. The end-to-end tests hold the SDK's import until the answer has arrived
(an import hook in ``sitecustomize``), so they show the order without timing anything."""

from __future__ import annotations

import io
import json
import subprocess
import textwrap
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from conftest import Paths, cli_command
from reverie.cli.mcp_primed import MAX_KEPT, Primed, handshake_key, prime
from reverie.mcp_server.handshakes import handshake_requests

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "test", "version": "1"}}}  # fmt: skip
ANSWER = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
          "serverInfo": {"name": "reverie", "version": "1"}}  # fmt: skip


def _line(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode() + b"\n"


def test_the_sdks_answer_is_kept_then_given_at_once_and_never_twice(tmp_path: Path) -> None:
    kept = tmp_path / "mcp-initialize.json"
    out = io.BytesIO()
    first = prime(kept, io.BytesIO(_line(INIT)), out)
    assert not first.answered and out.getvalue() == b""  # nothing kept yet: the SDK answers
    sdk = json.dumps({"jsonrpc": "2.0", "id": 1, "result": ANSWER})
    assert first.seen(sdk) and kept.exists()  # it goes to the client, and is kept
    assert first.handshaken.is_set() and not first.stale
    assert first.seen(json.dumps({"jsonrpc": "2.0", "id": 1, "result": {}}))  # only the first

    out = io.BytesIO()
    second = prime(kept, io.BytesIO(_line({**INIT, "id": "a"})), out)
    assert second.answered
    assert json.loads(out.getvalue()) == {"jsonrpc": "2.0", "id": "a", "result": ANSWER}
    changed = {**ANSWER, "instructions": "new"}
    assert second.answered and not second.handshaken.is_set() and not second.stale
    assert not second.seen(json.dumps({"jsonrpc": "2.0", "id": "a", "result": changed}))
    assert second.handshaken.is_set() and second.stale  # an untold upgrade: keep all anew
    assert json.loads(kept.read_text())[second.key] == changed  # the next start gives it
    assert second.seen(json.dumps({"jsonrpc": "2.0", "id": 2, "result": {"tools": []}}))

    other = {**INIT, "params": {**INIT["params"], "protocolVersion": "2024-11-05"}}
    assert not prime(kept, io.BytesIO(_line(other)), io.BytesIO()).answered
    discover = {"jsonrpc": "2.0", "id": 1, "method": "server/discover",
                "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}}  # fmt: skip
    found = prime(kept, io.BytesIO(_line(discover)), io.BytesIO())
    assert not found.answered and found.seen(
        json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"v": 1}})
    )
    out = io.BytesIO()
    assert prime(kept, io.BytesIO(_line(discover)), out).answered  # the 2026 handshake too
    assert json.loads(out.getvalue())["result"] == {"v": 1}
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    assert not prime(kept, io.BytesIO(_line(ping)), io.BytesIO()).answered


HOLD = """
import importlib.abc, os, sys, time
class _Hold(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "mcp" and os.environ.get("HOLD_MCP"):
            open(os.environ["HOLD_MCP"] + ".asked", "w").close()
            while not os.path.exists(os.environ["HOLD_MCP"]):
                time.sleep(0.05)
        return None
sys.meta_path.insert(0, _Hold())
"""


def test_initialize_is_answered_while_the_sdk_is_still_loading(
    paths: Paths, env: dict[str, str], tmp_path: Path
) -> None:
    hold_dir = tmp_path / "hold"
    hold_dir.mkdir()
    (hold_dir / "sitecustomize.py").write_text(textwrap.dedent(HOLD), encoding="utf-8")
    env = {**env, "PYTHONPATH": str(hold_dir), "REVERIE_MCP_RELAY": "off"}
    subprocess.run(cli_command(paths, "init"), env=env, check=True, capture_output=True)
    command = cli_command(paths, "mcp")

    async def first_client() -> None:  # no answer kept yet: the SDK answers, and it is kept
        params = StdioServerParameters(command=command[0], args=command[1:], env=env)
        async with stdio_client(params) as (r, w), ClientSession(r, w) as s:
            await s.initialize()

    anyio.run(first_client)
    release = tmp_path / "release"
    proc = subprocess.Popen(
        command, env={**env, "HOLD_MCP": str(release)},
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(_line(INIT))
        proc.stdin.flush()
        answer = json.loads(proc.stdout.readline())
        assert answer["id"] == 1 and answer["result"]["serverInfo"]["name"] == "reverie"
        deadline = time.monotonic() + 120  # the import is held: it asked, and waits
        while not Path(f"{release}.asked").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert Path(f"{release}.asked").exists() and not release.exists()
        release.touch()  # the SDK loads now and reads the same initialize
        proc.stdin.write(_line({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        proc.stdin.write(_line({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}))
        proc.stdin.flush()
        listed = json.loads(proc.stdout.readline())  # not the initialize answer again
        assert listed["id"] == 2 and "memory_search" in {
            t["name"] for t in listed["result"]["tools"]
        }
    finally:
        proc.stdin.close()
        proc.wait(timeout=120)


def test_every_handshake_is_kept_once_and_the_newest_versions_stay(tmp_path: Path) -> None:
    kept = tmp_path / "mcp-initialize.json"
    old = {f"reverie 0.0.{n}; mcp 1; initialize; protocol x": {"n": n} for n in range(MAX_KEPT)}
    kept.write_text(json.dumps(old))
    primed = Primed(b"", kept).load()
    requests = handshake_requests()
    assert len(requests) >= 5 and primed.missing(requests)
    answers = [(r, {"for": handshake_key(r)}) for r in requests]
    assert primed.keep_all(answers) == len(requests) and not primed.missing(requests)
    on_disk = json.loads(kept.read_text())
    assert len(on_disk) == MAX_KEPT and all(on_disk[handshake_key(r)] for r in requests)
    assert "reverie 0.0.0; mcp 1; initialize; protocol x" not in on_disk  # the oldest went
    assert Primed(b"", kept).load().keep_all(answers) == 0  # nothing new: nothing written
    assert not Primed(b"", kept).load().missing(requests)


def _held(env: dict[str, str], tmp_path: Path) -> tuple[dict[str, str], Path]:
    """The environment of a server whose ``import mcp`` waits for the file returned."""
    hold_dir = tmp_path / "hold"
    hold_dir.mkdir(exist_ok=True)
    (hold_dir / "sitecustomize.py").write_text(textwrap.dedent(HOLD), encoding="utf-8")
    release = tmp_path / "release"
    release.unlink(missing_ok=True)
    Path(f"{release}.asked").unlink(missing_ok=True)
    held = {**env, "PYTHONPATH": str(hold_dir), "REVERIE_MCP_RELAY": "off"}
    return {**held, "HOLD_MCP": str(release)}, release


def _sdk_was_held(release: Path) -> bool:
    """The server reached ``import mcp`` and waits there: whatever it answered so far
    came before the SDK loaded."""
    deadline = time.monotonic() + 120
    while not Path(f"{release}.asked").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    return Path(f"{release}.asked").exists() and not release.exists()


@pytest.mark.parametrize("client", ["initialize", "server/discover"])
def test_the_first_start_after_install_answers_before_the_sdk_loads(
    client: str, paths: Paths, env: dict[str, str], tmp_path: Path
) -> None:
    subprocess.run(cli_command(paths, "init"), env=env, check=True, capture_output=True)
    install = cli_command(paths, "install", "claude-code", "--project", str(tmp_path), "--json")
    out = subprocess.run(install, env=env, check=True, capture_output=True, text=True)
    assert json.loads(out.stdout)["mcp_answers_kept"] == len(handshake_requests())
    held, release = _held(env, tmp_path)
    command = cli_command(paths, "mcp")
    params = StdioServerParameters(command=command[0], args=command[1:], env=held)

    async def session() -> tuple[list[str], bool]:
        with anyio.fail_after(120):  # no answer while the SDK is held: fails, never hangs
            return await answered()

    async def answered() -> tuple[list[str], bool]:
        if client == "initialize":  # the handshake clients of 2024-2025 (Claude Code...)
            async with stdio_client(params) as (r, w), ClientSession(r, w) as s:
                info = (await s.initialize()).server_info
                assert info.name == "reverie" and _sdk_was_held(release)
                release.touch()
                return await _use(s)
        async with Client(stdio_client(params)) as c:  # the SDK's own client: discover
            assert c.server_info is not None and c.server_info.name == "reverie"
            assert _sdk_was_held(release)
            release.touch()
            return await _use(c)

    tools, found = anyio.run(session)
    assert "memory_search" in tools and found  # then the session works as ever


async def _use(client: Any) -> tuple[list[str], bool]:
    tools = [t.name for t in (await client.list_tools()).tools]
    wrote = await client.call_tool("memory_write", {"text": "the ledger runs on blue"})
    found = await client.call_tool("memory_search", {"query": "where does the ledger run"})
    assert not wrote.is_error and not found.is_error
    return tools, "ledger" in json.dumps(found.structured_content)


def test_a_session_after_an_upgrade_keeps_every_protocol_version(
    paths: Paths, env: dict[str, str], tmp_path: Path
) -> None:
    subprocess.run(cli_command(paths, "init"), env=env, check=True, capture_output=True)
    kept = paths.state / "main" / "mcp-initialize.json"
    kept.parent.mkdir(parents=True, exist_ok=True)
    stale = {"reverie 0.0.1; mcp 2.0.0; initialize; protocol 2025-11-25": {"old": True}}
    kept.write_text(json.dumps(stale), encoding="utf-8")  # kept by an older version
    command = cli_command(paths, "mcp")
    env = {**env, "REVERIE_MCP_RELAY": "off"}
    params = StdioServerParameters(command=command[0], args=command[1:], env=env)

    async def first_client() -> dict[str, Any]:  # the SDK answers, as before the upgrade
        async with stdio_client(params) as (r, w), ClientSession(r, w) as s:
            answer = await s.initialize()
            await s.list_tools()
            return answer.model_dump(by_alias=True, mode="json", exclude_none=True)

    live = anyio.run(first_client)
    answers = json.loads(kept.read_text(encoding="utf-8"))  # every handshake, kept
    assert all(handshake_key(r) in answers for r in handshake_requests())
    assert answers[handshake_key(INIT)] == live  # what the SDK itself answered
    held, release = _held(env, tmp_path)
    for request in handshake_requests():  # each answered at once by the next start
        proc = subprocess.Popen(
            command, env=held, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        assert proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write(_line({**request, "id": 7}))
            proc.stdin.flush()
            answer = json.loads(proc.stdout.readline())
            assert answer == {"jsonrpc": "2.0", "id": 7, "result": answers[handshake_key(request)]}
            assert _sdk_was_held(release)
        finally:
            proc.kill()
            proc.wait(timeout=60)
            Path(f"{release}.asked").unlink(missing_ok=True)
