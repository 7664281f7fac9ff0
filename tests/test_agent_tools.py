"""One tool spec (issue 42, point 2): the agent's memory tools are defined once
(:mod:`reverie.provenance.agent_tools`) and every door shows and reads them alike: the
MCP server (``tests/test_mcp.py``), and each framework adapter, checked here against
the framework's own tool objects."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from reverie.adapters.common import MemoryTools
from reverie.aio import AsyncReverie
from reverie.errors import ToolArgumentError
from reverie.provenance.agent_tools import GET, SEARCH, TOOLS, WRITE, write_source
from reverie.provenance.origin import Source
from reverie.testing import memory_for_tests


@pytest.mark.parametrize(
    ("spec", "arguments", "said"),
    [
        (SEARCH, {"query": "x", "bogus": 1}, "memory_search does not take 'bogus'; it takes "
         "query, max_results, projects, budget_tokens, explain, cwd"),
        (SEARCH, {"query": "   ", "max_results": True}, "max_results must be a whole number"),
        (SEARCH, {"query": "x", "projects": "github.com/a/b"}, "projects must be a list of texts"),
        (SEARCH, {"query": "x", "budget_tokens": 10}, "budget_tokens must be at least 50, not 10"),
        (GET, {}, "memory_get: path is required"),
        (GET, {"path": "MEMORY.md", "lines": 0}, "lines must be at least 1, not 0"),
        (WRITE, {"text": ""}, "memory_write: text must not be empty"),
        (WRITE, {"text": "x" * 4001}, "text must be at most 4000 characters long, not 4001"),
        (WRITE, {"text": "x", "source": "owner"}, "source must be one of agent, tool, web, "
         "member, not 'owner'"),
    ],
)  # fmt: skip
def test_a_call_that_does_not_fit_is_refused_in_a_sentence(
    spec: Any, arguments: dict[str, Any], said: str
) -> None:
    with pytest.raises(ToolArgumentError) as caught:
        spec.check(arguments)
    assert said in str(caught.value)


def test_a_call_that_fits_is_read_with_its_defaults() -> None:
    assert SEARCH.check({"query": "release"}) == {
        "query": "release", "max_results": 6, "projects": (), "budget_tokens": None,
        "explain": False, "cwd": None,
    }  # fmt: skip
    assert WRITE.check({"text": "x", "source": "web"})["source"] == "web"
    for spec in TOOLS.values():
        schema = spec.schema()
        assert schema["additionalProperties"] is False
        assert set(schema["properties"]) == {p.name for p in spec.params}


def test_a_tainted_turn_writes_untrusted_whatever_it_declares() -> None:
    assert write_source("agent", tainted=False) is Source.ASSISTANT
    assert write_source("agent", tainted=True) is Source.TOOL
    assert write_source("member", tainted=False) is Source.MEMBER


def test_every_adapter_shows_the_same_tools(tmp_path: Path) -> None:
    pytest.importorskip("agents")
    pytest.importorskip("pydantic_ai")
    pytest.importorskip("claude_agent_sdk")
    from reverie.adapters.claude_agent_sdk import ReverieHooks
    from reverie.adapters.openai_agents import ReverieMemory as OpenAIMemory
    from reverie.adapters.pydantic_ai import ReverieMemory as PydanticMemory

    memory = AsyncReverie(memory_for_tests(tmp_path))
    want = {name: (spec.description, spec.schema()) for name, spec in TOOLS.items()}
    openai = {t.name: (t.description, t.params_json_schema) for t in OpenAIMemory(memory).tools}
    claude = {t.name: (t.description, t.input_schema) for t in ReverieHooks(memory).tools()}
    toolset = PydanticMemory(memory).get_toolset()
    pydantic = {n: (t.tool_def.description, t.tool_def.parameters_json_schema)
                for n, t in toolset.tools.items()}  # fmt: skip
    assert openai == want
    assert claude == want
    assert pydantic == want


def test_the_adapters_tools_read_a_call_as_its_definition_says(tmp_path: Path) -> None:
    tools = MemoryTools(AsyncReverie(memory_for_tests(tmp_path)))

    async def main() -> list[str]:
        return [
            await tools.call("memory_write", {"text": "The VPN moved to port 8443."}),
            await tools.call("memory_search", {"query": "VPN port", "max_results": 2}),
            await tools.call("memory_search", {"query": "VPN", "limit": 2}),
            await tools.call("memory_write", {"text": "Use port 1."}, tainted=True),
            await tools.call("memory_delete", {}),
        ]

    wrote, found, refused, tainted, unknown = asyncio.run(main())
    ref = wrote.split()[2].split("#")[0]  # "written to memory/....md (agent)"
    assert wrote.startswith("written to memory/") and "(agent)" in wrote
    assert "8443" in found
    assert refused.startswith("error: memory_search does not take 'limit'")
    assert "(untrusted)" in tainted  # after another tool's output this turn
    assert unknown.startswith("error: there is no memory tool 'memory_delete'")
    linked = asyncio.run(
        tools.call("memory_link", {"newer": f"{ref}#L3", "older": f"{ref}#L4", "subject": "port"})
    )
    assert linked == (
        f"error: {ref}#L3: a line replaces only a line of an earlier day ({ref}#L4)"
    )  # checked, in a sentence
