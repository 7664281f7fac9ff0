"""An embedder that is down never fails a search (issue 22, point 9).

Connection refused, timeouts and 5xx are transient: ``reverie search`` (and the MCP
``memory_search`` tool) answer from the keyword lane and say so; only a refusal of *us*
(a bad key) is an error. A ``write`` whose line landed exits 0 whatever the embedder
does. The embedder is a local stub of the OpenAI-compatible ``/embeddings`` wire format.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import AsyncExitStack
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from conftest import Paths, RunCli, cli_command, merged_env
from reverie.storage.embedders.base import text_hash

DIMS = 8
FACT = "The VPN endpoint is vpn.corp.example on port 1194."


@dataclass
class Server:
    url: str
    mode: str = "ok"  # ok | 503 | 401 | slow


def _vector(text: str) -> list[float]:
    vec = [0.1] * DIMS
    vec[int(text_hash(text), 16) % DIMS] = 1.0
    return vec


@pytest.fixture
def server() -> Iterator[Server]:
    state = Server(url="")

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            request = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
            status, body = 200, b""
            if state.mode == "slow":
                time.sleep(1.5)
            if state.mode in ("503", "401"):
                status, body = int(state.mode), b'{"error": "no"}'
            else:
                data = [
                    {"index": i, "embedding": _vector(t)} for i, t in enumerate(request["input"])
                ]
                body = json.dumps({"data": data}).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):
                pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    try:
        yield state
    finally:
        httpd.shutdown()
        httpd.server_close()


def _env(url: str) -> dict[str, str]:
    return {
        "REVERIE_EMBEDDER": "openai",
        "REVERIE_EMBED_BASE_URL": url,
        "REVERIE_EMBED_MODEL": "stub-embed",
        "REVERIE_EMBED_TIMEOUT": "0.5",
        "REVERIE_EMBED_ATTEMPTS": "1",
    }


def _refused_url() -> str:
    with ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler) as s:
        port = s.server_address[1]
    return f"http://127.0.0.1:{port}/v1"  # nothing listens there any more


def _indexed(run_cli: RunCli, server: Server) -> None:
    run_cli("init", embedder=None, env=_env(server.url))
    run_cli("write", FACT, embedder=None, env=_env(server.url))
    run_cli("index", embedder=None, env=_env(server.url))
    ok = json.loads(
        run_cli("search", "VPN endpoint", "--json", embedder=None, env=_env(server.url)).stdout
    )
    assert ok["mode"] == "hybrid" and ok["degraded"] is None  # vectors are in


@pytest.mark.parametrize("mode", ["refused", "503", "slow"])
def test_search_answers_keyword_only_when_the_embedder_is_down(
    run_cli: RunCli, server: Server, mode: str
) -> None:
    _indexed(run_cli, server)
    url = _refused_url() if mode == "refused" else server.url
    server.mode = mode
    env = _env(url)
    proc = run_cli("search", "VPN endpoint port", "--json", embedder=None, env=env, check=False)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["mode"] == "keyword-only" and "transient" in out["degraded"]
    assert any("vpn.corp.example" in h["snippet"] for h in out["hits"])
    text = run_cli("search", "VPN endpoint port", embedder=None, env=env, check=False)
    assert text.returncode == 0 and "keyword-only (embedding failed transiently" in text.stdout
    wrote = run_cli("write", "The proxy listens on 3128.", embedder=None, env=env, check=False)
    assert wrote.returncode == 0 and "embedder" in wrote.stdout  # landed, and says so


def test_a_refused_key_is_an_error_for_search_but_never_for_a_write(
    run_cli: RunCli, server: Server, paths: Paths
) -> None:
    _indexed(run_cli, server)
    server.mode = "401"
    env = _env(server.url)
    proc = run_cli("search", "VPN endpoint port", embedder=None, env=env, check=False)
    assert proc.returncode == 5 and "API key was refused" in proc.stderr
    assert "Traceback" not in proc.stderr
    wrote = run_cli("write", "The proxy listens on 3128.", embedder=None, env=env, check=False)
    assert wrote.returncode == 0, wrote.stderr
    journal = "".join(p.read_text() for p in (paths.workspace / "memory").glob("*.md"))
    assert journal.count("The proxy listens on 3128.") == 1


def test_mcp_search_is_no_error_when_the_embedder_is_unreachable(
    run_cli: RunCli, server: Server, paths: Paths, env: dict[str, str], tmp_path: Path
) -> None:
    _indexed(run_cli, server)
    args = cli_command(paths, "mcp", embedder=None)
    full_env = merged_env(env, _env(_refused_url()))
    params = StdioServerParameters(command=args[0], args=args[1:], env=full_env)

    async def main() -> Any:
        with anyio.fail_after(90):
            async with AsyncExitStack() as stack:
                errlog = stack.enter_context(open(tmp_path / "server.log", "w"))  # noqa: SIM115
                client = await stack.enter_async_context(
                    Client(stdio_client(params, errlog=errlog), read_timeout_seconds=60)
                )
                return await client.call_tool("memory_search", {"query": "VPN endpoint port"})

    result = anyio.run(main)
    assert not result.is_error, result.content[0].text
    assert "keyword-only" in result.content[0].text
    assert "transient" in result.structured_content["degraded"]
    assert any("vpn.corp.example" in h["snippet"] for h in result.structured_content["hits"])
