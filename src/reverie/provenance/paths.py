"""Path classification (pipeline step 2): content lies, paths do not.

Pure code. Given a workspace-relative POSIX path, decide the source kind, whether it
is a curated root, its default origin class, the most trust any line in it may reach,
and whether per-line origin markers are honoured. Anything unrecognised fails closed.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from datetime import date
from enum import StrEnum

from ..records import Record
from .origin import Origin


class SourceKind(StrEnum):
    """What kind of file a chunk came from (decided by its path)."""

    CURATED = "curated"  # MEMORY.md, USER.md
    INSTRUCTIONS = "instructions"  # AGENTS.md
    JOURNAL = "journal"  # memory/YYYY-MM-DD.md
    TRANSCRIPT = "transcript"  # memory/.dreams/session-corpus/**
    IMPORT = "import"  # memory/imports/**
    NOTE = "note"  # any other Markdown file: unrecognised, fails closed
    REVIEW = "review"  # DREAMS.md: an audit log for people, never indexed
    STATE = "state"  # memory/.dreams/** machine state, never indexed

    @classmethod
    def parse(cls, value: str | None) -> SourceKind:
        """The kind named by ``value``; anything else fails closed to ``note``."""
        try:
            return cls(value or "")
        except ValueError:
            return cls.NOTE


class PathClass(Record):
    """What a path is: its kind, default origin, trust ceiling (no line of the file may
    be more trusted), whether per-line origin markers are honoured (journals,
    transcripts), and the day in its name (drives journal decay)."""

    __slots__ = ("ceiling", "day", "default_origin", "kind", "markers")

    def __init__(
        self,
        kind: SourceKind,
        default_origin: Origin,
        ceiling: Origin,
        markers: bool,
        day: date | None = None,
    ) -> None:
        self.kind, self.default_origin, self.ceiling = kind, default_origin, ceiling
        self.markers, self.day = markers, day

    @property
    def curated(self) -> bool:
        return self.kind is SourceKind.CURATED

    @property
    def indexed(self) -> bool:
        return self.kind not in (SourceKind.REVIEW, SourceKind.STATE)

    @property
    def evergreen(self) -> bool:
        return self.day is None


_DAY_RE = re.compile(r"(\d{4})-(\d{2})-(\d{2})\.md")
CURATED_FILES = ("MEMORY.md", "USER.md")
REVIEW_FILES = ("DREAMS.md", "INTENTS.md")  # INTENTS.md: the standing intents' view
SESSION_CORPUS = "memory/.dreams/session-corpus/"
# a group conversation's lines, one folder per agent and session: never shown to another
# conversation (search leaves them out, so lanes 1 and 2 and dreaming never see them)
GROUP_CORPUS = SESSION_CORPUS + "group/"


def group_corpus(agent: str, session: str) -> str:
    """The corpus folder of one group conversation (workspace-relative, no trailing /)."""
    return f"{GROUP_CORPUS}{agent}/{session}"


def in_group_corpus(relpath: str) -> bool:
    """``relpath`` holds lines of a group conversation (:data:`GROUP_CORPUS`)."""
    return relpath.startswith(GROUP_CORPUS)


def _day(name: str) -> date | None:
    m = _DAY_RE.fullmatch(name)
    if not m:
        return None
    try:
        return date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
    except ValueError:
        return None


def under(relpath: str, folders: Collection[str]) -> bool:
    """``relpath`` lies inside one of ``folders`` (workspace-relative, no trailing /)."""
    return any(relpath.startswith(f.rstrip("/") + "/") for f in folders if f.strip("/"))


def classify(relpath: str, trusted: Collection[str] = ()) -> PathClass:
    """Classify a workspace-relative POSIX path (already checked to stay inside).

    ``trusted``: folders the owner declared owner-written (``reverie trust``, kept in
    the state dir by the caller). They only change what would otherwise be an
    unrecognised note: a fixed path (journals, imports, the session corpus, machine
    state, hidden folders) keeps its class whatever the owner trusts."""
    parts = relpath.split("/")
    name = parts[-1]
    if len(parts) == 1:
        if name in CURATED_FILES:
            return PathClass(SourceKind.CURATED, Origin.OWNER, Origin.OWNER, markers=False)
        if name == "AGENTS.md":
            return PathClass(SourceKind.INSTRUCTIONS, Origin.OWNER, Origin.OWNER, markers=False)
        if name in REVIEW_FILES:  # views for people: never indexed, never injected
            return PathClass(SourceKind.REVIEW, Origin.SYSTEM, Origin.SYSTEM, markers=False)
    if not name.endswith(".md"):
        return PathClass(SourceKind.STATE, Origin.UNTRUSTED, Origin.UNTRUSTED, markers=False)
    if parts[0] == "memory" and len(parts) >= 2:
        if relpath.startswith(SESSION_CORPUS):
            return PathClass(
                SourceKind.TRANSCRIPT, Origin.UNTRUSTED, Origin.OWNER, markers=True, day=_day(name)
            )
        if parts[1] == ".dreams":
            return PathClass(SourceKind.STATE, Origin.SYSTEM, Origin.SYSTEM, markers=False)
        if parts[1] == "imports":
            return PathClass(SourceKind.IMPORT, Origin.UNTRUSTED, Origin.UNTRUSTED, markers=True)
        day = _day(name)
        if len(parts) == 2 and day is not None:
            return PathClass(SourceKind.JOURNAL, Origin.AGENT, Origin.OWNER, markers=True, day=day)
    if any(p.startswith(".") for p in parts):
        return PathClass(SourceKind.STATE, Origin.UNTRUSTED, Origin.UNTRUSTED, markers=False)
    if parts[0] != "memory" and under(relpath, trusted):
        return PathClass(SourceKind.NOTE, Origin.OWNER, Origin.OWNER, markers=True)
    return PathClass(SourceKind.NOTE, Origin.UNTRUSTED, Origin.UNTRUSTED, markers=True)


__all__ = [
    "CURATED_FILES",
    "GROUP_CORPUS",
    "REVIEW_FILES",
    "SESSION_CORPUS",
    "PathClass",
    "SourceKind",
    "classify",
    "group_corpus",
    "in_group_corpus",
    "under",
]
