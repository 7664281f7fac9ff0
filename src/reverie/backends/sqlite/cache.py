"""The embedding cache in SQLite (R-STORE-6): keyed by (provider, model, provider
key, sha256 of text), so the same paragraph is never embedded (paid for) twice."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

import sqlean as sqlite3

from ...storage.embedders.base import CachedRow, EmbedderIdentity
from .db import transaction

if TYPE_CHECKING:
    import numpy as np
else:
    from ...storage.lazy import numpy as np  # loaded on first use

_CHUNK = 500


class SqliteEmbeddingCache:
    """The embedding cache (R-STORE-6), in the index, LRU-capped."""

    def __init__(self, conn: sqlite3.Connection, *, cap_rows: int = 50_000) -> None:
        self.conn = conn
        self.cap_rows = cap_rows

    def get_many(self, identity: EmbedderIdentity, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        found: dict[str, np.ndarray] = {}
        unique = list(dict.fromkeys(hashes))
        for i in range(0, len(unique), _CHUNK):
            part = unique[i : i + _CHUNK]
            marks = ",".join("?" * len(part))
            rows = self.conn.execute(
                f"SELECT hash, vec FROM embed_cache WHERE provider = ? AND model = ? AND pkey = ? "
                f"AND hash IN ({marks})",
                (identity.provider, identity.model, identity.key, *part),
            ).fetchall()
            for h, blob in rows:
                vec = np.frombuffer(blob, dtype=np.float32)
                if vec.shape[0] == identity.dims or identity.dims == 0:
                    found[h] = vec
        if found:
            now = time.time_ns()
            with transaction(self.conn):
                self.conn.executemany(
                    "UPDATE embed_cache SET used = ? WHERE provider = ? AND model = ? AND pkey = ? AND hash = ?",
                    [(now, identity.provider, identity.model, identity.key, h) for h in found],
                )
        return found

    def put_many(self, identity: EmbedderIdentity, items: dict[str, np.ndarray]) -> None:
        if not items:
            return
        now = time.time_ns()
        with transaction(self.conn):
            self.conn.executemany(
                "INSERT OR REPLACE INTO embed_cache(provider, model, pkey, hash, vec, used) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                [
                    (
                        identity.provider,
                        identity.model,
                        identity.key,
                        h,
                        np.asarray(v, np.float32).tobytes(),
                        now,
                    )
                    for h, v in items.items()
                ],
            )

    def export(self) -> list[CachedRow]:
        return [
            (str(a), str(b), str(c), str(d), bytes(e), int(f))
            for a, b, c, d, e, f in self.conn.execute(
                "SELECT provider, model, pkey, hash, vec, used FROM embed_cache ORDER BY used"
            )
        ]

    def adopt(self, rows: Sequence[CachedRow]) -> None:
        with transaction(self.conn):
            self.conn.executemany(
                "INSERT OR IGNORE INTO embed_cache(provider, model, pkey, hash, vec, used) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                rows,
            )

    def trim(self) -> int:
        """Drop the least recently used rows beyond the cap. Returns rows dropped."""
        (rows,) = self.conn.execute("SELECT count(*) FROM embed_cache").fetchone()
        excess = rows - self.cap_rows
        if excess <= 0:
            return 0
        with transaction(self.conn):
            self.conn.execute(
                "DELETE FROM embed_cache WHERE (provider, model, pkey, hash) IN "
                "(SELECT provider, model, pkey, hash FROM embed_cache ORDER BY used LIMIT ?)",
                (excess,),
            )
        return excess


__all__ = ["SqliteEmbeddingCache"]
