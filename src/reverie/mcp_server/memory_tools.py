"""The memory tools: ``memory_search``, ``memory_get``, ``memory_write``."""

from __future__ import annotations

from typing import Annotated

from mcp.server import MCPServer
from mcp_types import CallToolResult, ToolAnnotations

from .schemas import (
    GET_DESCRIPTION,
    SEARCH_DESCRIPTION,
    WRITE_DESCRIPTION,
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


def read_only(title: str, *, idempotent: bool) -> ToolAnnotations:
    """A tool that only reads the workspace and never reaches outside this machine."""
    return ToolAnnotations(
        title=title,
        read_only_hint=True,
        destructive_hint=False,
        idempotent_hint=idempotent,
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

    server.add_tool(
        memory_search,
        title="Search memory",
        description=SEARCH_DESCRIPTION,
        # Not idempotent: every call is recorded in the recall log (dreaming's evidence).
        annotations=read_only("Search memory", idempotent=False),
    )
    server.add_tool(
        memory_get,
        title="Read memory file",
        description=GET_DESCRIPTION,
        annotations=read_only("Read memory file", idempotent=True),
    )
    server.add_tool(
        memory_write,
        title="Write to today's journal",
        description=WRITE_DESCRIPTION,
        annotations=ToolAnnotations(
            title="Write to today's journal",
            read_only_hint=False,
            destructive_hint=False,
            idempotent_hint=False,
            open_world_hint=False,
        ),
    )


__all__ = ["read_only", "register"]
