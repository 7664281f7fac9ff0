"""MCP resources (``MEMORY.md``, ``USER.md``, today's journal) and the ``context``
prompt, for clients that have no hooks to inject memory with.

Resources are read like ``memory_get`` reads (the workspace's symlink policy, at most
its line cap, ``[more available from line N]`` when the file goes on), and rendered for
a model: runs of untrusted or system lines come inside their frames.
"""

from __future__ import annotations

from typing import Annotated

from mcp.server import MCPServer
from pydantic import Field

from ..errors import ReverieError
from .tools import MemoryTools

CONTEXT_PROMPT = (
    "Memory context for one message: the bootstrap (AGENTS.md, MEMORY.md, USER.md) and the "
    "notes whose triggers the message fires. Use it in clients without hooks: put it before "
    "the message."
)


def _read(tools: MemoryTools, path: str) -> str:
    def body() -> str:
        return tools.engine.get(path, from_line=1).render()

    try:
        with tools.lock:
            tools.refresh()
            return body()
    except FileNotFoundError:
        return f"({path} does not exist yet)"
    except ReverieError as exc:
        return f"({path} cannot be read: {exc})"


def register(server: MCPServer, tools: MemoryTools) -> None:
    @server.resource(
        "memory://MEMORY.md",
        name="MEMORY.md",
        title="Curated long-term memory",
        description="MEMORY.md: durable facts, decisions and preferences (owner-curated).",
        mime_type="text/markdown",
    )
    def memory_md() -> str:
        return _read(tools, "MEMORY.md")

    @server.resource(
        "memory://USER.md",
        name="USER.md",
        title="About the user",
        description="USER.md: who the user is and how they like to work.",
        mime_type="text/markdown",
    )
    def user_md() -> str:
        return _read(tools, "USER.md")

    @server.resource(
        "memory://journal/today",
        name="today's journal",
        title="Today's journal",
        description="memory/YYYY-MM-DD.md for today: what was noted so far today.",
        mime_type="text/markdown",
    )
    def journal_today() -> str:
        day = tools.engine.clock.today().isoformat()
        return _read(tools, f"memory/{day}.md")

    @server.prompt(name="context", title="Memory context", description=CONTEXT_PROMPT)
    def context(
        message: Annotated[str, Field(description="The user's message.")],
    ) -> str:
        with tools.lock:
            tools.refresh()
            ctx = tools.engine.context(message)
        memory = ctx.text
        return f"{memory}\n\n{message}" if memory else message


__all__ = ["register"]
