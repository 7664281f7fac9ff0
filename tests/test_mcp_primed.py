"""``reverie mcp`` in-process answers ``initialize`` before the MCP SDK loads (issue 43,
point 5): the SDK's answer is kept in the state folder and given at once to the next
client that asks the same, and never sent twice. The end-to-end test holds the SDK's
import until the answer has arrived (an import hook in ``sitecustomize``), so it shows
the order without timing anything."""

from __future__ import annotations

import io
import json
import subprocess
import textwrap
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from conftest import Paths, cli_command
from reverie.cli.mcp_primed import prime

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
    assert first.seen(json.dumps({"jsonrpc": "2.0", "id": 1, "result": {}}))  # only the first

    out = io.BytesIO()
    second = prime(kept, io.BytesIO(_line({**INIT, "id": "a"})), out)
    assert second.answered
    assert json.loads(out.getvalue()) == {"jsonrpc": "2.0", "id": "a", "result": ANSWER}
    changed = {**ANSWER, "instructions": "new"}
    assert not second.seen(json.dumps({"jsonrpc": "2.0", "id": "a", "result": changed}))
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
