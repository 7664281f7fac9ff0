"""Building the server: one registrar per group of tools (and resources), listed in
:data:`REGISTRARS`. A new group of tools is a module with a ``register(server, tools)``
function (wrap each body in :meth:`MemoryTools.guarded`, give it an output schema with
``Annotated[CallToolResult, YourModel]``) and one line here."""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from io import TextIOWrapper
from typing import IO, Any, BinaryIO, cast

import anyio
from mcp.server import MCPServer
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp_types import jsonrpc_message_adapter

from ..about import version
from ..engine import Reverie
from ..tokens import mend_surrogates
from . import intent_tools, link_tools, memory_tools, request_tools, resources
from .checked import CheckedServer
from .schemas import INSTRUCTIONS
from .tools import MemoryTools

SERVER_NAME = "reverie"
log = logging.getLogger("reverie.mcp")

Registrar = Callable[[MCPServer, MemoryTools], None]
REGISTRARS: tuple[Registrar, ...] = (
    memory_tools.register,  # memory_search, memory_get, memory_write
    resources.register,  # MEMORY.md, USER.md, today's journal; the context prompt
    request_tools.register,  # memory_forget, memory_correct: requests the owner confirms
    intent_tools.register,  # intent_add (always pending), intent_list, intent_cancel
    link_tools.register,  # memory_link: the agent's note replaces its earlier one
)


def build_server(
    engine: Reverie, *, start: bool = True, tools: MemoryTools | None = None
) -> MCPServer:
    """The MCP server over ``engine``. ``start``: sync and warm in the background once the
    server runs (off for in-process tests that want to control it; a second session on
    the same server does not start it again). ``tools``: tool bodies made (and maybe
    started) by the caller: the daemon warms them before any client connects, the
    hosted server keeps one per tenant."""
    tools = tools or MemoryTools(engine)

    @asynccontextmanager
    async def lifespan(_: MCPServer) -> AsyncIterator[dict[str, Any]]:
        if start:
            tools.start_background()
        yield {}

    server: MCPServer = CheckedServer(  # the tools' arguments checked first
        SERVER_NAME,
        title="Reverie memory",
        instructions=INSTRUCTIONS,
        lifespan=lifespan,
        version=version(),
    )
    for register in REGISTRARS:
        register(server, tools)
    return server


def run_stdio(
    engine: Reverie,
    *,
    first: bytes = b"",
    reader: BinaryIO | None = None,
    writer: BinaryIO | None = None,
    send: Callable[[str], bool] | None = None,
) -> None:
    """Serve ``engine`` over stdin/stdout until the client closes the connection (the
    SDK's stdio transport, its input mended by :class:`_Mended`). ``reader`` and
    ``writer``: the protocol's streams when the caller claimed stdio itself, ``first``
    the line it read already, ``send`` whether an output line goes to the client (the
    ``initialize`` answered before the SDK loaded does not go twice:
    :mod:`reverie.cli.mcp_primed`)."""
    server = build_server(engine)

    async def session() -> None:
        if reader is None or writer is None:
            async with stdio_server() as (r, w):
                low = server._lowlevel_server  # what MCPServer.run_stdio_async runs
                await low.run(_Mended(r), w, low.create_initialization_options())
            return
        lines = _BoundedLines(reader, MAX_LINE_BYTES, first)
        await serve_lines(server, lines, _Sent(writer, send or (lambda _line: True)))

    anyio.run(session)


async def serve_lines(server: MCPServer, lines: Any, out: Any) -> None:
    """One session of ``server`` over text streams framed as stdio is: ``lines`` gives
    the client's lines (``readline``; an empty string ends the session), ``out`` takes
    the server's (``write``, ``flush``). Both are called on worker threads. The stdio
    server, the daemon's relay and the kept handshakes (:mod:`.handshakes`) run this."""
    text_in = anyio.wrap_file(cast(IO[str], lines))  # only readline is used
    async with stdio_server(text_in, anyio.wrap_file(cast(IO[str], out))) as (r, w):
        low = server._lowlevel_server  # what MCPServer.run_stdio_async runs
        await low.run(_Mended(r), w, low.create_initialization_options())


