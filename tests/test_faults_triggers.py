"""A large MEMORY.md keeps trigger injection cheap (issue 14, defect 16, part).

Before: every ``reverie context`` compiled a pattern for every trigger phrase of the
index (a 5 MB MEMORY.md: seconds per message in a one-shot process). Now a one-shot
call compiles only the phrases of its candidates whose words the message holds; a warm
process (``warm()``: the MCP server, the daemon) compiles them once per index version.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from conftest import Paths
from reverie.engine import Reverie
from reverie.recall.triggers import phrase_pattern

ENTRIES = 3000


def _memory(paths: Paths) -> None:
    lines = ["# Long-term memory", ""]
    for i in range(ENTRIES):
        kind = "service" if i % 2 else "daemon"
        lines.append(
            f"- Entry {i}: the zq{i} {kind} runs on port {1000 + i}. "
            f"<!-- trigger: zq{i} {kind}, zqport{i} --> <!-- importance: 6 -->"
        )
    paths.write("MEMORY.md", "\n".join(lines) + "\n")


@pytest.fixture
def engine(paths: Paths, engine_factory: Callable[..., Reverie]) -> Reverie:
    """A keyword-only engine over the large MEMORY.md, with no phrase compiled yet."""
    e = engine_factory(embedder="none")
    e.init()
    _memory(paths)
    e.index()
    phrase_pattern.cache_clear()
    return e


def test_one_message_compiles_only_its_candidates(engine: Reverie) -> None:
    ctx = engine.context("what about zqport17?")
    assert [h.entry.start_line for h in ctx.trigger_hits] == [3 + 17]
    assert phrase_pattern.cache_info().currsize < 50  # not one per phrase of the index
    again = engine.context("and zqport2999?")
    assert [h.entry.start_line for h in again.trigger_hits] == [3 + 2999]


def test_a_warm_process_compiles_every_phrase_once(engine: Reverie) -> None:
    engine.warm()
    compiled = phrase_pattern.cache_info().currsize
    assert compiled >= 2 * ENTRIES
    engine.context("how is the zq17 service doing?")
    assert phrase_pattern.cache_info().currsize == compiled  # nothing more per message
