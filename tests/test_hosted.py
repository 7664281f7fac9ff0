"""The hosted server (issue 23): ``reverie mcp --http ADDR --tenants FILE`` on the
PostgreSQL index, through the official MCP client over HTTP. Two tenants hold the same
text; every tool, resource and prompt of one never sees, changes or counts the other's
rows or files, and a missing or wrong token gets 401 with nothing opened."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp_types import TextResourceContents

from conftest import base_env
from reverie import Reverie
from reverie.errors import ConfigError
from reverie.mcp_server.tenants import load_tenants, token_digest
from test_mcp_live import free_port, run, text_of

SHARED = (
    "- The zebra gate code is kept in the blue binder.\n"
    "- Keep the gateway on loopback. <!-- trigger: gateway setup -->\n"
)
OWN = {"a": "- Alpha owns the falcon.\n", "b": "- Beta owns the heron.\n"}
TOKENS = {"a": "token-of-a", "b": "token-of-b", "c": "token-of-c"}
TOOLS = {
    "memory_search",
    "memory_get",
    "memory_write",
    "memory_forget",
    "memory_correct",
    "memory_link",
    "intent_add",
    "intent_list",
    "intent_cancel",
}


def _env(root: Path, dsn: str) -> dict[str, str]:
    return {
        **base_env(root),
        "REVERIE_INDEX_BACKEND": "postgres",
        "REVERIE_INDEX_DSN": dsn,
    }


def _tenants_file(root: Path, ids: list[str]) -> Path:
    body = "".join(
        f'[{t}]\ntoken_sha256 = "{token_digest(TOKENS[t])}"\n'
        f'workspace = "{t}/ws"\nstate_dir = "{t}/state"\n\n'
        for t in ids
    )
    path = root / "tenants.toml"
    path.write_text(body, encoding="utf-8")
    return path


def owner(root: Path, dsn: str, tenant: str) -> Reverie:
    """The tenant's owner, in-process, on the same folders and rows as the server."""
    return Reverie.open(
        root / tenant / "ws",
        root / tenant / "state",
        environ={**_env(root, dsn), "REVERIE_INDEX_TENANT": tenant},
        embedder="fake",
    )


@pytest.fixture(scope="module")
def hosted(tmp_path_factory: pytest.TempPathFactory, pg_module_dsn: str) -> Iterator[Any]:
    root = tmp_path_factory.mktemp("hosted")
    for t in ("a", "b", "c"):
        (root / t / "ws").mkdir(parents=True)
        (root / t / "ws" / "MEMORY.md").write_text(SHARED + OWN.get(t, ""), encoding="utf-8")
    file = _tenants_file(root, ["a", "b", "c"])
    port = free_port()
    cmd = [sys.executable, "-m", "reverie.cli", "--embedder", "fake", "mcp", "--tenants"]
    proc = subprocess.Popen(
        [*cmd, str(file), "--http", f"127.0.0.1:{port}"],
        env=_env(root, pg_module_dsn),
        stdout=(root / "server.log").open("wb"),
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert proc.poll() is None, (root / "server.log").read_text()
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                break
        except OSError:
            time.sleep(0.1)
    yield root, f"http://127.0.0.1:{port}/mcp", pg_module_dsn
    proc.terminate()
    proc.wait(timeout=30)


def _client(url: str, tenant: str) -> AbstractAsyncContextManager[Any]:
    @asynccontextmanager
    async def transport() -> AsyncIterator[Any]:
        headers = {"Authorization": f"Bearer {TOKENS[tenant]}"}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=30) as http,
            streamable_http_client(url, http_client=http) as streams,
        ):
            yield streams

    return Client(transport(), read_timeout_seconds=30)


def _rows(dsn: str, table: str = "chunks") -> dict[str, int]:
    import psycopg

    with psycopg.connect(dsn) as conn:
        if conn.execute("SELECT to_regclass(%s)", (table,)).fetchone()[0] is None:
            return {}  # no tenant was ever opened
        got = conn.execute(f"SELECT tenant_id, count(*) FROM {table} GROUP BY 1").fetchall()
        return dict(got)


def _snippets(result: Any) -> list[str]:
    return [h["snippet"] for h in result.structured_content["hits"]]


