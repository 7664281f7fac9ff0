"""The hosted server (issue 23): ``reverie mcp --http ADDR --tenants FILE`` serves many
tenants from one process, each with its own workspace, state folder and ``tenant_id``
in the index (:mod:`.tenants`).

Every HTTP request must carry ``Authorization: Bearer <token>``; the token alone picks
the tenant. A missing or unknown token gets 401 before anything is opened or read. The
tenant's own MCP server (the same tools, resources and prompt as ``reverie mcp``) then
answers it: one engine per tenant, opened on its first request (an empty workspace
folder is initialised) and kept open, at most ``max_open`` of them; past that the
least recently used idle tenant is closed (its MCP sessions end: a client starts a new
one, as the protocol says it does after a 404). A tenant's server never holds another
tenant's engine, so no token reaches another tenant's rows or files.

The client's ``cwd`` is ignored here: it names a folder on the client's machine, and
resolving it on the server would read folders outside the tenant's own.
"""

from __future__ import annotations

import json
import logging
from collections import OrderedDict
from collections.abc import Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from typing import Any, Protocol

import anyio
import anyio.abc

from ..engine import Reverie
from .registry import build_server
from .tenants import Tenant, Tenants
from .tools import MemoryTools

log = logging.getLogger("reverie.mcp.hosted")

Scope = dict[str, Any]
OpenEngine = Callable[[Tenant], Reverie]


class Background(Protocol):
    """Work run beside the server while it serves (the tenants' daemon jobs)."""

    def start(self) -> None: ...

    def stop(self) -> None: ...


BackgroundFor = Callable[[Tenants, OpenEngine], Background]


@dataclass(eq=False)
class _Open:
    """One tenant's engine and MCP app, served while ``stop`` is unset."""

    tenant: Tenant
    engine: Reverie
    tools: MemoryTools
    app: Any
    stop: anyio.Event = field(default_factory=anyio.Event)
    stopped: anyio.Event = field(default_factory=anyio.Event)
    in_flight: int = 0


async def _refuse(send: Any, status: int, message: str) -> None:
    headers = [(b"content-type", b"application/json")]
    if status == 401:
        headers.append((b"www-authenticate", b"Bearer"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": json.dumps({"error": message}).encode()})


def _bearer(scope: Scope) -> bytes:
    given = dict(scope.get("headers") or []).get(b"authorization", b"")
    scheme, _, token = given.partition(b" ")
    return token.strip() if scheme.lower() == b"bearer" else b""


class HostedApp:
    """ASGI app: the bearer token picks the tenant, whose own MCP app answers."""

    def __init__(
        self,
        tenants: Tenants,
        open_engine: OpenEngine,
        *,
        host: str,
        path: str,
        max_open: int,
        background: Background | None = None,
    ) -> None:
        self.tenants = tenants
        self._open_engine = open_engine
        self._host = host
        self._path = path
        self.max_open = max(1, max_open)
        self._open: OrderedDict[str, _Open] = OrderedDict()  # least recently used first
        self._locks: dict[str, anyio.Lock] = {}
        self._tg: anyio.abc.TaskGroup | None = None
        self._background = background

    def open_tenants(self) -> list[str]:
        return list(self._open)

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        tenant = self.tenants.for_token(_bearer(scope))
        if tenant is None:  # before anything of any tenant is opened or read
            await _refuse(send, 401, "a valid bearer token is required")
            return
        entry = await self._entry(tenant)
        if entry is None:
            await _refuse(send, 503, f"tenant {tenant.id!r} cannot be opened; see the server log")
            return
        try:  # _entry counted this request in
            await entry.app(scope, receive, send)
        finally:
            entry.in_flight -= 1

    async def _lifespan(self, receive: Any, send: Any) -> None:
        await receive()  # lifespan.startup
        async with anyio.create_task_group() as tg:
            self._tg = tg
            if self._background is not None:
                await anyio.to_thread.run_sync(self._background.start)
            await send({"type": "lifespan.startup.complete"})
            await receive()  # lifespan.shutdown
            if self._background is not None:  # running jobs finish first
                await anyio.to_thread.run_sync(self._background.stop)
            for tenant_id in list(self._open):
                await self._close(tenant_id)
            self._tg = None
        await send({"type": "lifespan.shutdown.complete"})

    async def _entry(self, tenant: Tenant) -> _Open | None:
        """The tenant's open app with this request counted in (never evicted while it
        serves one), opened on first use."""
        entry = self._open.get(tenant.id)
        if entry is not None:
            entry.in_flight += 1
        else:
            lock = self._locks.setdefault(tenant.id, anyio.Lock())
            async with lock:
                entry = self._open.get(tenant.id) or await self._start(tenant)
                if entry is None:
                    return None
                entry.in_flight += 1
            await self._evict(keep=tenant.id)  # outside the lock: it takes the others'
        if tenant.id in self._open:
            self._open.move_to_end(tenant.id)
        return entry

    async def _start(self, tenant: Tenant) -> _Open | None:
        if self._tg is None:
            raise RuntimeError("the hosted app serves only inside its ASGI lifespan")
        try:
            engine = await anyio.to_thread.run_sync(self._open_engine, tenant)
        except Exception as exc:
            log.error("opening tenant %r failed: %s: %s", tenant.id, type(exc).__name__, exc)
            return None
        tools = MemoryTools(engine, hosted=True)
        server = build_server(engine, tools=tools)
        app = server.streamable_http_app(streamable_http_path=self._path, host=self._host)
        entry = _Open(tenant, engine, tools, app)
        ready = anyio.Event()

        async def serve() -> None:
            try:
                async with AsyncExitStack() as stack:
                    await stack.enter_async_context(server.session_manager.run())
                    ready.set()
                    await entry.stop.wait()
            finally:
                ready.set()
                entry.stopped.set()

        self._tg.start_soon(serve)
        await ready.wait()
        self._open[tenant.id] = entry
        log.info("tenant %r opened (%d open)", tenant.id, len(self._open))
        return entry

    async def _evict(self, keep: str) -> None:
        """Close the least recently used idle tenants past ``max_open`` (not ``keep``)."""
        idle = [t for t, e in self._open.items() if e.in_flight == 0 and t != keep]
        for tenant_id in idle[: max(0, len(self._open) - self.max_open)]:
            await self._close(tenant_id)

    async def _close(self, tenant_id: str) -> None:
        async with self._locks.setdefault(tenant_id, anyio.Lock()):
            entry = self._open.pop(tenant_id, None)
            if entry is not None:
                await self._stop(entry)

    async def _stop(self, entry: _Open) -> None:
        tenant_id = entry.tenant.id
        entry.stop.set()
        await entry.stopped.wait()

        def close() -> None:
            with entry.tools.lock:  # after a tool call in flight (or the start-up sync)
                entry.engine.close()

        await anyio.to_thread.run_sync(close)
        log.info("tenant %r closed (%d open)", tenant_id, len(self._open))


def tenant_opener(flags: dict[str, Any]) -> OpenEngine:
    """Open a tenant's engine with the server's settings, its own folders and its id as
    ``index_tenant``; a missing workspace is initialised (never overwriting a file)."""

    def open_engine(tenant: Tenant) -> Reverie:
        given = {k: v for k, v in flags.items() if k not in ("workspace", "state_dir")}
        engine = Reverie.open(tenant.workspace, tenant.state_dir, **given, index_tenant=tenant.id)
        if not tenant.workspace.is_dir():
            engine.init()
        return engine

    return open_engine


__all__ = ["Background", "BackgroundFor", "HostedApp", "OpenEngine", "tenant_opener"]
