"""A PydanticAI agent with Reverie's memory as a capability (offline: PydanticAI's own
FunctionModel plays the model).

    python examples/pydantic_ai_example.py [FOLDER]

The model first searches memory, then answers from what the search returned; the turn
context (bootstrap, triggers, directives, intents) is in its instructions.
"""

from __future__ import annotations

import sys
import tempfile
from typing import Any

from pydantic_ai import Agent
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from reverie.adapters.pydantic_ai import ReverieMemory
from reverie.aio import AsyncReverie
from reverie.provenance.origin import OWNER_AT_CLI
from reverie.testing import memory_for_tests


def model(messages: list[Any], info: AgentInfo) -> ModelResponse:
    returns = [
        p for m in messages for p in getattr(m, "parts", ()) if isinstance(p, ToolReturnPart)
    ]
    if not returns:
        return ModelResponse(
            parts=[ToolCallPart("memory_search", {"query": "what does Alice drink"})]
        )
    found = [line for line in str(returns[-1].content).splitlines() if "Alice" in line]
    return ModelResponse(parts=[TextPart("From memory: " + (found[0] if found else "nothing"))])


def main(folder: str) -> str:
    memory = memory_for_tests(folder)
    memory.write("Alice prefers tea over coffee.", source="owner", author=OWNER_AT_CLI, sync=True)
    agent = Agent(FunctionModel(model), capabilities=[ReverieMemory(AsyncReverie(memory))])
    return agent.run_sync("What should I make Alice to drink?").output


if __name__ == "__main__":
    print(main(sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp()))
