"""Vectors an earlier (keyword-only) sync could not compute, or a big file written
keyword-only to keep a sync's memory bounded (issue 22.12), filled in ``batch`` at a time.
The sync hands over its index and how it embeds; nothing here knows the syncer."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .port import IndexWriter

Embed = Callable[[list[str]], Sequence[Any]]  # texts -> a vector (or None) each


def backfill(ix: IndexWriter, embed: Embed, stopped: Callable[[], bool], batch: int = 256) -> None:
    """Fill in the vectors of the chunks that have none, ``batch`` at a time, until
    none is left or ``stopped()`` (the embedder failed)."""
    last = 0
    while not stopped():
        rows = ix.vectorless_chunks(after=last, limit=batch)
        if not rows:
            return
        last = rows[-1][0]
        vectors = embed([r[1] for r in rows])
        with ix.transaction():
            ix.set_vectors(
                [(cid, vec) for (cid, _), vec in zip(rows, vectors, strict=True) if vec is not None]
            )


__all__ = ["backfill"]