def _resource(read: Any) -> str:
    return "".join(c.text for c in read.contents if isinstance(c, TextResourceContents))


def test_the_hosted_server_says_on_stderr_how_it_runs_the_tenants_jobs(hosted: Any) -> None:
    root, _, _ = hosted
    deadline = time.monotonic() + 20
    while "tenant jobs: 3 tenants, 2 at once" not in (root / "server.log").read_text():
        assert time.monotonic() < deadline, (root / "server.log").read_text()
        time.sleep(0.1)


def test_a_missing_or_wrong_token_gets_401_and_nothing_is_opened(hosted: Any) -> None:
    root, url, dsn = hosted
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    for headers in (
        {},
        {"Authorization": "Bearer not-a-token"},
        {"Authorization": f"Basic {TOKENS['c']}"},
        {"Authorization": "Bearer"},
        {"Authorization": f"Bearer {TOKENS['c']}x"},
    ):
        assert httpx2.post(url, json=ping, headers=headers).status_code == 401, headers
    assert not (root / "c" / "state").exists()  # tenant c was never opened
    assert "c" not in _rows(dsn)
    assert not (root / "c" / "ws" / "AGENTS.md").exists()


def test_every_tool_of_one_tenant_never_sees_changes_or_counts_the_other(hosted: Any) -> None:
    root, url, dsn = hosted
    ws = {t: root / t / "ws" for t in ("a", "b")}

    async def main() -> None:
        async with AsyncExitStack() as stack:
            a = await stack.enter_async_context(_client(url, "a"))
            b = await stack.enter_async_context(_client(url, "b"))
            assert {t.name for t in (await a.list_tools()).tools} == TOOLS  # all tried below

            # search: the shared line once, the other's own line never
            for me, other in ((a, "heron"), (b, "falcon")):
                same = _snippets(await me.call_tool("memory_search", {"query": "zebra gate code"}))
                assert [s for s in same if "zebra" in s] == [same[0]] and "zebra" in same[0]
                theirs = await me.call_tool("memory_search", {"query": f"owns the {other}"})
                assert not [s for s in _snippets(theirs) if other in s]
            rows = _rows(dsn)
            assert rows["a"] == rows["b"] > 0

            # get and resources: their own file; another tenant's path is refused
            got = text_of(await a.call_tool("memory_get", {"path": "MEMORY.md"}))
            assert "falcon" in got and "heron" not in got
            for path in ("../../b/ws/MEMORY.md", str(ws["b"] / "MEMORY.md")):
                refused = await a.call_tool("memory_get", {"path": path})
                assert refused.is_error and "heron" not in text_of(refused), path
            memory = _resource(await b.read_resource("memory://MEMORY.md"))
            assert "heron" in memory and "falcon" not in memory

            # write: lands in A's journal and rows only
            wrote = await a.call_tool("memory_write", {"text": "The kiwi orchard is in Otago."})
            assert not wrote.is_error, text_of(wrote)
            assert "kiwi orchard" in _resource(await a.read_resource("memory://journal/today"))
            assert "kiwi" not in _resource(await b.read_resource("memory://journal/today"))
            kiwi = _snippets(await b.call_tool("memory_search", {"query": "kiwi orchard Otago"}))
            assert not [s for s in kiwi if "kiwi" in s]
            assert _rows(dsn)["b"] == rows["b"] and _rows(dsn)["a"] > rows["a"]
            assert not list((ws["b"] / "memory").glob("*.md"))
            # link: only lines of the tenant's own journals, checked (one day: refused)
            today = wrote.structured_content["path"]
            linked = await a.call_tool(
                "memory_link", {"newer": f"{today}#L3", "older": f"{today}#L3", "subject": "kiwi"}
            )
            assert linked.is_error and "earlier day" in text_of(linked)
            assert not list((ws["b"] / "memory").glob("*.md"))

            # triggers and context: A's owner drops the trigger; B's still fires, once
            memory_a = ws["a"] / "MEMORY.md"
            memory_a.write_text(memory_a.read_text().replace("Keep the gateway", "Was"))

            async def context(me: Any) -> str:
                got = await me.get_prompt("context", {"message": "how is the gateway setup?"})
                return "".join(m.content.text for m in got.messages)

            edited = time.monotonic()  # a hand edit is seen within the freshness interval
            while "Keep the gateway" in await context(a) and time.monotonic() - edited < 10:
                await anyio.sleep(0.2)
            assert "Keep the gateway" not in await context(a)
            # B's bootstrap and its trigger block each hold the line once
            assert (await context(b)).count("Keep the gateway on loopback") == 2

            # pending requests and intents: filed, listed and cancelled per tenant
            asked = await a.call_tool("memory_forget", {"text": "zebra gate code"})
            fixed = await a.call_tool("memory_correct", {"old_text": "falcon", "new_text": "eagle"})
            assert not asked.is_error and not fixed.is_error
            added = await a.call_tool("intent_add", {"text": "water the kiwi", "on": "kiwi"})
            assert not added.is_error, text_of(added)
            intent_id = added.structured_content["id"]
            listed_b = await b.call_tool("intent_list", {"all": True})
            assert listed_b.structured_content["intents"] == []
            cancel = await b.call_tool("intent_cancel", {"intent_id": intent_id})
            assert cancel.is_error
            listed_a = await a.call_tool("intent_list", {"all": True})
            assert [i["id"] for i in listed_a.structured_content["intents"]] == [intent_id]

    run(main)
    for tenant, n in (("a", 3), ("b", 0)):  # forget, correct, the intent
        with owner(root, dsn, tenant) as engine:
            assert len(engine.curation.pending.requests()) == n, tenant
    # the intents and requests are the tenant's rows in the database, not state files
    assert _rows(dsn, "requests") == {"a": 2} and _rows(dsn, "intents") == {"a": 1}
    for tenant in ("a", "b"):
        state = {p.name for p in (root / tenant / "state").rglob("*")}
        assert not {"intents.sqlite", "pending.json"} & state, tenant
    with owner(root, dsn, "a") as engine:  # A's owner confirms the forget: B keeps its copy
        (forget,) = [r for r in engine.curation.pending.requests() if r.kind == "forget"]
        engine.curation.pending.confirm(forget.id)

    async def after() -> None:
        async with _client(url, "a") as a, _client(url, "b") as b:
            gone = _snippets(await a.call_tool("memory_search", {"query": "zebra gate code"}))
            kept = _snippets(await b.call_tool("memory_search", {"query": "zebra gate code"}))
            assert not [s for s in gone if "zebra" in s]
            assert [s for s in kept if "zebra" in s]

    run(after)
    assert "zebra" in (ws["b"] / "MEMORY.md").read_text()