class _Sent:
    """The protocol's output, line by line, each passed only when ``send`` says so."""

    def __init__(self, raw: BinaryIO, send: Callable[[str], bool]) -> None:
        self.raw, self.send, self._part = raw, send, ""

    def write(self, text: str) -> int:
        self._part += text
        while "\n" in self._part:
            line, self._part = self._part.split("\n", 1)
            if self.send(line):
                self.raw.write(line.encode("utf-8") + b"\n")
        return len(text)

    def flush(self) -> None:
        self.raw.flush()


def _scrub(value: Any) -> Any:
    if isinstance(value, str):
        return mend_surrogates(value)
    if isinstance(value, list):
        return [_scrub(v) for v in value]
    if isinstance(value, dict):
        return {_scrub(k): _scrub(v) for k, v in value.items()}
    return value


def mend(item: Any) -> Any:
    """A line the transport could not parse only because it holds a lone surrogate (a
    JSON ``\\ud800`` escape: valid JSON, no valid Unicode) as the message it is, each
    lone surrogate read as U+FFFD; anything else as it came. Left as it came, the SDK
    drops the line and the request is never answered."""
    errors = getattr(item, "errors", None)
    if not isinstance(item, Exception) or errors is None:
        return item
    try:
        first = errors()[0]
        if first.get("type") != "json_invalid" or not isinstance(first.get("input"), str):
            return item
        raw = json.loads(first["input"])
        clean = _scrub(raw)
        if clean == raw:
            return item
        return SessionMessage(jsonrpc_message_adapter.validate_python(clean, by_name=False))
    except Exception:  # still not a message: as it came
        return item


class _Mended:
    """The transport's read stream with every item passed through :func:`mend`."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    async def __aenter__(self) -> _Mended:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> Any:
        return await self._inner.__aexit__(*exc)

    def __aiter__(self) -> _Mended:
        return self

    async def __anext__(self) -> Any:
        return mend(await self._inner.__anext__())

    async def receive(self) -> Any:
        return mend(await self._inner.receive())

    def __getattr__(self, name: str) -> Any:  # last_context, aclose, ...
        return getattr(self._inner, name)


MAX_LINE_BYTES = 16 * 1024 * 1024  # one JSON-RPC message; the HTTP routes' body limit


class _BoundedLines:
    """The client's lines as text, each read with a bound: a line over ``limit``
    bytes ends the connection (read as end of input) instead of being buffered whole;
    a relay client could otherwise grow the daemon by any size, for good."""

    def __init__(self, raw: BinaryIO, limit: int, first: bytes = b"") -> None:
        self.raw, self.limit, self._first = raw, limit, first

    def readline(self) -> str:
        line, self._first = (self._first or self.raw.readline(self.limit + 1)), b""
        if len(line) > self.limit:
            log.warning("an MCP client sent a line over %d bytes: connection closed", self.limit)
            return ""
        return line.decode("utf-8", "replace")

    def __iter__(self) -> _BoundedLines:
        return self

    def __next__(self) -> str:
        line = self.readline()
        if not line:
            raise StopIteration
        return line


def serve_connection(server: MCPServer, reader: BinaryIO, writer: BinaryIO) -> None:
    """Serve one client over a byte stream framed as stdio is (one JSON-RPC message a
    line), until the client closes it: the daemon's side of ``reverie mcp``'s relay
    (:mod:`reverie.cli.relay`), the same SDK code as :func:`run_stdio` on other streams.
    Blocks the calling thread, which runs the session's own event loop."""

    text_in = _BoundedLines(reader, MAX_LINE_BYTES)
    text_out = TextIOWrapper(writer, encoding="utf-8", write_through=True)

    try:
        anyio.run(serve_lines, server, text_in, text_out)
    finally:  # the connection is its owner's to close, not the wrapper's
        with contextlib.suppress(ValueError, OSError):
            text_out.detach()


__all__ = [
    "REGISTRARS",
    "SERVER_NAME",
    "Registrar",
    "build_server",
    "run_stdio",
    "serve_connection",
    "serve_lines",
]
