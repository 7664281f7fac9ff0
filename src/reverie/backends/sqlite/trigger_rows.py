"""The SQLite index's trigger-carrying curated rows and their query (what trigger
injection reads): apart from the search's reads (:mod:`.query`), so that the per-prompt
hook reads them without importing those."""

from __future__ import annotations

from typing import Any

import sqlean as sqlite3

from ...storage.index.trigger_rows import TriggerRow
from .db import index_version

TRIGGER_ROWS_SQL = (
    "SELECT c.id, c.path, c.start_line, c.end_line, c.text, c.kind, p.origin, n.triggers, "
    "n.projects FROM chunks c JOIN notes n ON n.chunk_id = c.id JOIN provenance p "
    "ON p.chunk_id = c.id WHERE c.kind = 'curated' AND n.triggers != '[]'"
)


def trigger_rows(conn: sqlite3.Connection) -> list[TriggerRow]:
    """Every curated chunk that carries a trigger trailer (the only ones that can fire)."""
    return [TriggerRow.of(r) for r in conn.execute(TRIGGER_ROWS_SQL)]


class TriggerRows:
    """The index as a :class:`reverie.recall.context.TriggerSource`."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def version(self) -> str:
        return index_version(self.conn)

    def rows(self) -> list[TriggerRow]:
        return trigger_rows(self.conn)

    def raw(self) -> list[tuple[Any, ...]]:
        """The rows unparsed (what a snapshot of the trigger index is keyed on)."""
        return self.conn.execute(TRIGGER_ROWS_SQL).fetchall()

    @staticmethod
    def row(raw: tuple[Any, ...]) -> TriggerRow:
        return TriggerRow.of(raw)


__all__ = ["TRIGGER_ROWS_SQL", "TriggerRows", "trigger_rows"]