def test_a_session_of_one_tenant_is_unknown_to_another_tenants_token(hosted: Any) -> None:
    _, url, _ = hosted
    accept = {"Accept": "application/json, text/event-stream"}
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "probe", "version": "1"},
        },
    }
    b = {**accept, "Authorization": f"Bearer {TOKENS['b']}"}
    opened = httpx2.post(url, json=init, headers=b)
    session = opened.headers["mcp-session-id"]
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    a = {**accept, "Authorization": f"Bearer {TOKENS['a']}", "mcp-session-id": session}
    assert httpx2.post(url, json=call, headers=a).status_code == 404


@pytest.mark.parametrize(
    ("body", "error"),
    [
        ('[a]\ntoken_sha256 = "{d}"\nworkspace = "w"\n', r"tenants.toml:1: .*state_dir is missing"),
        ('[a]\ntoken_sha256 = "abc"\nworkspace = "w"\nstate_dir = "s"\n', "64 hex digits"),
        ('["a b"]\ntoken_sha256 = "{d}"\nworkspace = "w"\nstate_dir = "s"\n', "tenant id"),
        ('[a]\ntoken = "x"\ntoken_sha256 = "{d}"\nworkspace = "w"\nstate_dir = "s"\n', "unknown"),
        (
            '[a]\ntoken_sha256 = "{d}"\nworkspace = "w"\nstate_dir = "s"\n\n'
            '[b]\ntoken_sha256 = "{d}"\nworkspace = "w2"\nstate_dir = "s2"\n',
            r"tenants.toml:5: .*same token as tenant 'a'",
        ),
        (
            '[a]\ntoken_sha256 = "{d}"\nworkspace = "w"\nstate_dir = "s"\n\n'
            '[b]\ntoken_sha256 = "{e}"\nworkspace = "w/inner"\nstate_dir = "s2"\n',
            "overlaps",
        ),
        ('[a]\ntoken_sha256 = "{d}"\nworkspace = "w"\nstate_dir = "w/state"\n', "overlap"),
        ("", "no tenants"),
        ("[a\n", "tenants.toml"),
    ],
)
def test_a_bad_tenants_file_is_refused_naming_file_and_line(
    tmp_path: Path, body: str, error: str
) -> None:
    path = tmp_path / "tenants.toml"
    path.write_text(body.format(d=token_digest("one"), e=token_digest("two")), encoding="utf-8")
    with pytest.raises(ConfigError, match=error):
        load_tenants(path)


