"""What follows every write to the workspace (journal lines, ingestion, a forget)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol


class _Stats(Protocol):
    @property
    def warnings(self) -> Sequence[str]: ...


def after_write(
    mark_dirty: Callable[[], object], index: Callable[[], _Stats], *, sync: bool, path: str = ""
) -> list[str]:
    """One policy: mark the index dirty, then sync now if asked. Failures only warn
    (P5): a line that landed is never reported as failed; the sync's own warnings
    about ``path`` or the embedder are passed on."""
    warnings: list[str] = []
    try:
        mark_dirty()
    except Exception as exc:  # a broken index never loses the line
        warnings.append(f"index not marked dirty: {exc}")
    if sync:
        try:
            stats = index()
        except Exception as exc:  # whatever it is: the line landed, a retry would duplicate it
            warnings.append(f"written, but the index was not updated: {exc}")
        else:
            warnings += [
                w for w in stats.warnings if w.startswith("embedder") or (path and path in w)
            ]
    return warnings


__all__ = ["after_write"]
