"""OpenAI Agents SDK: :class:`ReverieMemory` (the SDK's own hook points, as 0.24 defines them).

    from agents import Agent, Runner
    from reverie.adapters.openai_agents import ReverieMemory

    mem = ReverieMemory(AsyncReverie.open(...), owner="me", sender="me")
    agent = Agent(name="assistant", tools=mem.tools)
    result = await Runner.run(agent, "hi", run_config=mem.run_config())
    await mem.record_run(result)              # what the run learned -> dreaming evidence

- **before each model call** (``RunConfig.call_model_input_filter``) the turn context of
  the latest user message (bootstrap, fired triggers, directives, fired intents) is put
  in front of the agent's instructions;
- ``tools``: ``memory_search``, ``memory_get``, ``memory_write`` (framed by origin; the
  model's notes are ``untrusted`` once another tool's output is in the model's input);
- :meth:`ReverieMemory.record_run` records the run as a Reverie session: the user's
  message (``owner`` only when ``sender`` is ``owner``, as the runtime says), the
  assistant's replies, tool output (``untrusted``), our injected memory (``recalled``),
  and ends it: the transcript becomes dreaming evidence, promoted only past the gates.
"""

from __future__ import annotations

import contextvars
import json
from collections.abc import Sequence
from typing import Any

from agents import FunctionTool, ItemHelpers, RunConfig
from agents.items import HandoffOutputItem, MessageOutputItem, ToolCallOutputItem
from agents.result import RunResultBase
from agents.run_config import CallModelData, ModelInputData

from ..aio import AsyncReverie
from ..provenance.agent_tools import TOOLS, ToolSpec
from ..write.ingest import IngestResult
from .common import MemoryTools

TOOL_NAMES = tuple(TOOLS)
_tainted: contextvars.ContextVar[bool] = contextvars.ContextVar("reverie_tainted", default=False)


def _text(item: Any) -> str:
    """The text of one input item (a message's content, or its text parts)."""
    content = item.get("content") if isinstance(item, dict) else getattr(item, "content", None)
    if isinstance(content, str):
        return content
    parts = [p.get("text", "") for p in content or () if isinstance(p, dict)]
    return "\n".join(p for p in parts if p)


def last_user_message(items: Sequence[Any]) -> str:
    for item in reversed(items):
        if isinstance(item, dict) and item.get("role") == "user":
            return _text(item)
    return ""


def tainted(items: Sequence[Any]) -> bool:
    """Whether output of a tool other than the memory tools is in the model's input."""
    names = {
        i.get("call_id"): i.get("name")
        for i in items
        if isinstance(i, dict) and i.get("type") == "function_call"
    }
    return any(
        isinstance(i, dict)
        and i.get("type") == "function_call_output"
        and names.get(i.get("call_id")) not in TOOL_NAMES
        for i in items
    )


class ReverieMemory:
    """Reverie's memory for the OpenAI Agents SDK (see the module's docstring)."""

    def __init__(
        self,
        memory: AsyncReverie,
        *,
        owner: str | None = None,
        sender: str | None = None,
        max_results: int = 6,
    ) -> None:
        self.memory = memory
        self.owner, self.sender = owner, sender  # who the user is: the runtime says, never a text
        self._tools = MemoryTools(memory, max_results=max_results)
        self.tools: list[FunctionTool] = self._build_tools()

    def _build_tools(self) -> list[FunctionTool]:
        """The memory tools as their one definition gives them (the same names,
        descriptions and schemas as every door), each call read by it."""
        return [self._tool(spec) for spec in TOOLS.values()]

    def _tool(self, spec: ToolSpec) -> FunctionTool:
        async def invoke(_ctx: Any, raw: str) -> str:
            try:
                arguments = json.loads(raw or "{}")
            except ValueError:
                return f"error: {spec.name}: the arguments are not JSON"
            if not isinstance(arguments, dict):
                return f"error: {spec.name}: the arguments must be an object"
            return await self._tools.call(spec.name, arguments, tainted=_tainted.get())

        return FunctionTool(
            name=spec.name,
            description=spec.description,
            params_json_schema=spec.schema(),
            on_invoke_tool=invoke,
            strict_json_schema=False,  # optional arguments: the definition reads them
        )

    async def call_model_input_filter(self, data: CallModelData[Any]) -> ModelInputData:
        """The SDK calls this before every model call: the turn context goes in front
        of the agent's instructions (a memory failure leaves them as they were)."""
        model_data = data.model_data
        _tainted.set(tainted(model_data.input))
        message = last_user_message(model_data.input)
        ctx = await self.memory.context(message, explain_lane=False)
        instructions = "\n\n".join(t for t in (ctx.text, model_data.instructions or "") if t)
        return ModelInputData(input=model_data.input, instructions=instructions)

    def run_config(self, **kw: Any) -> RunConfig:
        """A ``RunConfig`` with the filter set (``kw``: its other fields)."""
        return RunConfig(call_model_input_filter=self.call_model_input_filter, **kw)

    async def record_run(
        self, result: RunResultBase, *, session_id: str | None = None
    ) -> IngestResult:
        """Record a finished run as one Reverie session, then end it (ingested)."""
        session = await self.memory.open_session(
            kind="interactive",
            channel="direct",
            sender=self.sender,
            owner=self.owner,
            session_id=session_id,
        )
        inputs = (
            result.input
            if isinstance(result.input, list)
            else [{"role": "user", "content": result.input}]
        )
        for item in inputs:
            if isinstance(item, dict) and item.get("role") == "user" and _text(item):
                await session.record(_text(item), source="owner")
        calls: dict[str, str] = {}
        for run_item in result.new_items:
            raw = run_item.raw_item
            call_id = raw.get("call_id") if isinstance(raw, dict) else getattr(raw, "call_id", None)
            name = raw.get("name") if isinstance(raw, dict) else getattr(raw, "name", None)
            if call_id and name:
                calls[str(call_id)] = str(name)
            if isinstance(run_item, MessageOutputItem):
                await session.record(ItemHelpers.text_message_output(run_item), source="assistant")
            elif isinstance(run_item, ToolCallOutputItem) and str(run_item.output):
                ours = calls.get(str(call_id)) in TOOL_NAMES
                await session.record(str(run_item.output), source="recalled" if ours else "tool")
            elif isinstance(run_item, HandoffOutputItem):
                await session.record(f"handoff to {run_item.target_agent.name}", source="member")
        return await session.end()


__all__ = ["TOOL_NAMES", "ReverieMemory", "last_user_message", "tainted"]