def test_a_tenants_file_maps_each_token_to_its_tenant_and_folders(tmp_path: Path) -> None:
    tenants = load_tenants(_tenants_file(tmp_path, ["a", "b"]))
    a = tenants.for_token(b"token-of-a")
    assert a is not None and a.id == "a" and a.workspace == (tmp_path / "a" / "ws").resolve()
    assert tenants.for_token(b"token-of-b").id == "b"  # type: ignore[union-attr]
    assert tenants.for_token(b"token-of-c") is None and tenants.for_token(b"") is None


def test_the_tenants_flag_needs_http_and_refuses_the_single_tenant_flags(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from reverie.cli.app import cli

    file = str(_tenants_file(tmp_path, ["a"]))
    env = base_env(tmp_path)
    runner = CliRunner()
    alone = runner.invoke(cli, ["mcp", "--tenants", file], env=env)
    assert alone.exit_code == 2 and "--http" in alone.output
    for extra in (["--workspace", str(tmp_path / "w")], []):
        mixed = runner.invoke(
            cli,
            [*extra, "mcp", "--tenants", file, "--http", "127.0.0.1:9"]
            + ([] if extra else ["--token", "t"]),
            env=env,
        )
        assert mixed.exit_code == 2 and "drop --token" in mixed.output, mixed.output
    assert not (tmp_path / "a").exists()  # nothing was opened


def test_at_most_max_open_tenants_stay_open_and_a_busy_one_is_never_closed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import anyio

    from reverie.mcp_server.hosted import HostedApp, tenant_opener

    tenants = load_tenants(_tenants_file(tmp_path, ["a", "b", "c"]))
    closed: list[str] = []
    opener = tenant_opener({"embedder": "none"})

    monkeypatch.setenv("REVERIE_CONFIG", str(tmp_path / "none.toml"))

    def open_engine(tenant: Any) -> Reverie:
        engine = opener(tenant)
        real = engine.close
        engine.close = lambda: (closed.append(tenant.id), real())[1]  # type: ignore[method-assign]
        return engine

    app = HostedApp(tenants, open_engine, host="127.0.0.1", path="/mcp", max_open=1)
    started, stop = anyio.Event(), anyio.Event()
    messages = iter([{"type": "lifespan.startup"}, {"type": "lifespan.shutdown"}])

    async def receive() -> dict[str, str]:
        message = next(messages)
        if message["type"] == "lifespan.shutdown":
            await stop.wait()
        return message

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "lifespan.startup.complete":
            started.set()

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            tg.start_soon(app, {"type": "lifespan"}, receive, send)
            await started.wait()
            a = await app._entry(tenants.get("a"))
            assert a is not None and (tmp_path / "a" / "ws" / "AGENTS.md").exists()  # init
            a.in_flight -= 1  # its request ended
            b = await app._entry(tenants.get("b"))  # a is idle: closed
            assert app.open_tenants() == ["b"] and closed == ["a"]
            c = await app._entry(tenants.get("c"))  # b is busy: stays open
            assert app.open_tenants() == ["b", "c"] and closed == ["a"]
            assert b is not None and c is not None
            stop.set()
        assert sorted(closed) == ["a", "b", "c"]  # the shutdown closes the rest

    run(main)
