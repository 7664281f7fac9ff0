"""Row types read from the index: plain data, no SQL (pure)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING

from ...provenance.origin import Origin, SessionKind
from ...provenance.paths import SourceKind

if TYPE_CHECKING:
    import numpy as np


@dataclass(frozen=True)
class LaneScores:
    """What the lanes found, by chunk id: cosine, FTS5 bm25 rank, path tier."""

    cosines: dict[int, float]
    bm25: dict[int, float]
    tiers: dict[int, int]


NO_SCORES = LaneScores({}, {}, {})
Vectors = Iterable["np.ndarray | None"]  # one per chunk (None: not embedded), streamed


@dataclass(frozen=True)
class SourceRow:
    """A file's entry in the source registry, as a sync writes it with its chunks."""

    path: str
    kind: str
    day: str | None
    digest: str
    size: int
    mtime_ns: int
    generation: int
    indexed_at: str


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
