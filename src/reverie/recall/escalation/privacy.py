"""Who may recall whom (R-LANE2-2), decided by code before the model sees anything.
Pure code: the facts about each transcript are read by :mod:`.sources`.

- Direct-message sessions may recall each other (interactive, ``channel: direct``).
- Group chats are neither a source nor a target: the lane never runs for a group
  session, and no line of a group transcript is ever shown to it.
- Other agents' transcripts never: a source must be a transcript of this agent's own
  sessions folder, and a header naming another agent is refused.
- Missing metadata or archived: refused. A corpus line without a session anchor, an
  anchor whose transcript is gone, a header without id, kind or channel, or one the
  session API did not seal (copied in, hand-edited) is missing metadata; a transcript
  whose header says ``archived`` or that holds an ``archived`` record is archived.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .gates import Gate

DIRECT = "direct"
INTERACTIVE = "interactive"


@dataclass(frozen=True)
class Turn:
    """One turn of the conversation as the lane sees it."""

    role: str  # user | assistant
    text: str


@dataclass(frozen=True)
class Target:
    """The session asking: who it is and its latest turns (last 2 user + 1 assistant).
    No session (``session_id`` None): the caller at the terminal, a direct conversation."""

    session_id: str | None = None
    kind: str | None = INTERACTIVE
    channel: str | None = DIRECT
    turns: tuple[Turn, ...] = field(default_factory=tuple)


@dataclass(frozen=True)
class SessionMeta:
    """What a transcript's header says, as far as privacy cares."""

    session_id: str
    found: bool = False  # a transcript of this agent holds this session
    sealed: bool = False  # its header carries the session API's valid seal
    kind: str | None = None
    channel: str | None = None
    agent: str | None = None
    archived: bool = False


def target_gate(target: Target) -> Gate:
    """The lane runs only for direct-message sessions (a group chat is never a target)."""
    who = f"session {target.session_id}" if target.session_id else "the caller (no session)"
    detail = {"session": target.session_id, "kind": target.kind, "channel": target.channel}
    if target.channel != DIRECT:
        return Gate("privacy", False, f"{who} is a {target.channel} chat: never a target", detail)
    if target.kind != INTERACTIVE:
        return Gate(
            "privacy", False, f"{who} is a {target.kind} session: only conversations recall", detail
        )
    return Gate("privacy", True, f"{who} is a direct conversation", detail)


def source_refusal(meta: SessionMeta, *, agent: str) -> str | None:
    """Why the lines of ``meta``'s session may not be shown to the lane (None: allowed)."""
    sid = meta.session_id
    if not meta.found:
        return f"session {sid}: no transcript of agent {agent} (missing metadata)"
    if not meta.sealed:
        return f"session {sid}: header not sealed by the session API (missing metadata)"
    if not meta.kind or not meta.channel:
        return f"session {sid}: header without kind or channel (missing metadata)"
    if meta.agent is not None and meta.agent != agent:
        return f"session {sid}: a transcript of agent {meta.agent}, not {agent}"
    if meta.archived:
        return f"session {sid}: archived"
    if meta.channel != DIRECT:
        return f"session {sid}: a {meta.channel} chat is never a source"
    if meta.kind != INTERACTIVE:
        return f"session {sid}: a {meta.kind} session is not a conversation"
    return None


__all__ = [
    "DIRECT",
    "INTERACTIVE",
    "SessionMeta",
    "Target",
    "Turn",
    "source_refusal",
    "target_gate",
]
