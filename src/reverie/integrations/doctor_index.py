"""The doctor's look at the derived index, read-only: the rows of its ``sources`` table
against the files, its ``dirty`` flag, and the embedder its vectors were made by, as
the backend reads them (:meth:`reverie.backends.Backend.look`: never made, migrated or
written)."""

from __future__ import annotations

from collections.abc import Iterator

from ..backends import backend_for
from ..settings import Settings
from ..storage.index.look import IndexLook, NoIndex
from ..storage.walk import FileEntry
from ..storage.workspace import Workspace


def look(ws: Workspace, settings: Settings) -> IndexLook:
    """The index's rows, as its backend reads them (raises :class:`NoIndex`, or the
    backend's error)."""
    return backend_for(settings, ws).look()


def findings(ws: Workspace, settings: Settings) -> Iterator[tuple[str, str, str | None]]:
    """(status, message, fix) of the index check."""
    try:
        seen = look(ws, settings)
    except NoIndex as exc:
        yield "error", str(exc), "reverie index"
        return
    except Exception as exc:  # SQLite's, psycopg's (never imported for SQLite), the OS's
        why = str(exc) or f"{exc!r}"  # the driver's words (SQLite's is sqlean, not sqlite3)
        yield "error", f"the index is unusable ({why})", _rebuild(ws, settings)
        return
    files = {e.relpath: e for e in ws.walk() if isinstance(e, FileEntry)}
    stale = sorted(p for p, e in files.items() if seen.sources.get(p) != (e.size, e.mtime_ns))
    gone = sorted(set(seen.sources) - set(files))
    if stale or gone:
        parts = [f"{len(stale)} file(s) changed or new"] if stale else []
        parts += [f"{len(gone)} deleted"] if gone else []
        example = (stale or gone)[0]
        message = (
            f"the index is behind the files: {', '.join(parts)} (e.g. {example}); "
            "search syncs first, but one-shot hooks read it as it is"
        )
        yield "warn", message, "reverie index"
    elif seen.dirty:
        yield "warn", "a sync did not finish", "reverie index"
    else:
        yield "ok", f"{len(files)} file(s), in step with the files ({seen.where})", None


def _rebuild(ws: Workspace, settings: Settings) -> str:
    return backend_for(settings, ws).rebuild_hint()


def indexed_embedder(ws: Workspace, settings: Settings) -> str | None:
    """The embedder the index's vectors were made by (None: unknown, or no index)."""
    try:
        return look(ws, settings).embedder
    except Exception:  # no index, or an unusable one: the index check says so
        return None


__all__ = ["IndexLook", "NoIndex", "findings", "indexed_embedder", "look"]
