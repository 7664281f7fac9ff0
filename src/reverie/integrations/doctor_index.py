"""The doctor's look at the derived index, on either backend, read-only: the rows of
its ``sources`` table against the files, its ``dirty`` flag, and the embedder its
vectors were made by. SQLite is opened read-only; PostgreSQL is asked with one
connection and plain SELECTs of this tenant's rows (never migrated, never written)."""

from __future__ import annotations

import shlex
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ..backends.sqlite.db import connect
from ..errors import ReverieError
from ..settings import Settings
from ..storage.walk import FileEntry
from ..storage.workspace import Workspace


@dataclass(frozen=True)
class IndexLook:
    """What the index holds, as the doctor compares it."""

    where: str  # the file, or the database and tenant
    sources: dict[str, tuple[int, int]]  # path -> (size, mtime_ns)
    dirty: bool
    embedder: str | None


class Missing(Exception):
    """There is no index yet."""


def look(ws: Workspace, settings: Settings) -> IndexLook:
    """The index's rows (raises :class:`Missing`, or the backend's error)."""
    if settings.index_backend == "postgres":
        return _postgres(settings)
    path = ws.index_path
    if not path.is_file():
        raise Missing(f"no index at {path}")
    conn = connect(path, readonly=True)
    try:
        rows = conn.execute("SELECT path, size, mtime_ns FROM sources").fetchall()
        meta = dict(conn.execute("SELECT key, value FROM meta WHERE key IN ('dirty', 'embedder')"))
    finally:
        conn.close()
    return IndexLook(str(path), {r[0]: (r[1], r[2]) for r in rows}, _dirty(meta), _emb(meta))


def _postgres(settings: Settings) -> IndexLook:
    import psycopg

    tenant = settings.index_tenant or settings.agent
    if not settings.index_dsn:
        raise ReverieError("index_backend = postgres needs index_dsn (a PostgreSQL DSN)")
    with psycopg.connect(settings.index_dsn, autocommit=True, connect_timeout=5) as conn:
        has = conn.execute("SELECT to_regclass('sources') IS NOT NULL").fetchone()
        if not has or not has[0]:
            raise Missing(f"no index tables in the database (tenant {tenant})")
        q = "SELECT path, size, mtime_ns FROM sources WHERE tenant_id = %s"
        rows = conn.execute(q, (tenant,)).fetchall()
        q = "SELECT key, value FROM meta WHERE tenant_id = %s AND key IN ('dirty', 'embedder')"
        meta = {str(k): str(v) for k, v in conn.execute(q, (tenant,)).fetchall()}
    if not rows and not meta:
        raise Missing(f"no index rows for tenant {tenant} in the database")
    where = f"PostgreSQL, tenant {tenant}"
    return IndexLook(where, {r[0]: (int(r[1]), int(r[2])) for r in rows}, _dirty(meta), _emb(meta))


def _dirty(meta: dict[Any, Any]) -> bool:
    return str(meta.get("dirty", "0")) not in ("0", "")


def _emb(meta: dict[Any, Any]) -> str | None:
    value = meta.get("embedder")
    return str(value) if value else None


def findings(ws: Workspace, settings: Settings) -> Iterator[tuple[str, str, str | None]]:
    """(status, message, fix) of the index check."""
    try:
        seen = look(ws, settings)
    except Missing as exc:
        yield "error", str(exc), "reverie index"
        return
    except Exception as exc:  # SQLite's, psycopg's (never imported for SQLite), the OS's
        why = str(exc) if isinstance(exc, sqlite3.Error | ReverieError) else f"{exc!r}"
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
    if settings.index_backend == "postgres":
        return "check index_dsn and that the server runs (`reverie settings`), then reverie index"
    path = shlex.quote(str(ws.index_path))
    return f"rm {path} && reverie index  (the index is derived: rebuilt)"


def indexed_embedder(ws: Workspace, settings: Settings) -> str | None:
    """The embedder the index's vectors were made by (None: unknown, or no index)."""
    try:
        return look(ws, settings).embedder
    except Exception:  # no index, or an unusable one: the index check says so
        return None


__all__ = ["IndexLook", "Missing", "findings", "indexed_embedder", "look"]
