"""Query adapters over the index: the keyword lane (FTS5), exact path matches, and
candidate rows with their ranking notes and provenance (the vector lane:
:mod:`reverie.storage.index.vector_lane`)."""

from __future__ import annotations

import json
import posixpath
from collections.abc import Callable, Iterable
from datetime import date
from typing import Any

import sqlean as sqlite3

from ...provenance.origin import Origin, SessionKind
from ...provenance.paths import SourceKind
from ...tokens import fts_query
from .db import get_meta
from .rows import Candidate, TriggerRow

_MARKS = 900
VEC_K_MAX = 4096  # sqlite-vec's largest k
_LAST = ("\U0010ffff", 0, 0)


def _locations(conn: sqlite3.Connection, ids: Iterable[int]) -> dict[int, tuple[str, int, int]]:
    """chunk id -> (path, start_line, part): where its content is, independent of rowids."""
    out: dict[int, tuple[str, int, int]] = {}
    id_list = list(ids)
    for i in range(0, len(id_list), _MARKS):
        part = id_list[i : i + _MARKS]
        for r in conn.execute(
            f"SELECT id, path, start_line, part FROM chunks WHERE id IN ({','.join('?' * len(part))})",
            part,
        ):
            out[int(r[0])] = (str(r[1]), int(r[2]), int(r[3]))
    return out


def top_by_location(conn: sqlite3.Connection, scores: dict[int, float], k: int) -> dict[int, float]:
    """The ``k`` highest scores; equal scores in content order (path, start line), never
    in rowid order, so an incremental index and a rebuild pick the same candidates."""
    where = _locations(conn, scores)
    order = sorted(scores, key=lambda cid: (-scores[cid], where.get(cid, _LAST)))
    return {cid: scores[cid] for cid in order[:k]}


def index_version(conn: sqlite3.Connection) -> str:
    return get_meta(conn, "index_version", "0") or "0"


def keyword_lane(
    conn: sqlite3.Connection, text: str, k: int, drop: frozenset[str] = frozenset()
) -> dict[int, float]:
    """chunk id -> FTS5 bm25 rank (negative), best first, equal ranks in content order;
    never raises on syntax. ``drop``: query terms left out (stop words)."""
    match = fts_query(text, drop=drop)
    if match is None:
        return {}
    try:
        rows = conn.execute(
            "SELECT f.rowid, bm25(chunks_fts) AS r FROM chunks_fts f JOIN chunks c "
            "ON c.id = f.rowid WHERE chunks_fts MATCH ? "
            "ORDER BY r, c.path, c.start_line, c.part LIMIT ?",
            (match, k),
        ).fetchall()
    except sqlite3.OperationalError:
        return {}
    return {int(r[0]): float(r[1]) for r in rows}


class PathLane:
    """Exact path matches: full path (3) > basename (2) > stem (1)."""

    def __init__(self) -> None:
        self._version: str | None = None
        self._maps: tuple[dict[str, str], dict[str, list[str]], dict[str, list[str]]] = ({}, {}, {})

    def _refresh(self, version: str, paths: Callable[[], Iterable[str]]) -> None:
        if version == self._version:
            return
        full: dict[str, str] = {}
        base: dict[str, list[str]] = {}
        stem: dict[str, list[str]] = {}
        for path in paths():
            name = posixpath.basename(path)
            full[path.lower()] = path
            base.setdefault(name.lower(), []).append(path)
            stem.setdefault(posixpath.splitext(name)[0].lower(), []).append(path)
        self._maps = (full, base, stem)
        self._version = version

    def match(self, conn: sqlite3.Connection, query: str) -> dict[str, int]:
        paths = lambda: (str(r[0]) for r in conn.execute("SELECT path FROM sources"))  # noqa: E731
        return self.match_in(index_version(conn), paths, query)

    def match_in(
        self, version: str, paths: Callable[[], Iterable[str]], query: str
    ) -> dict[str, int]:
        """:meth:`match` over the registry's ``paths`` at index ``version`` (read only
        when the version moved)."""
        self._refresh(version, paths)
        full, base, stem = self._maps
        tiers: dict[str, int] = {}
        whole = query.strip().lower()
        words = {w.strip("`'\"()[]<>,;?!") for w in whole.split()} | {whole}
        for w in words:
            if not w:
                continue
            if w in full:
                tiers[full[w]] = max(tiers.get(full[w], 0), 3)
            for p in base.get(w, ()):
                tiers[p] = max(tiers.get(p, 0), 2)
            # a bare word like "user" is content, not a file name: the stem tier needs the
            # whole query to be the stem, or a token shaped like a file name (2026-05-01)
            if w == whole or not w.isalpha():
                for p in stem.get(w, ()):
                    tiers[p] = max(tiers.get(p, 0), 1)
        return tiers


def path_chunks(conn: sqlite3.Connection, tiers: dict[str, int], k: int) -> dict[int, int]:
    """chunk id -> tier, the first ``k`` chunks of each matched file."""
    out: dict[int, int] = {}
    for path, tier in tiers.items():
        for (cid,) in conn.execute(
            "SELECT id FROM chunks WHERE path = ? ORDER BY start_line, part LIMIT ?", (path, k)
        ):
            out[int(cid)] = tier
    return out


