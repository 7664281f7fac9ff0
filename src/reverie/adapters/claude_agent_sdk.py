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
(:meth:`ReverieHooks.system_prompt`) for a CLI that does not call them. ``Stop`` (the
end of each turn) mirrors the transcript so far as ``PreCompact`` does, so a
conversation is recorded turn by turn even when the SDK closes its control stream
before ``SessionEnd``'s hook has run (``query()`` and ``ClaudeSDKClient`` do).
``PostToolUse`` applies the taint rule: after another tool's output, the session's
``memory_write`` notes are untrusted until its user speaks again.
"""

from __future__ import annotations

from typing import Any

from claude_agent_sdk import HookMatcher, SdkMcpTool, create_sdk_mcp_server, tool

from ..aio import AsyncReverie
from ..integrations.hooks import BOOTSTRAP_PREFACE, EVENTS, handle, log_failure
from ..provenance.agent_tools import TOOLS, ToolSpec
from .common import MemoryTools

SERVER = "reverie"
TOOL_NAMES = tuple(TOOLS)
_WRITERS = frozenset({"PreCompact", "SessionEnd"})  # mirror a transcript: the writer lane


def _text(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}]}


class ReverieHooks:
    """The Claude Agent SDK's hooks and tools over one agent's memory."""

    def __init__(self, memory: AsyncReverie, *, timeout: float = 30.0) -> None:
        self.memory = memory
        self.timeout = timeout  # the SDK's per-matcher timeout (seconds)
        self._tools = MemoryTools(memory)
        self._tainted: set[str] = set()  # sessions whose turn saw another tool's output

    async def on_event(self, event: str, payload: dict[str, Any]) -> dict[str, Any]:
        """One hook (``event``: ``session-start``, ``user-prompt-submit``,
        ``pre-compact``, ``session-end``), fail-open."""
        mem = self.memory.memory
        name = EVENTS[event]
        if name == "UserPromptSubmit":  # the user speaks again: the session's taint ends
            self._tainted.discard(str(payload.get("session_id") or ""))
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
        """``ClaudeAgentOptions.hooks``: the four events, each bound to its hook;
        ``PostToolUse``, which taints the session's writes; ``Stop``, which mirrors the
        turns so far."""
        out: dict[Any, list[HookMatcher]] = {
            name: [HookMatcher(hooks=[self._callback(event)], timeout=self.timeout)]
            for event, name in EVENTS.items()
        }

        async def after(data: Any, tool_use_id: str | None, context: Any) -> dict[str, Any]:
            return await self.after_tool(dict(data))

        hook: Any = after  # (the SDK types each event's input; this one reads a dict)
        out["PostToolUse"] = [HookMatcher(hooks=[hook], timeout=self.timeout)]
        # each finished turn mirrors the transcript so far (as PreCompact does): the SDK
        # may close its control stream before SessionEnd's hook has run
        out["Stop"] = [HookMatcher(hooks=[self._callback("pre-compact")], timeout=self.timeout)]
        return out

    def tools(self) -> list[SdkMcpTool[Any]]:
        """The memory tools as their one definition gives them (the same names,
        descriptions and schemas as every door), each call read by it; a write is
        untrusted while a session's turn has seen another tool's output."""

        def bound(spec: ToolSpec) -> SdkMcpTool[Any]:
            async def run(args: dict[str, Any]) -> dict[str, Any]:
                tainted = bool(self._tainted)  # any session: fails closed
                return _text(await self._tools.call(spec.name, args, tainted=tainted))

            return tool(spec.name, spec.description, spec.schema())(run)

        return [bound(spec) for spec in TOOLS.values()]

    async def after_tool(self, payload: dict[str, Any]) -> dict[str, Any]:
        """``PostToolUse``: another tool's output reached the model, so the session's
        writes are untrusted until its user speaks again (the taint rule)."""
        name = str(payload.get("tool_name") or "")
        if name not in {f"mcp__{SERVER}__{n}" for n in TOOL_NAMES}:
            self._tainted.add(str(payload.get("session_id") or ""))
        return {}

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
