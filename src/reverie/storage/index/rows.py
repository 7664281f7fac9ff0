"""Row types read from the index: plain data, no SQL (pure)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from ...provenance.origin import Origin, SessionKind
from ...provenance.paths import SourceKind


@dataclass(frozen=True)
class Candidate:
    """One chunk as a search lane found it, with everything ranking needs."""

    chunk_id: int
    path: str
    start_line: int
    end_line: int
    text: str
    kind: SourceKind
    day: date | None
    origin: Origin
    importance: int | None = None
    projects: tuple[str, ...] = ()
    cosine: float | None = None
    bm25: float | None = None  # FTS5 rank (negative; more negative is better)
    path_tier: int = 0
    session_kind: SessionKind | None = None


@dataclass(frozen=True)
class TriggerRow:
    """A curated chunk that carries trigger phrases (trailers already parsed)."""

    chunk_id: int
    path: str
    start_line: int
    end_line: int
    text: str
    kind: SourceKind
    origin: Origin
    phrases: tuple[str, ...]
    projects: tuple[str, ...]


__all__ = ["Candidate", "TriggerRow"]
