"""What every framework adapter shares: who writes, with which origin, and what the model
reads (framed), over :class:`reverie.aio.AsyncReverie`.

An adapter is the agent's runtime, not its owner: everything it writes is written as
:data:`reverie.provenance.CONNECTED_AGENT` with a declared source, and the declaration
can only lower the origin (``agent`` for the agent's own notes, ``untrusted`` for tool
output, web text and other agents' messages; anything unknown fails closed to
``untrusted``). Nothing read back reaches a model raw: search hits and file lines are
framed by their origin (:meth:`reverie.recall.hits.Hit.framed`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..curation.link import said
from ..errors import ReverieError, ToolArgumentError
from ..provenance.agent_tools import GET, LINK, SEARCH, TOOLS, write_source
from ..provenance.agent_tools import SOURCES as TOOL_SOURCES
from ..provenance.origin import CONNECTED_AGENT, Origin, Source
from ..scope import project_key

if TYPE_CHECKING:
    from ..aio import AsyncReverie
    from ..recall.context import TurnContext
    from ..write.journal import Appended

# what a framework may declare a text to be: the tools' sources (one definition,
# reverie.provenance.agent_tools) and the names frameworks give them
SOURCES: Mapping[str, Source] = {
    **TOOL_SOURCES,
    "assistant": Source.ASSISTANT,
    "other_agent": Source.MEMBER,
    "handoff": Source.MEMBER,
}


def source_of(declared: str | Source | None) -> Source:
    """The source a declaration names; anything else (``owner`` included: no adapter
    speaks for the owner) fails closed to :attr:`Source.TOOL`, an untrusted source."""
    if isinstance(declared, Source):
        declared = declared.value
    return SOURCES.get((declared or "agent").strip().lower(), Source.TOOL)


def lowered(origin: str | Origin | None) -> Origin | None:
    """An origin a caller asks for as a ceiling (it can only lower): an unknown name is
    ``untrusted``, never ignored."""
    if origin is None:
        return None
    return Origin.parse(str(origin)) or Origin.UNTRUSTED


def context_text(ctx: TurnContext) -> str:
    """The turn context as the model reads it: bootstrap, fired triggers, directives,
    fired intents (each block framed as :mod:`reverie.recall.context` builds it)."""
    return ctx.text


class MemoryTools:
    """``memory_search``, ``memory_get`` and ``memory_write``, as their one definition
    says (:mod:`reverie.provenance.agent_tools`), answering what the model reads, for
    an adapter to wrap in its framework's tool type (:meth:`call`)."""

    def __init__(self, memory: AsyncReverie, *, max_results: int = 6) -> None:
        self.memory = memory
        self.max_results = max_results

    async def call(
        self, name: str, arguments: Mapping[str, Any] | None, *, tainted: bool = False
    ) -> str:
        """One tool call: its arguments read by the tool's definition (an argument it
        does not take, or a bad value, answered in a sentence), then run. ``tainted``:
        a tool's output reached the model this turn, so a write is untrusted."""
        spec = TOOLS.get(name)
        if spec is None:
            return f"error: there is no memory tool {name!r} (there are {', '.join(TOOLS)})"
        try:
            args = spec.check(arguments)
        except ToolArgumentError as exc:
            return f"error: {exc}"
        if spec is SEARCH:
            return await self.search(**args)
        if spec is GET:
            return await self.get(**args)
        if spec is LINK:
            return await self.link(**args)
        return await self.write(args["text"], args["source"], cwd=args["cwd"], tainted=tainted)

    async def link(self, newer: str, older: str, subject: str) -> str:
        """The agent's newer note marked as replacing its earlier one (checked:
        :func:`reverie.curation.link.agent_link`)."""
        try:
            done = await self.memory.curation.agent_link(newer, older, subject)
        except ReverieError as exc:
            return f"error: {exc}"
        return said(newer, older, done)[0]  # the link written, or the request filed

    async def search(
        self,
        query: str,
        max_results: int | None = None,
        projects: tuple[str, ...] = (),
        budget_tokens: int | None = None,
        explain: bool = False,
        cwd: str | None = None,
    ) -> str:
        """The hits, each framed by its origin (an untrusted hit is in its frame)."""
        if not query.strip():
            return "error: memory_search: query must not be empty"
        here = project_key(cwd) if cwd else None
        await self.memory.refresh()  # what was written a moment ago is found
        response = await self.memory.search(
            query,
            max_results=max_results or self.max_results,
            active_projects=frozenset(projects) | ({here} if here else set()),
            budget_tokens=budget_tokens,
        )
        text = response.render(explain)
        if response.notes:
            text += "\n\n" + "\n".join(f"note: {n}" for n in response.notes)
        return text

    async def get(self, path: str, from_line: int = 1, lines: int = 120) -> str:
        """Lines of a workspace file, framed per run of lines by origin."""
        try:
            result = await self.memory.get(path, from_line=from_line, lines=lines)
        except ReverieError as exc:
            return f"error: {exc}"
        return result.render()  # framed per run of lines by origin

    async def write(
        self, text: str, source: str = "agent", *, cwd: str | None = None, tainted: bool = False
    ) -> str:
        """Append to today's journal as the connected agent (never the owner); after a
        tool's output this turn, untrusted whatever it declares."""
        try:
            appended = await write_as_agent(
                self.memory,
                text,
                write_source(source, tainted=tainted),
                project=project_key(cwd) if cwd else None,
            )
        except ReverieError as exc:
            return f"error: {exc}"
        said = f"written to {appended.path} ({appended.origin.value})"
        return said + "".join(f"\nwarning: {w}" for w in appended.warnings)


async def write_as_agent(
    memory: AsyncReverie,
    text: str,
    source: str | Source | None = "agent",
    *,
    lower_to: str | Origin | None = None,
    info: dict[str, str] | None = None,
    project: str | None = None,
) -> Appended:
    """The one write of every adapter: as the connected agent, from a declared source."""
    return await memory.write(
        text,
        source=source_of(source),
        author=CONNECTED_AGENT,
        lower_to=lowered(lower_to),
        info=info,
        project=project,
    )


__all__ = [
    "SOURCES",
    "MemoryTools",
    "context_text",
    "lowered",
    "source_of",
    "write_as_agent",
]
