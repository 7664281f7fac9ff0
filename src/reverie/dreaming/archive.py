"""The archive of entries dreaming moved out of MEMORY.md (R-DREAM-Q2): a Markdown
note in the workspace (``Workspace.memory_archive_path``), indexed and searched like
any note, never promoted again (a note's lines are below owner trust), never deleted
by dreaming; ``reverie forget`` reaches it as it reaches every indexed file."""

from __future__ import annotations

from collections.abc import Sequence

from ..storage.files import atomic_write_bytes
from ..storage.workspace import Workspace
from .budget import add_to_archive


def read(ws: Workspace) -> str:
    path = ws.memory_archive_path
    return path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""


def _raw(ws: Workspace) -> str:
    """The archive with its bytes kept (a bad byte a person left survives a rewrite)."""
    path = ws.memory_archive_path
    return path.read_text(encoding="utf-8", errors="surrogateescape") if path.exists() else ""


def add(ws: Workspace, archived: Sequence[str], day: str) -> None:
    """Append ``archived`` (MEMORY.md lines) with the day they moved; atomic."""
    if not archived:
        return
    path = ws.memory_archive_path
    path.parent.mkdir(parents=True, exist_ok=True)
    text = add_to_archive(_raw(ws), archived, day)
    atomic_write_bytes(path, text.encode("utf-8", errors="surrogateescape"))


__all__ = ["add", "read"]
