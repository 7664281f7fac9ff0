"""Which file-system events can change the index: the watcher's filter, by the rule
the sync itself uses (indexed Markdown files, folders that hold them)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from watchdog.events import (
    EVENT_TYPE_ATTRIB,
    EVENT_TYPE_CLOSED_NO_WRITE,
    EVENT_TYPE_OPENED,
    FileSystemEvent,
    FileSystemEventHandler,
)

from ..provenance.paths import classify
from .walk import HIDDEN_INDEXED

# Reads (our own sync opens every changed file) and metadata-only changes (atime) must
# not trigger a sync, or the daemon would wake itself up.
IGNORED_EVENTS = frozenset({EVENT_TYPE_OPENED, EVENT_TYPE_CLOSED_NO_WRITE, EVENT_TYPE_ATTRIB})


class WorkspaceWatcher(FileSystemEventHandler):
    """Turns file events into a debounce deadline (runs on watchdog's thread)."""

    def __init__(self, root: Path, on_change: Callable[[], object]) -> None:
        self.root = root
        self.on_change = on_change

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type in IGNORED_EVENTS:
            return
        paths = [event.src_path, getattr(event, "dest_path", "") or ""]
        if any(p and self.relevant(os.fsdecode(p), event.is_directory) for p in paths):
            self.on_change()

    def relevant(self, path: str, is_directory: bool) -> bool:
        """Could this path change the index? The rule the sync itself uses."""
        try:
            rel = Path(path).relative_to(self.root).as_posix()
        except ValueError:
            return False
        if rel == ".":
            return False
        folders = rel.split("/") if is_directory else rel.split("/")[:-1]
        for i, part in enumerate(folders):
            if part.startswith(".") and "/".join(folders[: i + 1]) not in HIDDEN_INDEXED:
                return False
        if is_directory:
            return True  # a folder moved or deleted takes its notes with it
        return rel.endswith(".md") and classify(rel).indexed


__all__ = ["IGNORED_EVENTS", "WorkspaceWatcher"]
