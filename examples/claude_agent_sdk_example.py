"""Reverie in the Claude Agent SDK: the options to pass to ``query`` (hooks bound to the
Claude Code hooks' logic, an in-process MCP server with the memory tools).

    python examples/claude_agent_sdk_example.py [FOLDER]

Offline, it builds the options and calls the prompt hook and the search tool as the SDK
would; with Claude Code available, ``query(prompt=..., options=options)`` runs the agent.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile

from claude_agent_sdk import ClaudeAgentOptions

from reverie.adapters.claude_agent_sdk import ReverieHooks
from reverie.aio import AsyncReverie
from reverie.provenance.origin import OWNER_AT_CLI
from reverie.testing import memory_for_tests


async def main(folder: str) -> str:
    memory = memory_for_tests(folder)
    memory.write("Alice prefers tea over coffee.", source="owner", author=OWNER_AT_CLI, sync=True)
    adapter = ReverieHooks(AsyncReverie(memory))
    options = ClaudeAgentOptions(system_prompt=await adapter.system_prompt(), **adapter.options())
    # what the SDK does on a prompt: the UserPromptSubmit callbacks, then the model's tools
    [matcher] = (options.hooks or {})["UserPromptSubmit"]
    await matcher.hooks[0](
        {"prompt": "What should I make Alice?", "cwd": folder}, None, {"signal": None}
    )  # type: ignore[arg-type, typeddict-item]
    search = adapter.tools()[0]
    found = await search.handler({"query": "what does Alice drink", "max_results": 3})
    return next(line for line in found["content"][0]["text"].splitlines() if "Alice" in line)


if __name__ == "__main__":
    print(asyncio.run(main(sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp())))
