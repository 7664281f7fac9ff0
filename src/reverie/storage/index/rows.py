"""Row types read from the index: plain data, no SQL (pure), and the rows every backend
reads parsed alike (:meth:`Candidate.of`; the trigger rows apart, in
:mod:`.trigger_rows`, so the per-prompt hook never imports these)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date
from functools import lru_cache
from typing import TYPE_CHECKING, Any

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

    @classmethod
    def of(
        cls,
        r: tuple[Any, ...],
        *,
        cosines: dict[int, float],
        bm25: dict[int, float],
        tiers: dict[int, int],
    ) -> Candidate:
        """One row (id, path, start, end, text, kind, day, origin, importance, projects,
        session kind) with its lane scores, as ranking reads it (both backends)."""
        cid = int(r[0])
        return cls(
            chunk_id=cid,
            path=r[1],
            start_line=r[2],
            end_line=r[3],
            text=r[4],
            kind=_kind(r[5]),
            day=date.fromisoformat(r[6]) if r[6] else None,
            origin=_origin(r[7]),
            importance=r[8],
            projects=_projects(r[9]),
            cosine=cosines.get(cid),
            bm25=bm25.get(cid),
            path_tier=tiers.get(cid, 0),
            session_kind=_session_kind(r[10]),
        )


# a search parses ~50 rows whose kinds, origins and project lists repeat: each column's
# few values parsed once (the results are immutable; a bounded cache)
@lru_cache(maxsize=64)
def _kind(value: str | None) -> SourceKind:
    return SourceKind.parse(value)


@lru_cache(maxsize=64)
def _origin(value: str | None) -> Origin:
    return Origin.parse(value) or Origin.UNTRUSTED


@lru_cache(maxsize=64)
def _session_kind(value: str | None) -> SessionKind | None:
    return SessionKind.parse(value)


@lru_cache(maxsize=1024)
def _projects(value: str) -> tuple[str, ...]:
    return tuple(json.loads(value))


__all__ = ["Candidate", "LaneScores", "SourceRow"]
