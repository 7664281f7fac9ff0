"""The stores a forget reaches besides the Markdown files: session transcripts, the
pending agent requests, the standing intents (in the state dir, or this tenant's rows
on PostgreSQL), the trigger snapshot, and the bytes of every SQLite file
(:mod:`reverie.storage.scrub`). Each step is safe to repeat."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ..intents.port import IntentStore
from ..recall.trigger_snapshot import TriggerSnapshot
from ..storage.files import atomic_write
from ..storage.scrub import scrub_file
from ..storage.workspace import TRANSCRIPT_SUFFIX, Workspace
from ..write.transcript import forget_in
from .requests import FORGOTTEN, RequestStore

Blocked = Callable[[str], bool]


def transcripts(ws: Workspace, blocked: Blocked, *, dry_run: bool = False) -> dict[str, int]:
    """Records changed, by transcript file name (the session API's and the Claude Code
    mirror's, live or ended: the escalation lane reads them)."""
    out: dict[str, int] = {}
    if not ws.sessions_dir.is_dir():
        return out
    for path in sorted(ws.sessions_dir.glob("*" + TRANSCRIPT_SUFFIX)):
        if path.is_symlink() or not path.is_file():
            continue
        n = forget_in(path, blocked, dry_run=dry_run)
        if n:
            out[path.name] = n
    return out


def pending(store: RequestStore, blocked: Blocked, at: str, *, dry_run: bool = False) -> int:
    """Agent requests whose text was forgotten: the text goes; a waiting forget request
    is done (the owner forgot it), a waiting correction is dropped (its new text is
    kept, for the owner to add again); in the state dir's file or, on PostgreSQL, in
    this tenant's rows only (:meth:`RequestStore.forget`)."""
    return store.forget(blocked, at, dry_run=dry_run)


def intents(
    store: IntentStore | None, ws: Workspace, blocked: Blocked, *, dry_run: bool = False
) -> int:
    """Standing intents whose text (or firing detail) holds forgotten text: removed with
    their firings, so nothing fires it again (``store``: None when there is no table).
    INTENTS.md is re-rendered by the next change of the table; a forget removes its
    lines as any workspace file's."""
    if store is None:
        return 0
    gone = store.forget(blocked, dry_run=dry_run)
    if not dry_run:
        _intents_view(store, ws, blocked, rewrite=bool(gone))
    return gone


def _intents_view(store: IntentStore, ws: Workspace, blocked: Blocked, *, rewrite: bool) -> None:
    """INTENTS.md rendered again from the table; kept hand edits of it cleaned."""
    from ..intents.view import ViewWriter

    view = ViewWriter(ws)
    if rewrite or any(blocked(ln) for ln in _text(view.path).split("\n")):
        view.write(store.select())
    edits = ws.intents_view_edits_dir
    for path in sorted(edits.glob("*.md")) if edits.is_dir() else []:
        old = _text(path).split("\n")
        kept = [ln for ln in old if not blocked(ln)]
        if kept != old:
            atomic_write(path, "\n".join(kept))


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (FileNotFoundError, UnicodeDecodeError):
        return ""


def snapshot(ws: Workspace) -> None:
    """The trigger snapshot holds entries' text: removed (the next build writes it)."""
    TriggerSnapshot(ws.trigger_snapshot_path).discard()


def scrub_files(ws: Workspace, done: set[Path]) -> tuple[list[str], bool]:
    """Every other SQLite file of the agent's state dir rewritten without deleted bytes:
    the names of those whose WAL another process kept, and whether all were rewritten."""
    busy, ok = [], True
    for path in sorted(ws.agent_dir.glob("*.sqlite")):
        if path in done or path == ws.trigger_snapshot_path:
            continue
        try:
            if not scrub_file(path):
                busy.append(path.name)
        except Exception:  # a locked or broken file: the next open tries it all again
            ok = False
    return busy, ok


def checkpoints(ws: Workspace, names: list[str]) -> list[str]:
    """The WALs of ``names`` (rewritten already) emptied; those still busy."""
    out = []
    for name in names:
        try:
            if not scrub_file(ws.agent_dir / name, vacuum=False):
                out.append(name)
        except Exception:
            out.append(name)
    return out


__all__ = [
    "FORGOTTEN",
    "checkpoints",
    "intents",
    "pending",
    "scrub_files",
    "snapshot",
    "transcripts",
]
