"""Provenance: the closed set of origin classes and session kinds (R-PROV-1..3).

Pure code. The class of a piece of content is computed from where it came from
(path, session kind, sender), never from what it says.
"""

from __future__ import annotations

from enum import StrEnum

from ..records import Record


class Origin(StrEnum):
    """Origin classes, ordered by trust: untrusted < system < agent < owner."""

    UNTRUSTED = "untrusted"
    SYSTEM = "system"
    AGENT = "agent"
    OWNER = "owner"

    @property
    def rank(self) -> int:
        return _RANK[self]

    @classmethod
    def parse(cls, value: str | None) -> Origin | None:
        """The origin named by ``value``, or None when it names none (fail closed)."""
        if value is None:
            return None
        try:
            return cls(value.strip().lower())
        except ValueError:
            return None


_RANK = {Origin.UNTRUSTED: 0, Origin.SYSTEM: 1, Origin.AGENT: 2, Origin.OWNER: 3}


def lowest(*origins: Origin) -> Origin:
    """The least trusted of ``origins`` (a chunk of mixed trust takes the lowest)."""
    if not origins:
        return Origin.UNTRUSTED
    return min(origins, key=lambda o: o.rank)


def cap(origin: Origin, ceiling: Origin) -> Origin:
    """``origin`` lowered to at most ``ceiling``."""
    return lowest(origin, ceiling)


class SessionKind(StrEnum):
    """The kind of session content came from; only interactive sessions are evidence."""

    INTERACTIVE = "interactive"
    CRON = "cron"
    HEARTBEAT = "heartbeat"
    SUBAGENT = "subagent"

    @classmethod
    def parse(cls, value: str | None) -> SessionKind | None:
        """None for None (unknown); a name that is no session kind fails closed to
        ``subagent`` (never evidence)."""
        if value is None:
            return None
        try:
            return cls(value.strip().lower())
        except ValueError:
            return cls.SUBAGENT

    @property
    def promotable(self) -> bool:
        """R-PROV-3: nothing from cron, heartbeat or sub-agent sessions is ever promoted."""
        return self is SessionKind.INTERACTIVE


PROMOTABLE_ORIGINS = frozenset({Origin.OWNER, Origin.AGENT})


def is_promotable(origin: Origin, session_kind: SessionKind | None) -> bool:
    """R-DREAM-6: only owner/agent content from interactive (or no) sessions."""
    if origin not in PROMOTABLE_ORIGINS:
        return False
    return session_kind is None or session_kind.promotable


class Channel(StrEnum):
    """Where a person spoke: a direct conversation or a group."""

    DIRECT = "direct"
    GROUP = "group"


class Source(StrEnum):
    """Where one message of a session came from (said by the runtime, not the text)."""

    OWNER = "owner"  # typed by a person (owner if the sender is the owner)
    ASSISTANT = "assistant"  # the agent's own reply
    TOOL = "tool"  # tool output
    WEB = "web"  # web content, summaries of it
    MEMBER = "member"  # a non-owner member of a group
    SCAFFOLD = "scaffold"  # heartbeat prompts, cron preambles
    RECALLED = "recalled"  # memory the runtime injected; never evidence
    IMPORT = "import"  # memories imported from another assistant


EXTERNAL = frozenset({Source.TOOL, Source.WEB, Source.MEMBER, Source.IMPORT})


def origin_for(
    source: Source,
    *,
    session_kind: SessionKind,
    channel: Channel = Channel.DIRECT,
    sender: str | None = None,
    owner: str | None = None,
    tainted: bool = False,
) -> Origin:
    """The origin class of one message, computed from session context (R-PROV-1..3).

    - a person's message is ``owner`` only when the sender is the configured owner on
      a direct channel; the owner in a group is ``agent``; anyone else is ``untrusted``;
    - the assistant's reply is ``agent`` (derived from owner content), but
      ``untrusted`` when the turn was *tainted*: external content (tool output, web,
      a non-owner) arrived since the owner last spoke, so the reply may carry it;
    - tool, web, non-owner and imported content is ``untrusted``; scaffolding and
      recalled memory are ``system``;
    - cron, heartbeat and sub-agent sessions cap everything at ``system``;
    - anything unknown fails closed to ``untrusted``.
    """
    if source is Source.OWNER:
        if owner and sender and sender == owner:
            origin = Origin.OWNER if channel is Channel.DIRECT else Origin.AGENT
        else:
            origin = Origin.UNTRUSTED
    elif source is Source.ASSISTANT:
        origin = Origin.UNTRUSTED if tainted else Origin.AGENT
    elif source in (Source.SCAFFOLD, Source.RECALLED):
        origin = Origin.SYSTEM
    else:
        origin = Origin.UNTRUSTED
    if not session_kind.promotable:
        origin = cap(origin, Origin.SYSTEM)
    return origin


class Author(Record):
    """Who is writing, as the runtime knows it (never as the text says).

    ``session_kind`` None means "not known to us" (an MCP client): it counts as
    interactive for the origin, and is recorded as unknown.
    """

    __slots__ = ("channel", "owner", "sender", "session_kind", "tainted")

    def __init__(
        self,
        session_kind: SessionKind | None = SessionKind.INTERACTIVE,
        channel: Channel = Channel.DIRECT,
        sender: str | None = None,
        owner: str | None = None,
        tainted: bool = False,
    ) -> None:
        self.session_kind, self.channel, self.tainted = session_kind, channel, tainted
        self.sender, self.owner = sender, owner

    def origin(self, source: Source, *, lower_to: Origin | None = None) -> Origin:
        """:func:`origin_for` of ``source`` in this context, lowered to ``lower_to``."""
        origin = origin_for(
            source,
            session_kind=self.session_kind or SessionKind.INTERACTIVE,
            channel=self.channel,
            sender=self.sender,
            owner=self.owner,
            tainted=self.tainted,
        )
        return origin if lower_to is None else cap(origin, lower_to)


# A person at their own terminal (``reverie write``) is the owner on a direct channel.
OWNER_AT_CLI = Author(sender="owner", owner="owner")
# A connected MCP client: the agent itself; its session kind is not known to us.
CONNECTED_AGENT = Author(session_kind=None)


__all__ = [
    "CONNECTED_AGENT",
    "EXTERNAL",
    "OWNER_AT_CLI",
    "PROMOTABLE_ORIGINS",
    "Author",
    "Channel",
    "Origin",
    "SessionKind",
    "Source",
    "cap",
    "is_promotable",
    "lowest",
    "origin_for",
]
