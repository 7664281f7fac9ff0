"""The recall log's port (R-RECALL-5): what the engine (recording a search), dreaming
(its evidence rows) and forget (dropping a line's signals) use of the short-term recall
store, whichever backend holds it.

Each backend of :mod:`reverie.backends` gives one:
:class:`reverie.backends.sqlite.recall_log.RecallLog` (``recall.sqlite`` in the state
dir, one person) and :class:`reverie.backends.postgres.recall_log.PgRecallLog` (the
rows of one tenant in the shared database, issue 23). Both keep the bounds of SPEC
section 8 and record each search in one transaction.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from .evidence import RecallStats
    from .log import RecallHit
    from .search import SearchResponse


@dataclass
class RecallRows:
    """A recall log's rows as they are, for a move between backends
    (:mod:`reverie.wiring.backend_move`): ``store``, one tuple per line in the order of
    its first recall, its columns in :data:`reverie.recall.log.STORE_COLUMNS` order with
    the three bounded lists in their own order; ``events``, (key, query hash, score,
    day, stamp) oldest first."""

    store: list[tuple[Any, ...]] = field(default_factory=list)
    events: list[tuple[str, str, float, str, str]] = field(default_factory=list)


class RecallLogPort(Protocol):
    """The recall log of one agent (SQLite) or one tenant (PostgreSQL)."""

    backend: str  # the backend's name (:data:`reverie.backends.BACKENDS`)

    def record_search(self, response: SearchResponse, *, min_score: float, now: datetime) -> int:
        """Record what one search retrieved; returns how many rows were recorded."""
        ...

    def record(self, query: str, hits: Iterable[RecallHit], *, now: datetime) -> int:
        """Record the episodic hits of one search, in one transaction."""
        ...

    def stats(self, keys: Sequence[str] | None = None) -> list[RecallStats]:
        """The aggregated store as dreaming reads it (first recalled first)."""
        ...

    def drop(self, match: Callable[[str, str], bool], *, dry_run: bool = False) -> list[str]:
        """Forget the aggregate and events of every row ``match(key, snippet)`` selects."""
        ...

    def count_events(self) -> int:
        """How many recall events are kept (at most ``MAX_EVENTS``)."""
        ...

    def scrub(self) -> bool:
        """After a forget: no deleted row's bytes left where this backend can reach them
        (False: not done, the next open of the forget tries again)."""
        ...

    def export(self) -> RecallRows:
        """Every row, as it is stored."""
        ...

    def adopt(self, rows: RecallRows) -> None:
        """Take rows another backend exported, into an empty log (one transaction)."""
        ...

    def close(self) -> None: ...


__all__ = ["RecallLogPort", "RecallRows"]
