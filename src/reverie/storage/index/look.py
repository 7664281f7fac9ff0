"""What an index holds, as ``reverie doctor`` compares it with the files (issue 44: each
backend answers it, read-only, through :meth:`reverie.backends.Backend.look`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any


class NoIndex(Exception):
    """There is no index yet."""


@dataclass(frozen=True)
class IndexLook:
    """The index's ``sources`` rows, its ``dirty`` flag and the embedder of its vectors."""

    where: str  # the file, or the database and tenant
    sources: dict[str, tuple[int, int]]  # path -> (size, mtime_ns)
    dirty: bool
    embedder: str | None

    @classmethod
    def of(cls, where: str, rows: Iterable[Any], meta: Mapping[Any, Any]) -> IndexLook:
        """From ``sources`` rows (path, size, mtime_ns) and the ``meta`` table's rows."""
        embedder = meta.get("embedder")
        return cls(
            where,
            {str(r[0]): (int(r[1]), int(r[2])) for r in rows},
            str(meta.get("dirty", "0")) not in ("0", ""),
            str(embedder) if embedder else None,
        )


__all__ = ["IndexLook", "NoIndex"]
