"""Verbs for agent runtimes that reach Reverie by command rather than by import (the
Hermes Agent provider, :mod:`reverie.integrations.hermes_plugin`, runs in Hermes's own
Python): ``reverie session record`` records a run's messages into a Reverie session,
which computes every origin; ``reverie tool NAME`` runs one of the agent's memory tools
(:mod:`reverie.provenance.agent_tools`) on JSON arguments read from stdin."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import click

from ..errors import ReverieError
from ..provenance.agent_tools import TOOLS
from ..provenance.origin import Channel, SessionKind, Source
from .common import Ctx, emit, handles_errors, json_option

# an OpenAI-style role -> where the message came from (anything else is not recorded);
# "recalled": the answer of one of our own memory tools (memory already, never evidence)
ROLES = {
    "user": Source.OWNER,
    "assistant": Source.ASSISTANT,
    "tool": Source.TOOL,
    "recalled": Source.RECALLED,
}


def _stdin_json(what: str) -> Any:
    raw = sys.stdin.read()
    try:
        return json.loads(raw) if raw.strip() else None
    except ValueError as exc:
        raise ReverieError(f"stdin: {what} must be JSON ({exc})") from None


def _text(content: Any) -> str:
    """A message's text: a string, or the text parts of a list of parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text") for p in content if isinstance(p, dict)]
        return "\n".join(p for p in parts if isinstance(p, str))
    return ""


@click.group("session")
def session() -> None:
    """A conversation recorded as it happens, by command (the session API)."""


@session.command("record")
@click.option("--session", "session_id", required=True, help="The session's id (reopened).")
@click.option("--sender", help="Who wrote the user turns.")
@click.option(
    "--owner",
    help="The workspace's owner: user turns whose sender is the owner, on a direct "
    "channel, are the owner's; any other sender's are a member's (untrusted).",
)
@click.option("--channel", type=click.Choice([c.value for c in Channel]), help="[direct]")
@click.option("--kind", type=click.Choice([k.value for k in SessionKind]), help="[interactive]")
@click.option("--ingest", is_flag=True, help="Then ingest what it holds so far (it goes on).")
@click.option("--end", is_flag=True, help="Then end it: the transcript becomes dreaming evidence.")
@json_option
@click.pass_obj
@handles_errors
def record(
    obj: Ctx,
    session_id: str,
    sender: str | None,
    owner: str | None,
    channel: str | None,
    kind: str | None,
    ingest: bool,
    end: bool,
    as_json: bool,
) -> None:
    """Record the messages read as JSON on stdin, a list of {"role", "content"} (user,
    assistant, tool, recalled for a memory tool's own answer; others are skipped), each
    with its own "sender" where a group's members speak: the session computes each
    origin (a user turn is the owner's only when its sender is the owner, tool output
    untrusted, a reply after it tainted)."""
    messages = _stdin_json("the messages") or []
    if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
        raise ReverieError('stdin: the messages must be a list of {"role", "content"} objects')
    s = obj.engine.open_session(
        kind=kind, channel=channel, sender=sender, owner=owner, session_id=session_id
    )
    origins: list[str] = []
    for m in messages:
        source, text = ROLES.get(str(m.get("role"))), _text(m.get("content"))
        said_by = m.get("sender") if isinstance(m.get("sender"), str) else None
        if source is not None and text.strip():
            origins.append(s.record(text, source=source, sender=said_by).origin.value)
    data: dict[str, Any] = {"session": s.id, "recorded": len(origins), "origins": origins}
    if end:
        data["ingested"] = s.end().as_dict()
    elif ingest:  # a long-lived session (a gateway's): searchable after each turn
        data["ingested"] = obj.engine.ingest(s.path).as_dict()
    emit(data, as_json, lambda d: f"session {d['session']}: {d['recorded']} message(s) recorded")


@click.command("tool")
@click.argument("name", type=click.Choice(sorted(TOOLS)))
@click.option(
    "--tainted", is_flag=True, help="Tool output reached the model: a write is untrusted."
)
@click.pass_obj
@handles_errors
def tool(obj: Ctx, name: str, tainted: bool) -> None:
    """Run the agent's memory tool NAME on the JSON arguments read from stdin and print
    what the model reads (a bad argument is answered in a sentence)."""
    from ..adapters.common import MemoryTools
    from ..aio import AsyncReverie

    arguments = _stdin_json("the arguments") or {}
    memory = AsyncReverie(obj.engine)
    click.echo(asyncio.run(MemoryTools(memory).call(name, arguments, tainted=tainted)))
