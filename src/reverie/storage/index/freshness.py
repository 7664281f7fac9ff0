"""Is the index behind the files? A cheap stat check, so that long-running servers and
the CLI's ``search`` find a hand edit without anyone running ``reverie index``.

:func:`behind` walks the workspace (one ``stat`` per Markdown file, no reads) and
compares sizes and modification times with the source registry; the index's own dirty
flag (set by every write through the engine) counts too. The caller then runs the
ordinary sync, which re-reads only the files that changed.
"""

from __future__ import annotations

from ..walk import FileEntry
from ..workspace import Workspace
from .port import IndexReader


def behind(index: IndexReader, workspace: Workspace) -> bool:
    """True when a file was added, changed or removed since the last sync, or the
    index is marked dirty (or was never synced)."""
    if index.is_dirty():
        return True
    known = {path: (row[1], row[2]) for path, row in index.sources().items()}
    seen = 0
    for entry in workspace.walk():
        if not isinstance(entry, FileEntry):
            continue
        if known.get(entry.real or entry.relpath) != (entry.size, entry.mtime_ns):
            return True
        seen += 1
    return seen < len(known)  # a file was removed


__all__ = ["behind"]
