"""``reverie sync`` and ``reverie device`` behind the facade (:mod:`reverie.sync`): the
syncer built with this workspace, the clock and a hash-incremental re-index after
every pull; the dreaming lease the dream door asks for."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..curation.service import Curation
    from ..sync import Syncer, SyncReport
    from ..sync.run import Step
    from .adapters import Adapters


def syncer(a: Adapters, progress: Step | None = None) -> Syncer:
    from ..sync import Syncer

    return Syncer(
        a.workspace, now=lambda: a.clock.now(), reindex=lambda: a.index(), progress=progress
    )


class SyncDoor:
    """The sync verbs (``engine.sync``)."""

    def __init__(self, adapters: Adapters, curation: Callable[[], Curation]) -> None:
        self._a, self._curation = adapters, curation

    def run(self, remote: str | None = None, *, progress: Step | None = None) -> SyncReport:
        """Commit, pull, merge, push, re-index (see :mod:`reverie.sync.run`). Lines the
        merge removed because another device forgot them are then forgotten here too:
        this device's transcripts, recall log, caches and free pages held copies."""
        report = syncer(self._a, progress).sync(remote)
        if report.removed:
            self._forget_here(report.removed)
        return report

    def _forget_here(self, lines: list[str]) -> None:
        from ..curation.select import Selector
        from ..errors import ReverieError
        from ..storage.tombstone_hash import content

        forgetter = self._curation().forgetter
        for text in dict.fromkeys(content(ln) for ln in lines):
            try:
                sel = Selector.of(text)
            except ReverieError:
                continue  # too short to name: the merge's removal stands alone
            forgetter.forget(sel, by="a forget on another device, through sync")

    def configured(self) -> bool:
        """Sync was set up here: its repository exists and has a remote."""
        if not (self._a.workspace.sync_git_dir / "HEAD").exists():
            return False
        return syncer(self._a).git.remote() is not None

    def conflicts(self) -> list[str]:
        """``FILE: id`` of every sync conflict still open (``reverie status`` shows them)."""
        from ..sync.run import open_conflicts

        return open_conflicts(self._a.workspace.root)  # (no git needed to read them)

    def pick(self, conflict: str, version: int) -> str:
        """The owner picks version 1 or 2 of an open conflict; returns the file."""
        from ..storage import reader
        from ..storage.files import atomic_write
        from ..sync.entry_merge import conflicts, pick

        ws = self._a.workspace
        for path in sorted(ws.root.glob("*.md")):
            try:  # the one reader policy; strict UTF-8, as the file is rewritten
                text = reader.read(path, ws.root).data.decode("utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            if any(c.id == conflict for c in conflicts(text)):
                atomic_write(path, pick(text, conflict, version))
                self._a.reindex()
                return path.name
        raise ValueError(f"no open sync conflict {conflict!r}")

    def pair(self, remote: str | None = None) -> dict[str, Any]:
        """On a new device: offer a pairing request (or finish one approved), then sync."""
        from ..sync.pairing import offer

        s = syncer(self._a)
        result = offer(s, remote)
        if result["joined"]:
            result["sync"] = s.sync().as_dict()
        return result

    def approve(self, code: str, remote: str | None = None) -> dict[str, Any]:
        from ..sync.pairing import approve

        return approve(syncer(self._a), code, remote)

    def devices(self) -> list[dict[str, Any]]:
        return [{k: v for k, v in d.items() if k != "sealed"} for d in syncer(self._a).devices()]


def dream_lease(a: Adapters) -> str | None:
    """None when dreaming may run here (sync not set up, or this device holds the
    lease); else why it waits."""
    if not (a.workspace.sync_git_dir / "HEAD").exists():
        return None  # sync never set up here (and git perhaps not installed)
    from ..sync import lease

    s = syncer(a)
    return lease.take(s) if lease.configured(s) else None


def after_dream(a: Adapters) -> None:
    if not (a.workspace.sync_git_dir / "HEAD").exists():
        return
    from ..sync import lease

    s = syncer(a)
    if lease.configured(s):
        lease.release(s)


__all__ = ["SyncDoor", "after_dream", "dream_lease", "syncer"]
