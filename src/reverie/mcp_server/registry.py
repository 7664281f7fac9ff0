"""Building the server: one registrar per group of tools (and resources), listed in
:data:`REGISTRARS`. A new group of tools is a module with a ``register(server, tools)``
function (wrap each body in :meth:`MemoryTools.guarded`, give it an output schema with
``Annotated[CallToolResult, YourModel]``) and one line here."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from mcp.server import MCPServer

from ..about import version
from ..engine import Reverie
from . import intent_tools, memory_tools, request_tools, resources
from .schemas import INSTRUCTIONS
from .tools import MemoryTools

SERVER_NAME = "reverie"

Registrar = Callable[[MCPServer, MemoryTools], None]
REGISTRARS: tuple[Registrar, ...] = (
    memory_tools.register,  # memory_search, memory_get, memory_write
    resources.register,  # MEMORY.md, USER.md, today's journal; the context prompt
    request_tools.register,  # memory_forget, memory_correct: requests the owner confirms
    intent_tools.register,  # intent_add (always pending), intent_list, intent_cancel
)


def build_server(
    engine: Reverie, *, start: bool = True, tools: MemoryTools | None = None
) -> MCPServer:
    """The MCP server over ``engine``. ``start``: sync and warm in the background once the
    server runs (off for in-process tests that want to control it). ``tools``: the tool
    bodies over ``engine`` when the caller keeps them (the hosted server does)."""
    tools = tools or MemoryTools(engine)

    @asynccontextmanager
    async def lifespan(_: MCPServer) -> AsyncIterator[dict[str, Any]]:
        if start:
            tools.start_background()
        yield {}

    server: MCPServer = MCPServer(
        SERVER_NAME,
        title="Reverie memory",
        instructions=INSTRUCTIONS,
        lifespan=lifespan,
        version=version(),
    )
    for register in REGISTRARS:
        register(server, tools)
    return server


def run_stdio(engine: Reverie) -> None:
    """Serve ``engine`` over stdin/stdout until the client closes the connection."""
    build_server(engine).run("stdio")


__all__ = ["REGISTRARS", "SERVER_NAME", "Registrar", "build_server", "run_stdio"]
