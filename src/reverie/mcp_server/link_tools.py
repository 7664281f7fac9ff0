"""MCP tool ``memory_link``: the connected agent keeps its own notes current.

When the agent writes a fact that replaces one it wrote earlier ("the standup moved to
10:00" after "the standup is at 9:30"), it links the two lines (the ``path#Ln`` a search
returned for each): the newer line's signed marker names the older, search puts the
newer first and marks the older "changed" with its day (:mod:`reverie.curation.link`).
Checked before anything is written: both are journal lines, the newer of a later day,
the older one the agent's own (an owner's line is linked only by the owner), and the
subject's words are in both lines.
"""

from __future__ import annotations

from typing import Annotated

from mcp.server import MCPServer
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, Field

from ..curation.link import said
from ..provenance.agent_tools import LINK
from .tools import MemoryTools

LineRef = str  # (what a client is shown and how it is read: LINK, checked first)
Subject = str


class LinkOut(BaseModel):
    """A link written (or already there), or a request the owner confirms, as MCP
    structured content."""

    newer: str
    older: str
    target: str | None = Field(
        default=None, description="The older line's key (path@hash) the newer one names."
    )
    already: bool | None = Field(default=None, description="The link was there before.")
    request: str | None = Field(
        default=None, description="Two of the owner's lines: the request the owner confirms."
    )


def register(server: MCPServer, tools: MemoryTools) -> None:
    """Add ``memory_link`` to ``server`` (its body runs under :meth:`MemoryTools.guarded`)."""

    def memory_link(
        newer: LineRef, older: LineRef, subject: Subject
    ) -> Annotated[CallToolResult, LinkOut]:
        def body() -> CallToolResult:
            done = tools.engine.curation.agent_link(newer, older, subject)
            words, data = said(newer, older, done)
            return CallToolResult(
                content=[TextContent(type="text", text=words)], structured_content=data
            )

        return tools.guarded("memory_link", body)

    server.add_tool(
        memory_link,
        title=LINK.title,
        description=LINK.description,  # its one definition (listed by CheckedServer)
        annotations=ToolAnnotations(
            title=LINK.title,
            read_only_hint=False,
            destructive_hint=False,  # a marker on the newer line; nothing is removed
            idempotent_hint=LINK.idempotent,
            open_world_hint=False,
        ),
    )


__all__ = ["register"]
