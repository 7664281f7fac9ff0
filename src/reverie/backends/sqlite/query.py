"""Reads of the SQLite index: the keyword lane (FTS5), the chunks of the files a query
names, candidate rows with their ranking notes and provenance (the vector lane:
:mod:`.vector_lane`; the trigger rows: :mod:`.trigger_rows`; the rows parsed alike on
every backend: :mod:`reverie.storage.index.rows`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import TYPE_CHECKING

import sqlean as sqlite3

from ...storage.index.rows import Candidate
from ...tokens import fts_query
from .db import get_meta, index_version

if TYPE_CHECKING:
    from ...storage.index.path_lane import PathLane

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
    in rowid order, so an incremental index and a rebuild pick the same candidates.
    Only chunks that share their score with another are looked up: a location orders
    nothing else (a search's 24 cosines rarely tie)."""
    times = Counter(scores.values())
    tied = [cid for cid, v in scores.items() if times[v] > 1]
    where = _locations(conn, tied) if tied else {}
    order = sorted(scores, key=lambda cid: (-scores[cid], where.get(cid, _LAST)))
    return {cid: scores[cid] for cid in order[:k]}


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


def path_matches(lane: PathLane, conn: sqlite3.Connection, query: str) -> dict[str, int]:
    """:meth:`PathLane.match_in` over this index's source registry."""
    paths = lambda: (str(r[0]) for r in conn.execute("SELECT path FROM sources"))  # noqa: E731
    return lane.match_in(index_version(conn), paths, query)


def path_chunks(conn: sqlite3.Connection, tiers: dict[str, int], k: int) -> dict[int, int]:
    """chunk id -> tier, the first ``k`` chunks of each matched file."""
    out: dict[int, int] = {}
    for path, tier in tiers.items():
        for (cid,) in conn.execute(
            "SELECT id FROM chunks WHERE path = ? ORDER BY start_line, part LIMIT ?", (path, k)
        ):
            out[int(cid)] = tier
    return out


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
        out += [Candidate.of(r, cosines=cosines, bm25=bm25, tiers=tiers) for r in rows]
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


def is_dirty(conn: sqlite3.Connection) -> bool:
    """Files changed since the last complete sync (or the index was never synced)."""
    return get_meta(conn, "dirty", "1") == "1" or get_meta(conn, "last_sync") is None


__all__ = [
    "entry_order",
    "fetch_candidates",
    "is_dirty",
    "keyword_lane",
    "path_chunks",
    "path_matches",
    "top_by_location",
]
