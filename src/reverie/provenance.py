"""Provenance: the closed set of origin classes and session kinds (R-PROV-1..3).

Pure code. The class of a piece of content is computed from where it came from
(path, session kind, sender), never from what it says.
"""

from __future__ import annotations

from enum import Enum


class Origin(str, Enum):
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


class SessionKind(str, Enum):
    INTERACTIVE = "interactive"
    CRON = "cron"
    HEARTBEAT = "heartbeat"
    SUBAGENT = "subagent"

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


__all__ = ["PROMOTABLE_ORIGINS", "Origin", "SessionKind", "cap", "is_promotable", "lowest"]
