"""Vectors an earlier (keyword-only) sync could not compute, or a big file written
keyword-only to keep a sync's memory bounded (issue 22.12), filled in ``batch`` at a time."""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import store
from .db import transaction

if TYPE_CHECKING:
    from .sync import Syncer, SyncStats


def backfill(syncer: Syncer, stats: SyncStats, batch: int = 256) -> None:
    """Fill in vectors that an earlier (keyword-only) sync could not compute."""
    if syncer.pipeline is None or syncer.breaker_open:
        return
    last = 0
    while True:
        rows = store.vectorless_chunks(syncer.conn, after=last, limit=batch)
        if not rows:
            return
        last = rows[-1][0]
        vectors = syncer._embed([r[1] for r in rows], stats)
        with transaction(syncer.conn):
            store.set_vectors(
                syncer.conn,
                [
                    (cid, vec)
                    for (cid, _), vec in zip(rows, vectors, strict=True)
                    if vec is not None
                ],
            )
        if syncer.breaker_open:
            return


__all__ = ["backfill"]
