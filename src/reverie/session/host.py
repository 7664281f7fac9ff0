"""The session's port to its host, and the small records it hands back."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from ..dreaming.directives import DirectiveHost
from ..intents import Intents
from ..llm.base import LLM
from ..llm.factory import Purpose
from ..provenance.origin import Author, Origin, Source
from ..recall.context import TurnContext
from ..recall.escalation import Target
from ..write.ingest import IngestResult
from ..write.journal import Appended

if TYPE_CHECKING:  # (built on first use: a session's directive that waits for the owner)
    from ..curation.service import Curation

ROLE = {
    Source.OWNER: "user",
    Source.MEMBER: "user",
    Source.ASSISTANT: "assistant",
    Source.TOOL: "tool",
    Source.WEB: "tool",
    Source.IMPORT: "tool",
    Source.SCAFFOLD: "system",
    Source.RECALLED: "system",
}

TURN_ROLES = ("user", "assistant")


@dataclass(frozen=True)
class Recorded:
    """One recorded message: its sequence number and computed origin."""

    seq: int
    origin: Origin
    source: Source


class SessionHost(DirectiveHost, Protocol):
    """What a session needs from its host (the facade implements it): the clock,
    settings, workspace and ``mark_dirty`` of :class:`DirectiveHost`, and these."""

    @property
    def sessions_dir(self) -> Path: ...

    @property
    def intents(self) -> Intents: ...

    @property
    def curation(self) -> Curation: ...

    def context(
        self, message: str, *, active_projects: tuple[str, ...] = (), target: Target | None = None
    ) -> TurnContext: ...

    def write(
        self,
        text: str,
        *,
        source: Source,
        author: Author,
        info: dict[str, str] | None = None,
        project: str | None = None,
    ) -> Appended: ...

    def ingest(self, transcript: Path) -> IngestResult: ...

    def llm(self, purpose: Purpose = "main") -> LLM | None: ...


def said_at(at: datetime | None, now: datetime) -> datetime:
    """When a message was said: ``at`` in the clock's zone, never later than ``now``."""
    if at is None:
        return now
    if now.tzinfo is None:  # a naive clock: compare as naive local times
        return min(at.astimezone().replace(tzinfo=None) if at.tzinfo else at, now)
    if at.tzinfo is None:
        at = at.replace(tzinfo=now.tzinfo)
    return min(at.astimezone(now.tzinfo), now)


__all__ = ["ROLE", "TURN_ROLES", "Recorded", "SessionHost", "said_at"]
