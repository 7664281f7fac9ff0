"""One file's chunk rows on PostgreSQL (:mod:`.pg_port`'s write): each chunk with its
keyword text, vector, version links, notes and provenance, in the caller's
transaction. Every row carries the tenant."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ...tokens import keyword_body
from ..chunking import Chunk
from .pg_sql import LINK_INSERT
from .rows import SourceRow, Vectors

if TYPE_CHECKING:
    import numpy as np
else:
    from ..lazy import numpy as np  # loaded on first use


def write_chunks(
    conn: Any,
    t: str,
    source: SourceRow,
    chunks: Sequence[Chunk],
    vectors: Vectors,
    dims: str | None,
) -> None:
    """Insert ``chunks`` of ``source`` (its old rows already deleted)."""
    rel = source.path
    for chunk, vec in zip(chunks, vectors, strict=True):
        embed = vec is not None and dims is not None
        cid = conn.execute(
            "INSERT INTO chunks(tenant_id, path, start_line, end_line, part, text, "
            "text_hash, kind, day, has_vector, body) VALUES (%s, %s, %s, %s, %s, %s, %s, "
            "%s, %s, %s, to_tsvector('simple', %s)) RETURNING id",
            (t, rel, chunk.start_line, chunk.end_line, chunk.part, chunk.text,
             hashlib.sha256(chunk.text.encode()).hexdigest(), source.kind, source.day, embed, keyword_body(chunk.text)),
        ).fetchone()[0]  # fmt: skip
        if embed:
            conn.execute(
                "INSERT INTO chunk_vectors(tenant_id, chunk_id, dims, embedding) "
                "VALUES (%s, %s, %s, %s)",
                (t, cid, int(str(dims)), np.asarray(vec, np.float32)),
            )
        for line, target in chunk.links:
            conn.execute(LINK_INSERT, (t, cid, line, target))
        tr = chunk.trailers
        conn.execute(
            "INSERT INTO notes(tenant_id, chunk_id, importance, triggers, projects) "
            "VALUES (%s, %s, %s, %s, %s)",
            (t, cid, tr.importance, json.dumps(list(tr.triggers), ensure_ascii=False),
             json.dumps(list(tr.projects), ensure_ascii=False)),
        )  # fmt: skip
        conn.execute(
            "INSERT INTO provenance(tenant_id, chunk_id, origin, session_kind, source) "
            "VALUES (%s, %s, %s, %s, %s)",
            (t, cid, chunk.origin.value, chunk.session.value if chunk.session else None,
             f"{rel}#L{chunk.start_line}-L{chunk.end_line}"),
        )  # fmt: skip
