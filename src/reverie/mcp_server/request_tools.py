"""MCP tools ``memory_forget`` and ``memory_correct``: an agent may only *ask*.

Each call records a pending request (:mod:`reverie.curation.pending`) and changes nothing else, so a
poisoned tool output speaking through the agent can never erase or rewrite memory; the
owner confirms or rejects with ``reverie pending`` or on the review page. The MCP
server registers them with one call to :func:`register`.
"""

from __future__ import annotations

from typing import Annotated

from mcp.server import MCPServer
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, Field

from ..curation.pending import MAX_TEXT, Pending
from .tools import MemoryTools

FORGET_DESCRIPTION = """\
Ask the user to forget something from long-term memory (journals, session notes, \
MEMORY.md, USER.md). This only files a request: nothing is removed until the user \
confirms it, so say so in your reply. Use it when the user asks you to forget a fact, or \
a memory is wrong and should go. `text` is the words to forget, as they appear in memory."""

CORRECT_DESCRIPTION = """\
Ask the user to correct a memory: replace `old_text` (as it appears in memory) with \
`new_text`. This only files a request: nothing changes until the user confirms it."""

OldText = Annotated[
    str, Field(min_length=3, max_length=MAX_TEXT, description="The words to forget, as in memory.")
]
NewText = Annotated[
    str, Field(min_length=1, max_length=MAX_TEXT, description="What it should say instead.")
]


class RequestOut(BaseModel):
    """A filed request as MCP structured content."""

    id: str = Field(description="The request's id, for `reverie pending confirm ID`.")
    kind: str = Field(description="forget | correct")
    status: str = Field(description="pending until the user confirms or rejects it")


def _filed(pending: Pending, kind: str, text: str, new_text: str | None) -> CallToolResult:
    req = pending.request(kind, text, new_text, by="connected agent (MCP)")
    said = (
        f"request {req.id} filed: nothing changes until the user confirms it "
        f"(`reverie pending confirm {req.id}` or the review page)"
    )
    data = {"id": req.id, "kind": req.kind, "status": req.status}
    return CallToolResult(content=[TextContent(type="text", text=said)], structured_content=data)


def register(server: MCPServer, tools: MemoryTools) -> None:
    """Add ``memory_forget`` and ``memory_correct`` to ``server``; each body runs under
    :meth:`MemoryTools.guarded`."""

    def pending() -> Pending:
        return tools.engine.curation.pending

    annotations = ToolAnnotations(
        title="Ask the user to change memory",
        read_only_hint=False,
        destructive_hint=False,  # a request; the user decides
        idempotent_hint=False,
        open_world_hint=False,
    )

    def memory_forget(text: OldText) -> Annotated[CallToolResult, RequestOut]:
        return tools.guarded("memory_forget", lambda: _filed(pending(), "forget", text, None))

    def memory_correct(
        old_text: OldText, new_text: NewText
    ) -> Annotated[CallToolResult, RequestOut]:
        return tools.guarded(
            "memory_correct", lambda: _filed(pending(), "correct", old_text, new_text)
        )

    server.add_tool(
        memory_forget,
        title="Ask to forget",
        description=FORGET_DESCRIPTION,
        annotations=annotations,
    )
    server.add_tool(
        memory_correct,
        title="Ask to correct",
        description=CORRECT_DESCRIPTION,
        annotations=annotations,
    )


__all__ = ["register"]
