"""Which workspace a shared index tenant belongs to (issue 40.6).

On PostgreSQL many workspaces share one database, each under its tenant id; a second
workspace left on the same id would share the rows, and each of its syncs would delete
the other's. The tenant records the workspace whose syncs wrote it (meta
``workspace``), and a sync from another workspace is refused unless it rebuilds on
purpose (``reverie index --force``), which takes the tenant over. A SQLite index lives
in the workspace's own state folder and records nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...errors import ConfigError


def _shared(settings: Any) -> bool:
    """Every backend but the state folder's own file may be shared (fails closed: a
    backend added later is checked too)."""
    return getattr(settings, "index_backend", "sqlite") != "sqlite"


def check(ix: Any, settings: Any, root: Path, *, force: bool) -> None:
    """Refuse to sync into a tenant another workspace's syncs wrote."""
    if not _shared(settings) or force:
        return
    owner = ix.meta("workspace")
    if owner is not None and owner != str(root.resolve()):
        tenant = settings.index_tenant or settings.agent
        raise ConfigError(
            f"the {settings.index_backend} tenant {tenant!r} holds the index of another workspace "
            f"({owner}); set index_tenant to an id of this workspace's own, or run "
            "`reverie index --force` here to take the tenant over (its rows are rebuilt "
            "from this workspace's files)"
        )


def record(ix: Any, settings: Any, root: Path) -> None:
    """After a complete sync: the tenant is this workspace's."""
    if _shared(settings):
        ix.set_meta("workspace", str(root.resolve()))


__all__ = ["check", "record"]
