"""The embedding cache (R-STORE-6) in PostgreSQL, one tenant's rows: keyed by
(tenant, provider, model, provider key, sha256 of text), LRU-capped per tenant."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ...storage.embedders.base import CachedRow, EmbedderIdentity
from .schema import Database

if TYPE_CHECKING:
    import numpy as np
else:
    from ...storage.lazy import numpy as np


class PgEmbeddingCache:
    """:class:`reverie.storage.embedders.base.EmbeddingCache` of tenant ``tenant``."""

    def __init__(self, db: Database, tenant: str, *, cap_rows: int = 50_000) -> None:
        self.db, self.tenant, self.cap_rows = db, tenant, cap_rows

    def get_many(self, identity: EmbedderIdentity, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        key = (self.tenant, identity.provider, identity.model, identity.key)
        with self.db.transaction() as conn:
            rows = conn.execute(
                "SELECT hash, vec FROM embed_cache WHERE tenant_id = %s AND provider = %s "
                "AND model = %s AND pkey = %s AND hash = ANY(%s)",
                (*key, list(dict.fromkeys(hashes))),
            ).fetchall()
            found: dict[str, np.ndarray] = {}
            for h, blob in rows:
                vec = np.frombuffer(bytes(blob), dtype=np.float32)
                if vec.shape[0] == identity.dims or identity.dims == 0:
                    found[str(h)] = vec
            if found:
                conn.execute(
                    "UPDATE embed_cache SET used = %s WHERE tenant_id = %s AND provider = %s "
                    "AND model = %s AND pkey = %s AND hash = ANY(%s)",
                    (time.time_ns(), *key, list(found)),
                )
        return found

    def put_many(self, identity: EmbedderIdentity, items: dict[str, np.ndarray]) -> None:
        if not items:
            return
        now = time.time_ns()
        key = (self.tenant, identity.provider, identity.model, identity.key)
        with self.db.transaction() as conn, conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO embed_cache(tenant_id, provider, model, pkey, hash, vec, used) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s) ON CONFLICT "
                "(tenant_id, provider, model, pkey, hash) DO UPDATE SET vec = excluded.vec, "
                "used = excluded.used",
                [(*key, h, np.asarray(v, np.float32).tobytes(), now) for h, v in items.items()],
            )

    def export(self) -> list[CachedRow]:
        with self.db.connection() as conn:
            rows = conn.execute(
                "SELECT provider, model, pkey, hash, vec, used FROM embed_cache "
                "WHERE tenant_id = %s ORDER BY used",
                (self.tenant,),
            ).fetchall()
        return [(str(a), str(b), str(c), str(d), bytes(e), int(f)) for a, b, c, d, e, f in rows]

    def adopt(self, rows: Sequence[CachedRow]) -> None:
        with self.db.transaction() as conn, conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO embed_cache(tenant_id, provider, model, pkey, hash, vec, used) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
                [(self.tenant, *r) for r in rows],
            )

    def trim(self) -> int:
        """Drop this tenant's least recently used rows beyond the cap."""
        with self.db.transaction() as conn:
            (rows,) = conn.execute(
                "SELECT count(*) FROM embed_cache WHERE tenant_id = %s", (self.tenant,)
            ).fetchone()
            excess = int(rows) - self.cap_rows
            if excess <= 0:
                return 0
            conn.execute(
                "DELETE FROM embed_cache WHERE (tenant_id, provider, model, pkey, hash) IN "
                "(SELECT tenant_id, provider, model, pkey, hash FROM embed_cache "
                "WHERE tenant_id = %s ORDER BY used LIMIT %s)",
                (self.tenant, excess),
            )
        return excess


__all__ = ["PgEmbeddingCache"]
