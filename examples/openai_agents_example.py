"""An OpenAI Agents SDK agent with Reverie's memory (offline: the SDK's ScriptedModel
plays the model).

    python examples/openai_agents_example.py [FOLDER]

The turn context is put in front of each model call; the scripted model searches memory
and answers; the run is then recorded as a Reverie session (dreaming evidence).
"""

from __future__ import annotations

import asyncio
import sys
import tempfile

from agents import Agent, Runner
from agents.testing import ModelStep, ScriptedModel, assistant_message, function_call

from reverie.adapters.openai_agents import ReverieMemory
from reverie.aio import AsyncReverie
from reverie.provenance.origin import OWNER_AT_CLI
from reverie.testing import memory_for_tests


async def main(folder: str) -> str:
    memory = memory_for_tests(folder)
    memory.write("Alice prefers tea over coffee.", source="owner", author=OWNER_AT_CLI, sync=True)
    mem = ReverieMemory(AsyncReverie(memory), owner="me", sender="me")
    model = ScriptedModel(
        [
            ModelStep(
                output=[
                    function_call(
                        "memory_search", {"query": "Alice drink", "max_results": 3}, call_id="c1"
                    )
                ]
            ),
            ModelStep.respond(
                lambda call: ModelStep(
                    output=[assistant_message("Make her tea." if "tea" in str(call.input) else "?")]
                )
            ),
        ]
    )
    agent = Agent(name="assistant", model=model, tools=mem.tools)
    result = await Runner.run(
        agent,
        "What should I make Alice to drink?",
        run_config=mem.run_config(tracing_disabled=True),
    )
    await mem.record_run(result)
    return str(result.final_output)


if __name__ == "__main__":
    print(asyncio.run(main(sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp())))
