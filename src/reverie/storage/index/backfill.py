"""Vectors an earlier (keyword-only) sync could not compute, or a big file written
keyword-only to keep a sync's memory bounded (issue 22.12), filled in ``batch`` at a time."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .sync import Syncer, SyncStats


def backfill(syncer: Syncer, stats: SyncStats, batch: int = 256) -> None:
    """Fill in vectors that an earlier (keyword-only) sync could not compute."""
    if syncer.pipeline is None or syncer.breaker_open:
        return
    last = 0
    while True:
        rows = syncer.ix.vectorless_chunks(after=last, limit=batch)
        if not rows:
            return
        last = rows[-1][0]
        vectors = syncer._embed([r[1] for r in rows], stats)
        with syncer.ix.transaction():
            syncer.ix.set_vectors(
                [
                    (cid, vec)
                    for (cid, _), vec in zip(rows, vectors, strict=True)
                    if vec is not None
                ],
            )
        if syncer.breaker_open:
            return


__all__ = ["backfill"]
