"""The intents table behind a port: what :class:`~.service.Intents` and a forget call.

Each backend of :mod:`reverie.backends` gives one: SQLite in the state dir
(:class:`reverie.backends.sqlite.intents.Store`, ``intents.sqlite``, one agent) and
PostgreSQL (:class:`reverie.backends.postgres.intents.PgIntents`, one tenant's rows of
a shared table, issue 23); the row is :mod:`.rows`. Both keep the same rules: every change is one transaction that
holds the table's write lock from its first read (SQLite ``BEGIN IMMEDIATE``; on
PostgreSQL the tenant's lock row, ``SELECT ... FOR UPDATE``), and a firing is
recorded in the transaction that checks it (R-INTENT-2).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol

from .model import Intent

Blocked = Callable[[str], bool]


class IntentTx(Protocol):
    """The writes of one transaction (its reads go through :meth:`IntentStore.select`,
    which joins it)."""

    def insert(self, intent: Intent) -> None: ...

    def update(self, intent: Intent) -> None: ...

    def fired(self, intent_id: str, at: Any, channel: str, detail: str) -> None:
        """Record one firing (``at``: a datetime; ``channel``: turn | notify)."""

    def count(self, statuses: Sequence[str], kind: str | None = None) -> int: ...

    def expire(self, now: str, stale: str) -> int:
        """Armed intents past their expiry and proposals created before ``stale``
        (UTC stamps) marked expired; how many."""


class IntentStore(Protocol):
    """One agent's (one tenant's) intents table."""

    backend: str

    def transaction(self) -> AbstractContextManager[IntentTx]: ...

    def select(
        self,
        *,
        ids: Iterable[str] | None = None,
        statuses: Sequence[str] | None = None,
        text: str | None = None,
        notify_by: str | None = None,
    ) -> list[Intent]:
        """Intents in creation order (``notify_by``: time intents whose notification
        slot is at or before that UTC stamp)."""

    def version(self) -> int:
        """Changes when another writer committed (the armed index is read again)."""

    def firings(self, intent_id: str) -> list[tuple[str, str, str]]: ...

    def forget(self, blocked: Blocked, *, dry_run: bool) -> int:
        """Remove intents whose text or triggers hold forgotten text (with their
        firings) and blank firing details that do: the intents removed."""

    def close(self) -> None: ...


@dataclass(frozen=True)
class IntentTable:
    """Where the table is: how to open it, and whether it may hold a row at all (no
    SQLite file: no intent was ever added, and nothing is created to find out)."""

    open: Callable[[], IntentStore]
    may_exist: Callable[[], bool]


def conditions(
    mark: str,
    *,
    ids: Iterable[str] | None = None,
    statuses: Sequence[str] | None = None,
    kind: str | None = None,
    text: str | None = None,
    notify_by: str | None = None,
) -> tuple[list[str], list[Any]]:
    """The WHERE terms of :meth:`IntentStore.select` and :meth:`IntentTx.count` and
    their arguments (``mark``: the driver's placeholder)."""
    terms: list[str] = []
    args: list[Any] = []
    if ids is not None:
        ids = list(ids)
        terms.append(f"id IN ({', '.join(mark for _ in ids)})" if ids else "1 = 0")
        args += ids
    if statuses is not None:
        terms.append(f"status IN ({', '.join(mark for _ in statuses)})")
        args += list(statuses)
    if kind is not None:
        terms.append(f"kind = {mark}")
        args.append(kind)
    if text is not None:
        terms.append(f"text = {mark}")
        args.append(text)
    if notify_by is not None:
        terms.append(
            "status IN ('armed', 'done') AND kind = 'time' AND next_notify IS NOT NULL "
            f"AND next_notify <= {mark}"
        )
        args.append(notify_by)
    return terms, args


def to_forget(
    rows: Iterable[tuple[Any, str, str]], details: Iterable[tuple[Any, str]], blocked: Blocked
) -> tuple[list[str], list[Any]]:
    """The intents (id, text, triggers) and the firings (id, detail) a forget reaches."""
    gone = [
        str(i)
        for i, text, triggers in rows
        if any(blocked(ln) for ln in f"{text}\n{triggers}".split("\n"))
    ]
    fired = [f for f, d in details if any(blocked(ln) for ln in str(d).split("\n"))]
    return gone, fired


__all__ = ["Blocked", "IntentStore", "IntentTable", "IntentTx", "conditions", "to_forget"]
