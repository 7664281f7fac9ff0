"""The memory tools: ``memory_search``, ``memory_get``, ``memory_write``."""

from __future__ import annotations

from typing import Annotated

from mcp.server import MCPServer
from mcp_types import CallToolResult, ToolAnnotations

from ..provenance.agent_tools import GET, SEARCH, WRITE, ToolSpec
from .schemas import (
    BudgetTokens,
    Cwd,
    Explain,
    FromLine,
    GetOut,
    Lines,
    MaxResults,
    Projects,
    Query,
    RelPath,
    SearchOut,
    WriteOut,
    WriteSource,
    WriteText,
)
from .tools import MemoryTools


def annotations_of(spec: ToolSpec) -> ToolAnnotations:
    """A memory tool's annotations: it never reaches outside this machine; reads only
    the workspace, or appends to today's journal."""
    return ToolAnnotations(
        title=spec.title,
        read_only_hint=spec.read_only,
        destructive_hint=False,
        idempotent_hint=spec.idempotent,
        open_world_hint=False,
    )


def register(server: MCPServer, tools: MemoryTools) -> None:
    def memory_search(
        query: Query,
        max_results: MaxResults = 6,
        projects: Projects = (),
        budget_tokens: BudgetTokens = None,
        explain: Explain = False,
        cwd: Cwd = None,
    ) -> Annotated[CallToolResult, SearchOut]:
        return tools.search(query, max_results, projects, budget_tokens, explain, cwd)

    def memory_get(
        path: RelPath, from_line: FromLine = 1, lines: Lines = 120
    ) -> Annotated[CallToolResult, GetOut]:
        return tools.get(path, from_line, lines)

    def memory_write(
        text: WriteText, source: WriteSource = "agent", cwd: Cwd = None
    ) -> Annotated[CallToolResult, WriteOut]:
        return tools.write(text, source, cwd)

    for fn, spec in ((memory_search, SEARCH), (memory_get, GET), (memory_write, WRITE)):
        # one definition (reverie.provenance.agent_tools): the listed schema is its too
        server.add_tool(
            fn, title=spec.title, description=spec.description, annotations=annotations_of(spec)
        )


__all__ = ["annotations_of", "register"]
