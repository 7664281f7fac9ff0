"""MCP ``memory_link`` (issue 38, point 1: links from the agent, checked): the connected
agent links its newer note to the earlier one it replaces; search then puts the newer
first and marks the older changed. An owner's line is never linked by the agent, and a
link whose subject is not in both lines is refused; nothing is written either way."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from mcp_types import TextContent

from reverie.adapters.common import CONNECTED_AGENT, source_of
from reverie.engine import Reverie
from reverie.errors import ReverieError
from reverie.mcp_server.registry import build_server
from reverie.provenance.origin import OWNER_AT_CLI, Source
from reverie.testing import memory_for_tests

DAY1, DAY2 = datetime(2026, 5, 1, 9, tzinfo=UTC), datetime(2026, 5, 20, 9, tzinfo=UTC)


def _write(tmp_path: Path, now: datetime, text: str, *, owner: bool = False) -> str:
    memory = memory_for_tests(tmp_path, now=now)
    try:
        if owner:
            done = memory.write(text, source=Source.OWNER, author=OWNER_AT_CLI)
        else:
            done = memory.write(text, source=source_of("agent"), author=CONNECTED_AGENT)
        return f"{done.path}#L{done.first_line}"
    finally:
        memory.close()


def _call(memory: Reverie, **args: Any) -> tuple[bool, str]:
    result = asyncio.run(build_server(memory, start=False).call_tool("memory_link", args))
    text = "".join(c.text for c in result.content if isinstance(c, TextContent))
    return bool(result.is_error), text


def test_the_agent_links_its_newer_note_and_search_follows_it(tmp_path: Path) -> None:
    older = _write(tmp_path, DAY1, "The team standup is at 9:30 in room B.")
    newer = _write(tmp_path, DAY2, "Moved the team standup to 10:00, same room.")
    memory = memory_for_tests(tmp_path, now=DAY2)
    try:
        failed, said = _call(memory, newer=newer, older=older, subject="team standup")
        assert not failed and said == f"{newer} now replaces {older}"
        hits = memory.search("when is the team standup").hits
        places = [f"{h.path}#L{h.start_line}" for h in hits]
        assert places.index(newer) < places.index(older)
        old_hit = hits[places.index(older)]
        assert old_hit.superseded_by == newer and str(old_hit.changed_on) == "2026-05-20"
        again = _call(memory, newer=newer, older=older, subject="team standup")
        assert again == (False, f"{newer} now replaces {older} (it did already)")
    finally:
        memory.close()


def test_an_owners_line_or_a_subject_not_in_both_is_refused_and_nothing_written(
    tmp_path: Path,
) -> None:
    mine = _write(tmp_path, DAY1, "I keep the spare key in the blue box.", owner=True)
    note = _write(tmp_path, DAY1.replace(day=2), "The standup is at 9:30.")
    newer = _write(tmp_path, DAY2, "The spare key moved to the red box; the standup is at 10.")
    memory = memory_for_tests(tmp_path, now=DAY2)
    before = {p: p.read_text() for p in (tmp_path / "workspace" / "memory").glob("*.md")}
    try:
        failed, said = _call(memory, newer=newer, older=mine, subject="spare key")
        assert failed and "owner's line: only the owner's newer line replaces it" in said
        failed, said = _call(memory, newer=newer, older=note, subject="room booking")
        assert failed and "is not in both lines" in said
        failed, said = _call(memory, newer=note, older=newer, subject="standup")
        assert failed and "replaces only a line of an earlier day" in said
    finally:
        memory.close()
    after = {p: p.read_text() for p in (tmp_path / "workspace" / "memory").glob("*.md")}
    assert after == before


def test_two_of_the_owners_lines_are_linked_only_when_the_owner_confirms(tmp_path: Path) -> None:
    older = _write(tmp_path, DAY1, "My dentist is Dr Alvarez on Hill Road.", owner=True)
    newer = _write(tmp_path, DAY2, "Switched dentist: now Dr Okafor near the station.", owner=True)
    memory = memory_for_tests(tmp_path, now=DAY2)
    try:
        failed, said = _call(memory, newer=newer, older=older, subject="dentist")
        assert not failed and said.startswith("request ") and "user confirms it" in said
        [req] = [r for r in memory.curation.pending.requests() if r.kind == "link"]
        assert (req.text, req.new_text, req.reason) == (newer, older, "dentist")
        hits = memory.search("who is my dentist").hits
        assert not any(h.superseded_by for h in hits)  # nothing linked on the agent's word
        done = memory.curation.pending.confirm(req.id)
        assert done["link"]["target"].startswith(older.split("#")[0] + "@")
        old_hit = next(h for h in memory.search("who is my dentist").hits
                       if f"{h.path}#L{h.start_line}" == older)  # fmt: skip
        assert old_hit.superseded_by == newer
    finally:
        memory.close()


def test_a_link_request_whose_lines_changed_is_refused_on_confirm(tmp_path: Path) -> None:
    older = _write(tmp_path, DAY1, "My dentist is Dr Alvarez on Hill Road.", owner=True)
    newer = _write(tmp_path, DAY2, "Switched dentist: now Dr Okafor near the station.", owner=True)
    memory = memory_for_tests(tmp_path, now=DAY2)
    try:
        _call(memory, newer=newer, older=older, subject="dentist")
        [req] = [r for r in memory.curation.pending.requests() if r.kind == "link"]
        journal = tmp_path / "workspace" / older.split("#")[0]
        journal.write_text(journal.read_text().replace("Hill Road", "Mill Road"))
        with pytest.raises(ReverieError, match="changed since the request"):
            memory.curation.pending.confirm(req.id)
        text = (tmp_path / "workspace" / newer.split("#")[0]).read_text()
        assert "replaces:" not in text
    finally:
        memory.close()