def candidate_row(
    r: tuple[Any, ...],
    *,
    cosines: dict[int, float],
    bm25: dict[int, float],
    tiers: dict[int, int],
) -> Candidate:
    """One row (id, path, start, end, text, kind, day, origin, importance, projects,
    session kind) with its lane scores, as ranking reads it (both backends)."""
    cid = int(r[0])
    return Candidate(
        chunk_id=cid,
        path=r[1],
        start_line=r[2],
        end_line=r[3],
        text=r[4],
        kind=SourceKind.parse(r[5]),
        day=date.fromisoformat(r[6]) if r[6] else None,
        origin=Origin.parse(r[7]) or Origin.UNTRUSTED,
        importance=r[8],
        projects=tuple(json.loads(r[9])),
        cosine=cosines.get(cid),
        bm25=bm25.get(cid),
        path_tier=tiers.get(cid, 0),
        session_kind=SessionKind.parse(r[10]),
    )


def fetch_candidates(
    conn: sqlite3.Connection,
    ids: Iterable[int],
    *,
    cosines: dict[int, float],
    bm25: dict[int, float],
    tiers: dict[int, int],
) -> list[Candidate]:
    out: list[Candidate] = []
    id_list = list(dict.fromkeys(ids))
    for i in range(0, len(id_list), _MARKS):
        part = id_list[i : i + _MARKS]
        rows = conn.execute(
            "SELECT c.id, c.path, c.start_line, c.end_line, c.text, c.kind, c.day, p.origin, "
            "n.importance, n.projects, p.session_kind FROM chunks c JOIN provenance p ON p.chunk_id = c.id "
            f"JOIN notes n ON n.chunk_id = c.id WHERE c.id IN ({','.join('?' * len(part))})",
            part,
        ).fetchall()
        out += [candidate_row(r, cosines=cosines, bm25=bm25, tiers=tiers) for r in rows]
    return out


def entry_order(
    conn: sqlite3.Connection, paths: Iterable[str]
) -> dict[str, list[tuple[int, bool]]]:
    """Per journal or transcript file, its chunks in line order: (chunk id, is a
    heading). What the neighbours of a hit are (:mod:`reverie.recall.neighbours`)."""
    out: dict[str, list[tuple[int, bool]]] = {}
    for path in dict.fromkeys(paths):
        rows = conn.execute(
            "SELECT id, substr(ltrim(text), 1, 1) = '#' FROM chunks WHERE path = ? "
            "AND kind IN ('journal', 'transcript') ORDER BY start_line, part",
            (path,),
        ).fetchall()
        if rows:
            out[path] = [(int(r[0]), bool(r[1])) for r in rows]
    return out


TRIGGER_ROWS_SQL = (
    "SELECT c.id, c.path, c.start_line, c.end_line, c.text, c.kind, p.origin, n.triggers, "
    "n.projects FROM chunks c JOIN notes n ON n.chunk_id = c.id JOIN provenance p "
    "ON p.chunk_id = c.id WHERE c.kind = 'curated' AND n.triggers != '[]'"
)


def trigger_row(r: tuple[Any, ...]) -> TriggerRow:
    """One raw row of :data:`TRIGGER_ROWS_SQL`, parsed."""
    return TriggerRow(
        chunk_id=r[0],
        path=r[1],
        start_line=r[2],
        end_line=r[3],
        text=r[4],
        kind=SourceKind.parse(r[5]),
        origin=Origin.parse(r[6]) or Origin.UNTRUSTED,
        phrases=tuple(json.loads(r[7])),
        projects=tuple(json.loads(r[8])),
    )


def trigger_rows(conn: sqlite3.Connection) -> list[TriggerRow]:
    """Every curated chunk that carries a trigger trailer (the only ones that can fire)."""
    return [trigger_row(r) for r in conn.execute(TRIGGER_ROWS_SQL)]


class TriggerRows:
    """The index as a :class:`reverie.recall.context.TriggerSource`."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def version(self) -> str:
        return index_version(self.conn)

    def rows(self) -> list[TriggerRow]:
        return trigger_rows(self.conn)

    def raw(self) -> list[tuple[Any, ...]]:
        """The rows unparsed (what a snapshot of the trigger index is keyed on)."""
        return self.conn.execute(TRIGGER_ROWS_SQL).fetchall()

    @staticmethod
    def row(raw: tuple[Any, ...]) -> TriggerRow:
        return trigger_row(raw)


def is_dirty(conn: sqlite3.Connection) -> bool:
    """Files changed since the last complete sync (or the index was never synced)."""
    return get_meta(conn, "dirty", "1") == "1" or get_meta(conn, "last_sync") is None


__all__ = [
    "PathLane",
    "TriggerRows",
    "candidate_row",
    "entry_order",
    "fetch_candidates",
    "index_version",
    "is_dirty",
    "keyword_lane",
    "path_chunks",
    "top_by_location",
    "trigger_rows",
]
