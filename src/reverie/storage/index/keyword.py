"""The keyword lane of a warm process: an in-memory BM25 index kept equal to the
index's FTS5 table (:mod:`reverie.storage.index.bm25` scores as FTS5's ``bm25()``
does), several times faster than an FTS5 query at 100,000 chunks. Every backend feeds
it its rows (:class:`KeywordRows`); SQLite's also keep it between processes
(:class:`KeptRows`), and a one-shot SQLite process never loads it: it adopts the kept
lane when that was made at the index's very version (:meth:`KeywordIndex.adopt`, nothing
read from the index), else keeps querying FTS5
(:class:`reverie.backends.sqlite.index.SqliteIndex`).

Never stale: every search first compares the index version (bumped by every sync
that changes a row) with the one loaded; on a change only the rows that changed are
read (chunk ids with their text hash: an id SQLite reuses for other text counts as
changed) and applied.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:  # numpy loads with the warm lane, never on a one-shot call's path
    from .bm25 import Bm25Index, Doc

COMPACT_AT = 0.3  # rebuild once this share of the loaded rows was deleted


class KeywordRows(Protocol):
    """Where a warm keyword lane reads its rows (one SQLite index, one PostgreSQL tenant)."""

    def version(self) -> str: ...

    def fingerprints(self) -> dict[int, str]:
        """chunk id -> text hash, every chunk."""
        ...

    def docs(self, ids: list[int]) -> list[Doc]: ...


@runtime_checkable
class KeptRows(KeywordRows, Protocol):
    """Rows whose lane is also kept between processes (SQLite: beside the index file,
    :mod:`reverie.backends.sqlite.keyword`), so a warm start reads no row twice."""

    def saved(
        self, *, only_at: str | None = None
    ) -> tuple[dict[str, Any], dict[str, Any], str] | None:
        """The kept lane's state, its arrays and the index version it was made at
        (None: none kept, or not for these rows; ``only_at``: none unless made at that
        index version, its arrays not even mapped)."""
        ...

    def save(self, version: str, state: dict[str, Any], arrays: dict[str, Any]) -> None:
        """Keep the lane made at ``version`` (a failure keeps the older one)."""
        ...


class KeywordIndex:
    """``load`` once (warm processes), then ``top`` answers as FTS5 would."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._version: str | None = None
        self._bm25: Bm25Index | None = None
        self._not_at: str | None = None  # the index version no current snapshot held

    @property
    def warm(self) -> bool:
        return self._bm25 is not None

    def adopt(self, source: KeptRows) -> bool:
        """Warm from the kept lane if it was made at this very index version (its arrays
        memory-mapped; nothing read from the index, nothing written); else False, and
        the backend's own query answers (bringing a kept lane up to date is
        :meth:`load`'s)."""
        with self._lock:
            if self._bm25 is not None:
                return True
            version = source.version()
            bm25 = _from_saved(source, version) if version != self._not_at else None
            if bm25 is None:
                self._not_at = version
                return False
            self._bm25, self._version = bm25, version
            return True

    def load(self, source: KeywordRows) -> None:
        """Load every row, or bring a loaded index up to the index's version."""
        with self._lock:
            self._refresh(source)

    def _refresh(self, source: KeywordRows) -> None:
        from .bm25 import Bm25Index

        version = source.version()
        if self._bm25 is not None and version == self._version:
            return
        kept = source if isinstance(source, KeptRows) else None
        bm25 = self._bm25
        if bm25 is None and kept is not None:  # (SQLite: beside the index)
            current = _from_saved(kept, version)
            if current is not None:
                self._bm25, self._version = current, version  # made at this version
                return
            bm25 = _from_saved(kept)
        if bm25 is None or bm25.dead_share > COMPACT_AT:
            bm25 = Bm25Index()
        now = source.fingerprints()
        fresh = not bm25.known
        bm25.remove([cid for cid, (_, h) in bm25.known.items() if now.get(cid) != h])
        new = [cid for cid in now if cid not in bm25.known]
        bm25.add(source.docs(new))
        # built anew or far behind: the next start reads it
        far_behind = fresh or len(new) > max(2000, len(now) // 4)
        if kept is not None and now and far_behind:
            kept.save(version, *bm25.to_parts())
        self._bm25, self._version = bm25, version

    def top(
        self, source: KeywordRows, query: str, k: int, drop: frozenset[str] = frozenset()
    ) -> dict[int, float]:
        """chunk id -> FTS5 rank (negative), best first, equal ranks in content order
        (loaded on the first call)."""
        if self._bm25 is None:
            self.load(source)
        with self._lock:
            if source.version() != self._version:
                self._refresh(source)
            assert self._bm25 is not None
            return self._bm25.top(query, k, drop)


def _from_saved(kept: KeptRows, only_at: str | None = None) -> Bm25Index | None:
    """The BM25 index of the kept lane (``only_at``: only one made at that index
    version), or None (none, another layout)."""
    from .bm25 import Bm25Index

    loaded = kept.saved(only_at=only_at)
    try:
        return Bm25Index.from_parts(loaded[0], loaded[1]) if loaded else None
    except (KeyError, TypeError, AssertionError):  # another layout: built anew
        return None


__all__ = ["KeptRows", "KeywordIndex", "KeywordRows"]
