"""One memory on every machine: the workspace's Markdown synced through git (issue 25).

Pure merge logic (:mod:`.journal_merge`, :mod:`.entry_merge`, :mod:`.policy`,
:mod:`.seal`, :mod:`.forgotten`) and the I/O at the edge (:mod:`.git`, :mod:`.run`,
:mod:`.apply`, :mod:`.pairing`). See docs/sync.md for the threat model.
"""

from __future__ import annotations

from .run import Syncer, SyncReport

__all__ = ["SyncReport", "Syncer"]
