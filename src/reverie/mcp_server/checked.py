"""The MCP server, its tools' arguments checked as every door checks them.

The memory tools (``memory_search``, ``memory_get``, ``memory_write``) are listed with
the input schemas of their one definition (:mod:`reverie.provenance.agent_tools`), and
a call's arguments are read by it: an argument a tool does not take is refused, a bad
value is refused in a sentence, never a validator's dump. The other tools (requests,
intents) refuse arguments their schema does not list too, and a value their parameters
do not accept is said in a sentence the same way.
"""

from __future__ import annotations

from typing import Any

from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, TextContent
from mcp_types import Tool as MCPTool
from pydantic import ValidationError

from ..errors import ToolArgumentError
from ..provenance.agent_tools import TOOLS


def _refused(message: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=message)], is_error=True)


def _sentences(tool: str, exc: ValidationError) -> str:
    """A validator's errors as sentences: ``intent_add: when: Input should be ...``."""
    said = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err.get("loc", ()) if p != tool) or "arguments"
        said.append(f"{where}: {err.get('msg', 'is not valid')}")
    return f"{tool}: " + "; ".join(said)


class CheckedServer(MCPServer):
    """:class:`MCPServer` whose tools' arguments are checked first (module doc)."""

    async def list_tools(self) -> list[MCPTool]:
        tools = await super().list_tools()
        out = []
        for tool in tools:
            spec = TOOLS.get(tool.name)
            schema = spec.schema() if spec else {**tool.input_schema, "additionalProperties": False}
            out.append(tool.model_copy(update={"input_schema": schema}))
        return out

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        spec = TOOLS.get(name)
        try:
            if spec is not None:
                arguments = spec.check(arguments)
            else:
                await self._known_only(name, arguments)
        except ToolArgumentError as exc:
            return _refused(str(exc))
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                return _refused(_sentences(name, exc.__cause__))
            raise

    async def _known_only(self, name: str, arguments: dict[str, Any]) -> None:
        listed = {t.name: t for t in await super().list_tools()}
        if name not in listed:
            return  # the SDK says the tool is unknown
        known = list((listed[name].input_schema or {}).get("properties") or {})
        unknown = sorted(set(arguments) - set(known))
        if unknown:
            names = ", ".join(repr(u) for u in unknown)
            raise ToolArgumentError(f"{name} does not take {names}; it takes {', '.join(known)}")


__all__ = ["CheckedServer"]
