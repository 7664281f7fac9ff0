"""Is the index behind the files? A cheap stat check, so that long-running servers and
the CLI's ``search`` find a hand edit without anyone running ``reverie index``.

:func:`behind` walks the workspace (:func:`reverie.storage.walk.differs`: one
``stat`` per Markdown file, no reads) and compares sizes and modification times with
the source registry; the index's own dirty flag (set by every write through the engine)
counts too. The caller then runs the ordinary sync, which re-reads only the files that
changed.

Why a ``stat`` per file, and not the file system's own change record: an edit in place
moves only that file's ``mtime_ns`` (never its folder's), so a process that was not
running when it happened (a one-shot search) learns of it only by asking each file.
A change feed (inotify, FSEvents) needs a process that runs all along: the daemon's
watcher is one, and a search it answers skips this check (``reverie.cli.common.Ctx``).
"""

from __future__ import annotations

from ..walk import differs
from ..workspace import Workspace
from .port import IndexReader


def behind(index: IndexReader, workspace: Workspace) -> bool:
    """True when a file was added, changed or removed since the last sync, or the
    index is marked dirty (or was never synced)."""
    if index.is_dirty():
        return True
    known = {path: (row[1], row[2]) for path, row in index.sources().items()}
    return differs(workspace, known)


__all__ = ["behind"]
