"""PydanticAI: :class:`ReverieMemory`, a capability (``pydantic_ai.capabilities``).

    from pydantic_ai import Agent
    from reverie.adapters.pydantic_ai import ReverieMemory

    agent = Agent(model, capabilities=[ReverieMemory(AsyncReverie.open(...))])

- its **dynamic instructions** are the turn context of the run's prompt (bootstrap,
  fired triggers, restated directives, fired intents), computed for every request;
- its **toolset** has ``memory_search``, ``memory_get`` and ``memory_write``
  (:class:`reverie.adapters.common.MemoryTools`): hits and lines come back framed by
  origin; a write is the connected agent's, from a declared source, and once any other
  tool's output has reached the model in this run the model's own notes are written
  ``untrusted`` too (they may carry it: the same taint rule as a session's).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic_ai import RunContext
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.messages import ModelRequest, ToolReturnPart
from pydantic_ai.toolsets import FunctionToolset

from ..aio import AsyncReverie
from .common import GET_DESCRIPTION, SEARCH_DESCRIPTION, WRITE_DESCRIPTION, MemoryTools

TOOL_NAMES = ("memory_search", "memory_get", "memory_write")


def _prompt_text(prompt: str | Sequence[Any] | None) -> str:
    if prompt is None:
        return ""
    if isinstance(prompt, str):
        return prompt
    return "\n".join(p for p in prompt if isinstance(p, str))  # the text parts only


def tainted(messages: Sequence[Any]) -> bool:
    """Whether output of a tool other than the memory tools reached the model."""
    for message in messages:
        if isinstance(message, ModelRequest):
            for part in message.parts:
                if isinstance(part, ToolReturnPart) and part.tool_name not in TOOL_NAMES:
                    return True
    return False


@dataclass
class ReverieMemory(AbstractCapability[Any]):
    """Reverie's memory as a PydanticAI capability (see the module's docstring)."""

    memory: AsyncReverie
    max_results: int = 6
    tools: MemoryTools = field(init=False)

    def __post_init__(self) -> None:
        self.tools = MemoryTools(self.memory, max_results=self.max_results)

    def get_instructions(self) -> Any:
        return self.turn_context

    async def turn_context(self, ctx: RunContext[Any]) -> str:
        """The turn context of the run's prompt (never raises: a memory failure is a
        degraded context, never a failed run)."""
        context = await self.memory.context(_prompt_text(ctx.prompt), explain_lane=False)
        return context.text

    def get_toolset(self) -> Any:
        tools = self.tools

        async def memory_search(query: str, max_results: int = 6) -> str:
            return await tools.search(query, max_results)

        async def memory_get(path: str, from_line: int = 1, lines: int = 120) -> str:
            return await tools.get(path, from_line, lines)

        async def memory_write(ctx: RunContext[Any], text: str, source: str = "agent") -> str:
            if tainted(ctx.messages):
                source = source if source in ("tool", "web", "member") else "tool"
            return await tools.write(text, source)

        memory_search.__doc__ = SEARCH_DESCRIPTION
        memory_get.__doc__ = GET_DESCRIPTION
        memory_write.__doc__ = WRITE_DESCRIPTION
        return FunctionToolset([memory_search, memory_get, memory_write])


__all__ = ["TOOL_NAMES", "ReverieMemory", "tainted"]
