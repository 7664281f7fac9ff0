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
  ``untrusted`` too (they may carry it: the same taint rule as a session's);
- **after each run** its turns are recorded as one session and ingested (``record``):
  the user's prompts, ``owner`` when ``owner`` and ``sender`` say the runtime's user is
  the owner, the model's text, tools' output ``untrusted``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic_ai import AgentRunResult, RunContext, Tool
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.messages import ModelRequest, TextPart, ToolReturnPart, UserPromptPart
from pydantic_ai.toolsets import FunctionToolset

from ..aio import AsyncReverie
from ..integrations.hooks import log_failure
from ..provenance.agent_tools import TOOLS, ToolSpec
from .common import MemoryTools

TOOL_NAMES = tuple(TOOLS)


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
    owner: str | None = None  # who the user is: the runtime says, never a text
    sender: str | None = None
    record: bool = True  # each run is recorded as a session (dreaming's evidence)
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

    async def after_run(self, ctx: RunContext[Any], *, result: AgentRunResult[Any]) -> Any:
        """The run's turns recorded as one Reverie session, then ingested: the user's
        prompts (owner when the runtime says the sender is the owner), the model's text,
        tools' output ``untrusted`` and our own tools' answers ``recalled``. A memory
        failure is logged and never fails the run."""
        if self.record:
            try:
                await self.record_messages(result.new_messages())
            except Exception as exc:  # P5: memory never blocks the agent
                mem = self.memory.memory
                log_failure(mem.workspace.state_dir, "pydantic-ai-record", exc)
        return result

    async def record_messages(self, messages: Sequence[Any]) -> Any:
        """``messages`` (a run's) as one session, ended (ingested); None when empty."""
        turns: list[tuple[str, str]] = []
        for message in messages:
            for part in getattr(message, "parts", ()):
                if isinstance(part, UserPromptPart):
                    turns.append((_prompt_text(part.content), "owner"))
                elif isinstance(part, TextPart):
                    turns.append((part.content, "assistant"))
                elif isinstance(part, ToolReturnPart):
                    ours = part.tool_name in TOOL_NAMES
                    turns.append((part.model_response_str(), "recalled" if ours else "tool"))
        turns = [(text, source) for text, source in turns if text.strip()]
        if not turns:
            return None
        session = await self.memory.open_session(
            kind="interactive", channel="direct", sender=self.sender, owner=self.owner
        )
        for text, source in turns:
            await session.record(text, source=source)
        return await session.end()

    def get_toolset(self) -> Any:
        """The memory tools as their one definition gives them (the same names,
        descriptions and schemas as every door), each call read by it."""
        return FunctionToolset([self._tool(spec) for spec in TOOLS.values()])

    def _tool(self, spec: ToolSpec) -> Tool[Any]:
        async def run(ctx: RunContext[Any], **arguments: Any) -> str:
            return await self.tools.call(spec.name, arguments, tainted=tainted(ctx.messages))

        return Tool.from_schema(run, spec.name, spec.description, spec.schema(), takes_ctx=True)


__all__ = ["TOOL_NAMES", "ReverieMemory", "tainted"]
