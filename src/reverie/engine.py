"""The facade: the one object the CLI, the MCP server and the daemon all go through."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import sqlean as sqlite3

from .clock import Clock
from .embedders.base import Embedder
from .embedders.factory import make_embedder
from .index.db import SCHEMA_VERSION, connect, ensure_schema, get_meta, user_version
from .index.sync import Progress, Syncer, SyncStats, mark_dirty
from .settings import Settings, load_settings
from .workspace import Workspace

_UNSET: Any = object()


class Reverie:
    """Memory for one agent: a workspace of Markdown files plus its derived index."""

    def __init__(
        self,
        settings: Settings,
        *,
        clock: Clock | None = None,
        embedder: Embedder | None = _UNSET,
    ) -> None:
        self.settings = settings
        self.clock = clock or Clock.from_env()
        self.workspace = Workspace(Path(settings.workspace), Path(settings.state_dir), settings.agent)
        self._embedder = embedder
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.RLock()

    @classmethod
    def open(
        cls,
        workspace: str | Path | None = None,
        state_dir: str | Path | None = None,
        *,
        environ: Mapping[str, str] | None = None,
        clock: Clock | None = None,
        use_embedder: Embedder | None = _UNSET,
        **flags: Any,
    ) -> Reverie:
        """Resolve settings (defaults < config file < environment < arguments)."""
        flags = dict(flags)
        if workspace is not None:
            flags["workspace"] = str(workspace)
        if state_dir is not None:
            flags["state_dir"] = str(state_dir)
        settings = load_settings(flags, environ=environ)
        return cls(settings, clock=clock or Clock.from_env(environ), embedder=use_embedder)

    # -- adapters --------------------------------------------------------------------
    @property
    def embedder(self) -> Embedder | None:
        if self._embedder is _UNSET:
            self._embedder = make_embedder(self.settings)
        return self._embedder

    @property
    def conn(self) -> sqlite3.Connection:
        with self._lock:
            if self._conn is None:
                self.workspace.agent_dir.mkdir(parents=True, exist_ok=True)
                self._conn = connect(self.workspace.index_path)
                ensure_schema(self._conn)
            return self._conn

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __enter__(self) -> Reverie:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- storage ---------------------------------------------------------------------
    def init(self) -> list[str]:
        """Create the workspace layout; never overwrites an existing file."""
        return self.workspace.init()

    def index(self, *, force: bool = False, progress: Progress | None = None) -> SyncStats:
        """Bring the index up to date with the files (``force``: rebuild them all)."""
        self.workspace.require()
        from filelock import FileLock

        self.workspace.agent_dir.mkdir(parents=True, exist_ok=True)
        with FileLock(str(self.workspace.agent_dir / "sync.lock")), self._lock:
            syncer = Syncer(self.conn, self.workspace, self.settings, self.embedder, now=self.clock.now)
            return syncer.run(force=force, progress=progress)

    def mark_dirty(self) -> None:
        mark_dirty(self.conn)

    def status(self) -> dict[str, Any]:
        """What the index holds and how fresh it is."""
        self.workspace.require()
        conn = self.conn
        one = lambda sql: conn.execute(sql).fetchone()[0]  # noqa: E731
        stored = get_meta(conn, "embedder")
        current = self.embedder.identity.label() if self.embedder else None
        vectors = one("SELECT count(*) FROM chunks WHERE has_vector = 1")
        chunks = one("SELECT count(*) FROM chunks")
        stale = vectors if (current is not None and stored is not None and stored != current) else 0
        return {
            "workspace": str(self.workspace.root),
            "index": str(self.workspace.index_path),
            "schema_version": user_version(conn),
            "schema_current": user_version(conn) == SCHEMA_VERSION,
            "files": one("SELECT count(*) FROM sources"),
            "chunks": chunks,
            "vectors": vectors,
            "vectors_missing": chunks - vectors,
            "vectors_stale": stale,
            "embedder": current or "none",
            "embedder_indexed": stored,
            "tokenizer": get_meta(conn, "tokenizer"),
            "chunking_version": get_meta(conn, "chunking_version"),
            "last_sync": get_meta(conn, "last_sync"),
            "dirty": get_meta(conn, "dirty", "1") == "1" or get_meta(conn, "last_sync") is None,
            "origins": dict(conn.execute("SELECT origin, count(*) FROM provenance GROUP BY origin").fetchall()),
        }


__all__ = ["Reverie"]
