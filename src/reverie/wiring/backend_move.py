"""``reverie backend move``: one agent's memory carried from one index backend to the
other (issue 44, point 3), instead of a setting change that starts the other backend
empty.

What moves: the standing intents with their firings, the pending requests, the recall
log (its lines and events, as stored), the embedding cache (so nothing is embedded
again); the index is rebuilt from the files on the target (it is derived; its version
links come from the files' markers). Every store is counted on both sides; only when
every count matches is the config file set to the target and the source's copies
deleted (SQLite: the state folder's index, recall log, intents and requests files and
the warm snapshot; PostgreSQL: every row of the tenant, read from the catalog, then
vacuumed), so no second copy of a later-forgotten line is left behind. A count that
differs, or any failure, deletes what was written to the target and leaves the
source as it was. The target must hold nothing of this agent yet.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..backends import BACKENDS
from ..errors import ConfigError, ReverieError
from ..settings import Settings
from .adapters import Adapters

GROWS = frozenset({"vectors", "cached embeddings"})  # the target may embed what the source lacked


@dataclass(frozen=True)
class MoveReport:
    """What a move did: per store, the rows counted on the source and on the target."""

    source: str
    target: str
    counts: dict[str, list[int]]
    dry_run: bool
    config: str = ""  # the config file set to the target ("" on a dry run or none named)
    settings: dict[str, str] = field(default_factory=dict)  # what to set where no file is
    notes: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class _Rows:
    """Everything of one agent a backend holds besides the index."""

    intents: list[Any] = field(default_factory=list)
    firings: dict[str, list[tuple[str, str, str]]] = field(default_factory=dict)
    requests: list[Any] = field(default_factory=list)
    recall: Any = None
    cache: list[Any] = field(default_factory=list)

    def counts(self, index: dict[str, Any]) -> dict[str, int]:
        """Rows per store (``index``: the index's own counts)."""
        return {
            "files": int(index["files"]),
            "chunks": int(index["chunks"]),
            "vectors": int(index["vectors"]),
            "intents": len(self.intents),
            "firings": sum(len(f) for f in self.firings.values()),
            "requests": len(self.requests),
            "recall lines": len(self.recall.store),
            "recall events": len(self.recall.events),
            "cached embeddings": len(self.cache),
        }


def _read(a: Adapters) -> _Rows:
    from ..recall.log_port import RecallRows

    log = a.existing_recall_log()
    rows = _Rows(recall=log.export() if log is not None else RecallRows())
    if a.backend.intents_may_exist():
        table = a.backend.intent_store()
        try:
            rows.intents = table.select()
            rows.firings = {i.id: table.firings(i.id) for i in rows.intents}
        finally:
            table.close()
    rows.requests = a.backend.requests(a.clock.now, 10**9, carry=False).load()
    rows.cache = a.port.cache.export()
    return rows


def _write(a: Adapters, rows: _Rows) -> None:
    a.port.cache.adopt(rows.cache)
    a.recall_log.adopt(rows.recall)
    table = a.backend.intent_store()
    try:
        with table.transaction() as tx:
            for intent in rows.intents:
                tx.insert(intent)
                for at, channel, detail in rows.firings.get(intent.id, []):
                    tx.fired(intent.id, _stamp(at), channel, detail)
    finally:
        table.close()
    a.backend.requests(a.clock.now, 10**9, carry=False).adopt(rows.requests)


def _stamp(at: str) -> Any:
    from datetime import datetime

    return datetime.fromisoformat(at)


def _drop(a: Adapters) -> list[str]:
    """Delete every copy of this agent the backend of ``a`` holds."""
    a.close()
    return a.backend.drop()


def move(
    a: Adapters,
    to: str,
    *,
    dsn: str = "",
    config: Path | None = None,
    dry_run: bool = False,
    progress: Callable[[int, int, str], None] | None = None,
) -> MoveReport:
    """Move the memory of ``a`` to backend ``to`` (module doc)."""
    s = a.settings
    if to not in BACKENDS:
        raise ConfigError(f"no backend {to!r}: one of {', '.join(BACKENDS)}")
    if to == s.index_backend:
        raise ReverieError(f"this agent's index is on {to} already: nothing to move")
    target_dsn = dsn or s.index_dsn
    if to != "sqlite" and not target_dsn:  # (every backend but the state folder's file)
        raise ConfigError(f"a move to {to} needs --dsn (or index_dsn set)")
    t = s.replace(index_backend=to, index_dsn=target_dsn)
    b = Adapters(t, clock=a.clock, embedder=a.embedder, llm=None)
    try:
        return _move(a, b, config=config, dry_run=dry_run, progress=progress)
    finally:
        b.close()


def _move(
    a: Adapters,
    b: Adapters,
    *,
    config: Path | None,
    dry_run: bool,
    progress: Callable[[int, int, str], None] | None,
) -> MoveReport:
    held = b.backend.held()
    if held:
        raise ReverieError(
            f"the target already holds this agent's memory ({'; '.join(held)}): nothing moved"
        )
    a.index(progress=progress)  # the source current with the files
    rows = _read(a)
    before = rows.counts(a.port.counts(embedder=None))
    source, target = a.backend.describe(), b.backend.describe()
    if dry_run:
        return MoveReport(source, target, {k: [v, 0] for k, v in before.items()}, dry_run=True)
    try:
        _drop(b)  # a derived index left from before (its other stores are held: refused)
        _write(b, rows)
        b.index(force=True, progress=progress)
        after = _read(b).counts(b.port.counts(embedder=None))
        wrong = [
            k for k in before if after[k] < before[k] or (k not in GROWS and after[k] > before[k])
        ]
        if wrong:
            raise ReverieError(
                "the counts differ after the move ("
                + ", ".join(f"{k} {before[k]} -> {after[k]}" for k in wrong)
                + "): the target was emptied again, the source is as it was"
            )
    except BaseException:
        with contextlib.suppress(Exception):
            _drop(b)
        raise
    written, settings, notes = _set_config(b.settings, a.settings, config)
    removed = _drop(a)
    counts = {k: [before[k], after[k]] for k in before}
    return MoveReport(source, target, counts, False, written, settings, notes, removed)


def _set_config(
    t: Settings, s: Settings, config: Path | None
) -> tuple[str, dict[str, str], list[str]]:
    """Set the target in the config file (its comments kept); what still overrides it
    (``s``: the source's settings, which say where each value came from)."""
    want = {"index_backend": t.index_backend}
    if t.index_backend != "sqlite":
        want["index_dsn"] = t.index_dsn
    notes = [
        f"{key} is set by {s.source(key)}, which overrides the config file: set it to "
        f"{value!r} there"
        for key, value in want.items()
        if s.source(key).startswith(("env", "flag", "override"))
    ]
    if config is None:
        return "", want, notes
    import tomlkit

    from ..storage.files import atomic_write

    doc = (
        tomlkit.parse(config.read_text(encoding="utf-8")) if config.exists() else tomlkit.document()
    )
    for key, value in want.items():
        doc[key] = value
    config.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(config, tomlkit.dumps(doc))
    return str(config), want, notes


__all__ = ["MoveReport", "move"]
