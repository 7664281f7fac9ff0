"""One file's chunk rows on PostgreSQL (:mod:`.index`'s write): each chunk with its
vector, version links, notes and provenance, in the caller's transaction. Every row
carries the tenant. (The keyword lane is the in-memory BM25 fed from the chunks' text,
:mod:`reverie.storage.index.keyword`: no keyword column is written.)"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ...storage.chunking import Chunk
from ...storage.index.rows import SourceRow, Vectors
from .sql import LINK_INSERT

if TYPE_CHECKING:
    import numpy as np
else:
    from ...storage.lazy import numpy as np  # loaded on first use


_CHUNKS = (
    "INSERT INTO chunks(tenant_id, path, start_line, end_line, part, text, text_hash, kind, "
    "day, has_vector) SELECT %s, %s, s, e, p, x, h, %s, %s, v "
    "FROM unnest(%s::int[], %s::int[], %s::int[], %s::text[], %s::text[], %s::bool[]) "
    "WITH ORDINALITY AS u(s, e, p, x, h, v, o) ORDER BY o RETURNING id"
)
_VECTOR = "INSERT INTO chunk_vectors(tenant_id, chunk_id, dims, embedding) VALUES (%s, %s, %s, %s)"
_NOTES = (
    "INSERT INTO notes(tenant_id, chunk_id, importance, triggers, projects) "
    "VALUES (%s, %s, %s, %s, %s)"
)
_PROVENANCE = (
    "INSERT INTO provenance(tenant_id, chunk_id, origin, session_kind, source) "
    "VALUES (%s, %s, %s, %s, %s)"
)


def write_chunks(
    conn: Any,
    t: str,
    source: SourceRow,
    chunks: Sequence[Chunk],
    vectors: Vectors,
    dims: str | None,
) -> None:
    """Insert ``chunks`` of ``source`` (its old rows already deleted): the chunks in one
    statement (their ids come back in insertion order: one identity, one statement,
    rows inserted in the order asked), the side rows in pipelined batches."""
    rel, pairs = source.path, list(zip(chunks, vectors, strict=True))
    if not pairs:
        return
    embed = [vec is not None and dims is not None for _, vec in pairs]
    rows = conn.execute(_CHUNKS, (
        t, rel, source.kind, source.day,
        [c.start_line for c, _ in pairs], [c.end_line for c, _ in pairs],
        [c.part for c, _ in pairs], [c.text for c, _ in pairs],
        [hashlib.sha256(c.text.encode()).hexdigest() for c, _ in pairs], embed,
    )).fetchall()  # fmt: skip
    ids = sorted(int(r[0]) for r in rows)
    cur = conn.cursor()
    batches = [
        (_VECTOR, [(t, cid, int(str(dims)), np.asarray(vec, np.float32))
                   for cid, (_, vec), e in zip(ids, pairs, embed, strict=True) if e]),
        (LINK_INSERT, [(t, cid, line, target)
                       for cid, (c, _) in zip(ids, pairs, strict=True) for line, target in c.links]),
        (_NOTES, [(t, cid, c.trailers.importance,
                   json.dumps(list(c.trailers.triggers), ensure_ascii=False),
                   json.dumps(list(c.trailers.projects), ensure_ascii=False))
                  for cid, (c, _) in zip(ids, pairs, strict=True)]),
        (_PROVENANCE, [(t, cid, c.origin.value, c.session.value if c.session else None,
                        f"{rel}#L{c.start_line}-L{c.end_line}")
                       for cid, (c, _) in zip(ids, pairs, strict=True)]),
    ]  # fmt: skip
    for sql, params in batches:
        if params:
            cur.executemany(sql, params)


__all__ = ["write_chunks"]
