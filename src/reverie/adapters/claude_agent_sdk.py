"""Claude Agent SDK: :class:`ReverieHooks`, the SDK's hook callbacks and an in-process
MCP server with the memory tools (as ``claude-agent-sdk`` 0.2 defines them).

    from claude_agent_sdk import ClaudeAgentOptions, query
    from reverie.adapters.claude_agent_sdk import ReverieHooks

    memory = ReverieHooks(AsyncReverie.open(...))
    options = ClaudeAgentOptions(**memory.options())   # hooks, mcp_servers, allowed_tools
    async for message in query(prompt="...", options=options): ...

The hooks run exactly what ``reverie hook EVENT`` runs for Claude Code
(:func:`reverie.integrations.hooks.handle`): ``SessionStart`` injects the bootstrap,
``UserPromptSubmit`` the turn's memory blocks for the payload's ``cwd``, ``PreCompact``
and ``SessionEnd`` mirror the transcript into a session and ingest it (provenance as
for Claude Code: tool results ``untrusted``, our injected context ``recalled``). Like
the command, a hook never breaks the agent: a failure gives ``{}`` and a line in
``<state dir>/hooks.log``. The SDK's Python types list ``UserPromptSubmit`` and
``PreCompact``; ``SessionStart``/``SessionEnd`` are registered too (the CLI dispatches
them by name), and the bootstrap is also offered as a system-prompt append
(:meth:`ReverieHooks.system_prompt`) for a CLI that does not call them.
"""

from __future__ import annotations

from typing import Any

from claude_agent_sdk import HookMatcher, SdkMcpTool, create_sdk_mcp_server, tool

from ..aio import AsyncReverie
from ..integrations.hooks import BOOTSTRAP_PREFACE, EVENTS, handle, log_failure
from .common import GET_DESCRIPTION, SEARCH_DESCRIPTION, WRITE_DESCRIPTION, MemoryTools

SERVER = "reverie"
TOOL_NAMES = ("memory_search", "memory_get", "memory_write")
_WRITERS = frozenset({"PreCompact", "SessionEnd"})  # mirror a transcript: the writer lane


def _text(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}]}


class ReverieHooks:
    """The Claude Agent SDK's hooks and tools over one agent's memory."""

    def __init__(self, memory: AsyncReverie, *, timeout: float = 30.0) -> None:
        self.memory = memory
        self.timeout = timeout  # the SDK's per-matcher timeout (seconds)
        self._tools = MemoryTools(memory)

    async def on_event(self, event: str, payload: dict[str, Any]) -> dict[str, Any]:
        """One hook (``event``: ``session-start``, ``user-prompt-submit``,
        ``pre-compact``, ``session-end``), fail-open."""
        mem = self.memory.memory
        name = EVENTS[event]
        lane = self.memory.in_writer if name in _WRITERS else self.memory.in_reader
        try:
            run = await lane(handle, event, payload, lambda: mem)
        except Exception as exc:  # P5: memory never blocks the agent
            log_failure(mem.workspace.state_dir, event, exc)
            return {}
        return run.output or {}

    def _callback(self, event: str) -> Any:
        async def callback(data: Any, tool_use_id: str | None, context: Any) -> dict[str, Any]:
            return await self.on_event(event, dict(data))

        callback.__name__ = f"reverie_{event.replace('-', '_')}"
        return callback

    def hooks(self) -> dict[Any, list[HookMatcher]]:
        """``ClaudeAgentOptions.hooks``: the four events, each bound to its hook."""
        return {
            name: [HookMatcher(hooks=[self._callback(event)], timeout=self.timeout)]
            for event, name in EVENTS.items()
        }

    def tools(self) -> list[SdkMcpTool[Any]]:
        t = self._tools

        @tool("memory_search", SEARCH_DESCRIPTION, {"query": str, "max_results": int})
        async def memory_search(args: dict[str, Any]) -> dict[str, Any]:
            return _text(await t.search(str(args.get("query", "")), args.get("max_results")))

        @tool("memory_get", GET_DESCRIPTION, {"path": str, "from_line": int, "lines": int})
        async def memory_get(args: dict[str, Any]) -> dict[str, Any]:
            path, start = str(args.get("path", "")), int(args.get("from_line") or 1)
            return _text(await t.get(path, start, int(args.get("lines") or 120)))

        @tool("memory_write", WRITE_DESCRIPTION, {"text": str, "source": str})
        async def memory_write(args: dict[str, Any]) -> dict[str, Any]:
            return _text(
                await t.write(str(args.get("text", "")), str(args.get("source") or "agent"))
            )

        return [memory_search, memory_get, memory_write]

    def mcp_server(self) -> Any:
        """The in-process MCP server (``ClaudeAgentOptions.mcp_servers[SERVER]``)."""
        return create_sdk_mcp_server(name=SERVER, tools=self.tools())

    async def system_prompt(self) -> dict[str, Any]:
        """The bootstrap appended to Claude Code's preset system prompt."""
        boot = await self.memory.bootstrap()
        append = f"{BOOTSTRAP_PREFACE}\n\n{boot.text}" if boot.text.strip() else ""
        return {"type": "preset", "preset": "claude_code", "append": append}

    def options(self) -> dict[str, Any]:
        """Keyword arguments for ``ClaudeAgentOptions``: the hooks, the server, its tools."""
        return {
            "hooks": self.hooks(),
            "mcp_servers": {SERVER: self.mcp_server()},
            "allowed_tools": [f"mcp__{SERVER}__{name}" for name in TOOL_NAMES],
        }


__all__ = ["SERVER", "TOOL_NAMES", "ReverieHooks"]
