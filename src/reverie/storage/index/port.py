"""The index port: what recall and the sync ask of the derived index, whatever holds it,
split by use: :class:`IndexReader` (recall), :class:`WarmLanes` (a long-running
process), :class:`IndexWriter` (the sync), :class:`IndexCurator` (forget and trust);
:class:`IndexPort` is all four, what a backend gives.

Each backend of :mod:`reverie.backends` implements it:
:class:`reverie.backends.sqlite.index.SqliteIndex` (one person, one SQLite file) and
:class:`reverie.backends.postgres.index.PgIndex` (one tenant's rows in a shared
PostgreSQL). The port returns raw lane scores and rows; fusion, decay, MMR, snippets
and neighbours stay in Python (:mod:`reverie.recall`), so both backends rank alike.

Scores mean the same on both: the keyword lane answers FTS5 ``bm25()`` ranks
(negative, best first), the vector lane cosine similarities, equal scores in content
order (path, start line, part), never in row-id order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from ..chunking import Chunk
from ..embedders.base import EmbeddingCache  # the one protocol (R-STORE-6)
from .rows import Candidate, LaneScores, SourceRow, Vectors
from .trigger_rows import TriggerRow

if TYPE_CHECKING:
    import numpy as np


@runtime_checkable
class IndexReader(Protocol):
    """What recall reads (lane 1, triggers, status, freshness)."""

    backend: str

    def reading(self) -> AbstractContextManager[None]:
        """The scope of one search: meta values may be read once for all of it."""
        ...

    def meta(self, key: str, default: str | None = None) -> str | None: ...

    def version(self) -> str:
        """Changes whenever a sync changed a row (warm lanes reload on a change)."""
        ...

    def keyword_top(self, query: str, k: int, drop: frozenset[str]) -> dict[int, float]: ...

    def vector_top(self, qvec: np.ndarray, k: int) -> dict[int, float]: ...

    def vectors(self, ids: Iterable[int]) -> dict[int, np.ndarray]: ...

    def path_chunks(self, query: str, k: int) -> dict[int, int]:
        """chunk id -> path tier (3 full path, 2 basename, 1 stem) of files the query names."""
        ...

    def candidates(self, ids: Iterable[int], scores: LaneScores) -> list[Candidate]: ...

    def replacing(self, targets: Iterable[str]) -> dict[str, list[int]]:
        """line key (``path@hash``) -> the chunks whose lines name it as the line they
        replace (a version link, :mod:`reverie.provenance.links`)."""
        ...

    def has_links(self) -> bool:
        """Whether any chunk names a line it replaces: without one, :meth:`replacing`
        finds nothing for any key, and a search need not compute its hits' keys."""
        ...

    def entry_order(self, paths: Iterable[str]) -> dict[str, list[tuple[int, bool]]]: ...

    def trigger_rows(self) -> list[TriggerRow]: ...

    def is_dirty(self) -> bool: ...

    def sources(self) -> dict[str, tuple[str, int, int, int]]:
        """path -> (hash, size, mtime_ns, generation): the source registry."""
        ...

    def counts(self, *, embedder: str | None) -> dict[str, Any]: ...


class WarmLanes(Protocol):
    """What a long-running process (the daemon, an MCP server) asks once."""

    def warm(self) -> None:
        """Load what makes repeated searches fast."""
        ...


class IndexWriter(Protocol):
    """What the sync writes. Writes run inside :meth:`transaction`: a file's chunks,
    keyword rows, vectors, side tables and registry row commit together or not at all."""

    @property
    def cache(self) -> EmbeddingCache: ...

    def ensure_schema(self) -> bool:
        """Create or migrate; True when the index was reset (rebuild from the files)."""
        ...

    def transaction(self) -> AbstractContextManager[Any]: ...

    def set_meta(self, key: str, value: Any) -> None: ...

    def has_vectors(self) -> bool: ...

    def create_vectors(self, dims: int) -> None:
        """(Re)create the vector store for ``dims``; every chunk becomes vectorless."""
        ...

    def write_file(self, source: SourceRow, chunks: Sequence[Chunk], vectors: Vectors) -> None: ...

    def touch_source(self, rel: str, *, size: int, mtime_ns: int) -> None: ...

    def delete_file(self, rel: str) -> None: ...

    def missing_vectors(self) -> int: ...

    def vectorless_chunks(self, *, after: int, limit: int) -> list[tuple[int, str]]: ...

    def set_vectors(self, pairs: Sequence[tuple[int, np.ndarray]]) -> None: ...

    def dirty_seq(self) -> int: ...

    def mark_dirty(self) -> None:
        """Files changed (one transaction of its own)."""
        ...


class IndexCurator(Protocol):
    """What forget and trust (curation) ask of the index."""

    remains: tuple[str, ...]  # where a forget's deleted bytes stay that it cannot reach

    def chunk_texts(self, paths: Sequence[str]) -> list[str]:
        """The chunk texts of ``paths`` (a forget finds the cached vectors of its lines)."""
        ...

    def drop_cached_hashes(self, hashes: Sequence[str]) -> int:
        """Delete cached embeddings of these text hashes no chunk holds any more."""
        ...

    def unregister_under(self, folder: str) -> None:
        """Forget the registry rows under ``folder`` (the next sync re-reads them)."""
        ...

    def scrub(self) -> bool:
        """Rewrite the store so no deleted row's bytes remain where it can; True when
        nothing was left behind (False: try again later)."""
        ...


@runtime_checkable
class IndexPort(IndexReader, WarmLanes, IndexWriter, IndexCurator, Protocol):
    """The whole port a backend gives (:mod:`reverie.backends`): recall's reads, the warm
    lanes, the sync's writes and curation's deletes. A consumer names the part it uses."""

    def close(self) -> None: ...


def counts_report(
    meta: Callable[[str], str | None],
    *,
    schema: tuple[int, bool],
    files: int,
    chunks: int,
    vectors: int,
    embedder: str | None,
    dirty: bool,
    origins: dict[str, int],
) -> dict[str, Any]:
    """What an index holds: files, chunks, vectors (missing, and stale when
    ``embedder``, the current embedder's label, is not the one that indexed them),
    origins, and its sync metadata (``meta``: the index's meta look-up)."""
    stored = meta("embedder")
    stale = vectors if (embedder is not None and stored is not None and stored != embedder) else 0
    return {
        "schema_version": schema[0],
        "schema_current": schema[1],
        "files": files,
        "chunks": chunks,
        "vectors": vectors,
        "vectors_missing": chunks - vectors,
        "vectors_stale": stale,
        "embedder": embedder or "none",
        "embedder_indexed": stored,
        "tokenizer": meta("tokenizer"),
        "chunking_version": meta("chunking_version"),
        "last_sync": meta("last_sync"),
        "dirty": dirty,
        # an explicitly configured embedder that failed at the last sync (R-RECALL-4)
        "embedder_error": meta("embedder_error") or None,
        "origins": origins,
    }


class PortTriggers:
    """An index port as the trigger index's source (:class:`reverie.recall.context.
    TriggerSource`): its version and its trigger-carrying rows."""

    def __init__(self, index: IndexReader) -> None:
        self.index = index

    def version(self) -> str:
        return self.index.version()

    def rows(self) -> list[TriggerRow]:
        return self.index.trigger_rows()


__all__ = [
    "EmbeddingCache",
    "IndexCurator",
    "IndexPort",
    "IndexReader",
    "IndexWriter",
    "PortTriggers",
    "WarmLanes",
    "counts_report",
]
